"""Golden text for ``--show-golden``: only from the registered file, only if it still matches."""

from __future__ import annotations

from pathlib import Path

from contam_guard.core.register.build import AUTO_VIEW, golden_options, golden_texts
from contam_guard.core.register.views import hash_view
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.verdicts import Finding
from contam_guard.io.manifest.model import Manifest
from contam_guard.report.markdown import GoldenText


def _inside(root: Path, relative: str) -> Path | None:
    """``root / relative`` if it stays inside the project root, else None.

    The path comes from the manifest, which anyone can edit: ``../../`` or an absolute path must
    not make contam-guard read (and print) a file outside the repository.
    """
    candidate = (root / relative).resolve()
    return candidate if candidate.is_relative_to(root.resolve()) else None


def golden_lookup(manifest: Manifest, root: Path, key: HashKey | None) -> GoldenText:
    """A function giving each finding's golden text, read from the set's registered files.

    The file must be present (relative to the project root) and hash to exactly the registered
    view; otherwise nothing is shown for that set (a changed file could show the wrong text).
    """
    cache: dict[tuple[str, str], dict[str, str] | None] = {}

    def load(set_name: str, view: str) -> dict[str, str] | None:
        golden = manifest.sets[set_name]
        field = None if view == AUTO_VIEW else golden.views[view].field
        texts: list[str] = []
        for golden_file in golden.files:
            path = _inside(root, golden_file.path)
            if path is None or not path.is_file():
                return None
            options = golden_options(field, golden.id_field)
            texts += [text for _, text in golden_texts(path, golden_file.path, options)]
        if len(texts) != golden.items:
            return None
        if hash_view(view, texts, key, manifest.spec.text()).digest != golden.views[view].digest:
            return None
        return dict(zip(golden.ids, texts))

    def lookup(finding: Finding) -> str | None:
        label = (finding.target.set_name, finding.target.view)
        if label not in cache:
            cache[label] = load(*label)
        texts = cache[label]
        return texts.get(finding.item_id) if texts is not None else None

    return lookup
