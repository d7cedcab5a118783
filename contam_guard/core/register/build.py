"""Hash a golden test set into a manifest entry (the text itself is never kept)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from contam_guard.core.register.views import hash_view
from contam_guard.core.reword.views import build_derived
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.spec.normalise import CURRENT, TextSpec
from contam_guard.errors import InputError
from contam_guard.io.manifest.model import (
    GoldenFile,
    GoldenSet,
    SetVersion,
    View,
    all_rules,
    is_derived,
    uses_windows,
)
from contam_guard.io.manifest.record import set_digest
from contam_guard.io.manifest.templates import TemplateSettings
from contam_guard.io.readers import ReadOptions, Record, read_records

AUTO_VIEW = "text"
"""View name when no field is given and the text field is detected."""


def golden_options(field: str | None, id_field: str | None) -> ReadOptions:
    """How a golden file is read for one view: the one ``field`` (its strings joined by
    newlines make the item's text), or without one the usual shapes' text (``text``, chat
    ``messages``, Alpaca, ...): never every string, which would mix ids and answers in. A
    table's header and column names are not items (``names=False``), and a plain-text golden file
    holds one item per line (training text is read by paragraph)."""
    return ReadOptions(
        fields=() if field is None else (field,),
        detect_shape=field is None,
        id_field=id_field,
        names=False,
        lines=True,
    )


def golden_texts(path: Path, display: str, options: ReadOptions) -> Iterator[tuple[Record, str]]:
    """Each golden record of ``path`` with its item text (its segments joined)."""
    for record in read_records(path, display, options):
        yield record, record.joined()


@dataclass(frozen=True)
class GoldenSource:
    path: Path
    display: str
    """How the file is named in the manifest: relative to the project root, ``..`` when outside."""


def build_set(
    sources: Sequence[GoldenSource],
    fields: Sequence[str | None],
    id_field: str | None,
    key: HashKey | None,
    previous: GoldenSet | None,
    spec: TextSpec = CURRENT,
    rules: tuple[str, ...] | None = None,
    templates: TemplateSettings | None = None,
) -> GoldenSet:
    """Read, normalise (under ``spec``, the manifest's) and hash every field of every golden
    file into a new set entry, for ``rules`` (default: every rule; window hashes only when one
    of them reads windows).

    ``previous`` is the set as registered before: if the content is unchanged the result is
    identical to it (same version); otherwise the version goes up by one and the history grows.
    Template n-grams are marked under ``templates`` (default: the previous set's settings, else
    ``TemplateSettings()``); new settings on unchanged content keep the version, and the set's
    files are written again with the new marks.
    """
    if templates is None:
        templates = previous.templates if previous is not None and previous.templates else TemplateSettings()
    rules = tuple(sorted(rules)) if rules is not None else all_rules()
    windows = uses_windows(rules)
    views: dict[str, View] = {}
    ids: list[str] = []
    files: list[GoldenFile] = []
    for number, field in enumerate(fields):
        if field is not None and is_derived(field):  # "~" names the derived views
            raise InputError(sources[0].display, f"a field name cannot hold '~' ({field!r})")
        texts, view_ids, counts = _read_field(sources, field, id_field)
        if number == 0:
            ids, files = view_ids, [GoldenFile(path=s.display, items=c) for s, c in zip(sources, counts)]
        elif view_ids != ids:
            raise InputError(sources[0].display, f"field {field!r} gives a different item list")
        views[field or AUTO_VIEW] = hash_view(
            field or AUTO_VIEW, texts, key, spec, windows=windows, templates=templates
        )
        # the rewording rules' derived views, for a set registered for those rules
        # (never template-marked: no GPT-3/PaLM/Llama 2 rule reads them)
        views.update(build_derived(field or AUTO_VIEW, texts, key, spec, rules=rules))
    set_digest = set_digest_of(ids, id_field, views, rules)
    if previous is not None and previous.digest == set_digest:
        # The same content: the same version, and the files as they are when intact (when not,
        # saving writes them again from what was just hashed). The derived views are outside
        # the digest: an older set gains them here.
        return GoldenSet(
            version=previous.version,
            digest=set_digest,
            id_field=id_field,
            files=files,
            ids=ids,
            views=views,
            history=previous.history,
            rules=rules,
            n=previous.n,
            templates=templates,
            stored=previous.stored if previous.templates == templates else None,
        )
    version = previous.version + 1 if previous is not None else 1
    history = [*previous.history] if previous is not None else []
    history.append(SetVersion(version=version, digest=set_digest, items=len(ids)))
    return GoldenSet(
        version=version,
        digest=set_digest,
        id_field=id_field,
        files=files,
        ids=ids,
        views=views,
        history=history,
        rules=rules,
        templates=templates,
    )


def set_digest_of(
    ids: Sequence[str], id_field: str | None, views: dict[str, View], rules: tuple[str, ...]
) -> str:
    """``record.set_digest`` of a set being built."""
    return set_digest(ids, id_field, {name: view.digest for name, view in views.items()}, rules)


def _read_field(
    sources: Sequence[GoldenSource], field: str | None, id_field: str | None
) -> tuple[list[str], list[str], list[int]]:
    texts: list[str] = []
    ids: list[str] = []
    counts: list[int] = []
    first_seen: dict[str, str] = {}
    options = golden_options(field, id_field)
    for source in sources:
        before = len(texts)
        for record, text in golden_texts(source.path, source.display, options):
            item_id = record.item_id if id_field else str(len(texts))
            assert item_id is not None
            where = f"{source.display}:{record.line}" if record.line else source.display
            if item_id in first_seen:
                # The id is not shown: an id field may hold test text (the question itself).
                raise InputError(
                    source.display,
                    f"duplicate item id: this item's id is the id of the item at {first_seen[item_id]} "
                    "(ids are not shown: they may be test text)",
                    line=record.line,
                    hint="item ids must be unique within a set; pick another --id-field",
                )
            first_seen[item_id] = where
            texts.append(text)
            ids.append(item_id)
        counts.append(len(texts) - before)
    if not texts:
        names = ", ".join(s.display for s in sources)
        raise InputError(names, "the golden set is empty: no items to register")
    return texts, ids, counts


# What a reader's message quotes from the file itself: the column or field names (the first row
# of a CSV without a header, the keys of a JSON object used as text) and a parser's snippet.
_LISTED_NAMES = re.compile(r"(columns|fields present): .*", re.DOTALL)
_SNIPPET = re.compile(r" near '.*", re.DOTALL)
_NOT_SHOWN = r"\1 not shown (in a golden file they can be test text: look at the file itself)"


def without_golden_text(error: InputError) -> InputError:
    """``error`` with whatever it quotes from the golden file left out.

    Golden text never appears in contam-guard's output (unless --show-golden): a golden CSV
    without a header row would otherwise print its first item as the "column names".
    """
    problem = _SNIPPET.sub("", _LISTED_NAMES.sub(_NOT_SHOWN, error.problem))
    if problem == error.problem:
        return error
    return InputError(error.path, problem, line=error.line, hint=error.hint)
