"""Reading a manifest: the index (``schema.py``) and the sets' binary files.

Every binary file the index lists is opened and mapped at once (``disk_files.py``), after
checking its size. Every command then runs the cheap checks (``verify`` adds the expensive
ones): each set's index entry against its own record in its ids file (``record.py``), its
history, its rules and files, and for a keyed manifest the index's MAC. A file's content is read
when it is first used, and its digest checked then: a scan that reads no windows never reads a
window file. ``verify`` checks every file (``check_files``). Writing is ``disk_write.py``.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from contam_guard.core.spec.hashing import GRAM_N, WINDOW_CHARS
from contam_guard.errors import HashKeyError, ManifestError
from contam_guard.io.manifest import binfile, checks, consistency, names
from contam_guard.io.manifest.disk_arrays import table_of, templates_of, weights_of
from contam_guard.io.manifest.disk_files import ChangedError, Files, StoredSet
from contam_guard.io.manifest.ids import DeferredIds, Ids
from contam_guard.io.manifest.index_text import index_digest, meta_aad
from contam_guard.io.manifest.model import GoldenSet, Manifest, SetSummary, Spec, View, ViewData, uses_windows
from contam_guard.io.manifest.packed import PackedTable
from contam_guard.io.manifest.schema import Index, SetEntry, SetMeta, ViewEntry
from contam_guard.io.manifest.sealing import SealKey
from contam_guard.io.manifest.templates import TemplateSettings

__all__ = ["ChangedError", "check_files", "from_index", "unlisted_files"]


def from_index(
    path: Path, raw: dict[str, Any], spec: Spec | None, seal: SealKey | None, *, without_mac: bool = False
) -> Manifest:
    """The checked manifest of an index's JSON object (sealed, when keyed and no ``seal`` is
    given; ``without_mac``: a keyed index without a MAC is read, for ``upgrade`` to add it);
    ``ChangedError`` when a file is not the one the index names."""
    try:
        index = Index.model_validate(raw)
    except ValidationError as exc:
        raise checks.malformed(path, exc) from None
    if index.digest != index_digest(index):
        raise checks.integrity_failed(path)
    checks.check_spec(path, index.spec, index.key_check, spec)
    clash = names.clash(list(index.sets))
    if clash is not None:
        raise ManifestError(f"{path}: sets {clash[0]!r} and {clash[1]!r} would share a folder")
    files = Files(path, index)
    salt = index.seal.salt if index.seal is not None else None
    summaries = {name: _summary(entry) for name, entry in index.sets.items()}
    common: dict[str, Any] = dict(
        spec=index.spec, key_check=index.key_check, salt=salt, digest=index.digest, path=path, disk=files
    )

    def unlock(key: SealKey) -> Manifest:
        consistency.check_mac(path, index, key, missing_ok=without_mac)
        sets = {name: _golden(files, name, entry, key) for name, entry in index.sets.items()}
        return Manifest(**common, sets=sets, summaries=summaries, seal=key)

    if index.seal is None:
        for entry in index.sets.values():
            consistency.check_headers(files, entry)
        sets = {name: _golden(files, name, entry, None) for name, entry in index.sets.items()}
        return Manifest(**common, sets=sets, summaries=summaries)
    if seal is not None:
        return unlock(seal)
    return Manifest(
        **common,
        summaries=summaries,
        sealed_error=lambda: HashKeyError(
            f"{path}: this manifest is keyed: its sets are sealed, and no key was given to open them",
            hint="export CONTAM_GUARD_KEY=<the secret used at registration> (or the variable the "
            "config's key_env names)",
        ),
        unlock=unlock,
    )


def _summary(entry: SetEntry) -> SetSummary:
    views = None
    if entry.views is not None:
        views = {
            name: sum(entry.data[rel].bytes for rel in (view.file, view.windows) if rel is not None)
            for name, view in entry.views.items()
        }
    windows = uses_windows(entry.rules) if entry.rules is not None else None
    sizes = {rel: data.bytes for rel, data in entry.data.items()}
    return SetSummary(entry.version, entry.digest, entry.items, entry.history, sizes, views, windows)


def _meta(files: Files, name: str, entry: SetEntry, seal: SealKey | None) -> SetMeta:
    if entry.sealed is None:
        return entry.meta()
    assert seal is not None
    where = f"{files.path}: set {name!r}"
    try:
        blob = base64.b64decode(entry.sealed.encode("ascii"), validate=True)
    except ValueError:
        raise ManifestError(f"{where}: its sealed metadata is not base64") from None
    text = seal.open(blob, meta_aad(name, entry.digest), where)
    try:
        return SetMeta.model_validate_json(text)
    except ValidationError as exc:
        raise ManifestError(f"{where}: its sealed metadata is malformed ({exc.errors()[0]['msg']})") from None


def _golden(files: Files, name: str, entry: SetEntry, seal: SealKey | None) -> GoldenSet:
    meta = _meta(files, name, entry, seal)
    spec = files.index.spec

    def ids_file() -> bytes | memoryview:
        return files.raw(entry.ids) if seal is None else files.content(entry.ids, meta.ids_digest, seal)

    ids = DeferredIds(entry.items, lambda: _ids(files, entry.ids, meta.ids_digest, entry.items, seal))
    consistency.check_set(files, name, entry, meta, spec, ids_file, lambda: ids)
    views = {view_name: _view(files, view, entry.items, seal) for view_name, view in meta.views.items()}
    return GoldenSet(
        version=entry.version,
        digest=entry.digest,
        id_field=meta.id_field,
        files=meta.files,
        ids=ids,
        views=views,
        history=entry.history,
        rules=tuple(meta.rules),
        n=meta.n,
        templates=(
            TemplateSettings(meta.templates.share, meta.templates.min_items) if meta.templates else None
        ),
        stored=StoredSet(files.root.resolve(), entry, meta, files),
    )


def _ids(files: Files, rel: str, expected: str, items: int, seal: SealKey | None) -> Ids:
    display = files.display(rel)
    header, arrays = _parsed(files, rel, expected, seal, "ids")
    offsets, blob = arrays.get("offsets"), arrays.get("bytes")
    if (
        header.get("items") != items
        or offsets is None
        or blob is None
        or offsets.size != items + 1
        or (offsets.size and (int(offsets[0]) != 0 or int(offsets[-1]) != blob.size))
        or bool((np.diff(offsets.astype(np.int64)) < 0).any())
    ):
        raise binfile.damaged(display, "its ids do not match the manifest's index")
    return Ids(offsets, blob)


def _parsed(
    files: Files, rel: str, expected: str, seal: SealKey | None, kind: str
) -> tuple[dict[str, Any], dict[str, NDArray[Any]]]:
    """The header and arrays of a file, checked to hold ``kind`` with content digest ``expected``."""
    display = files.display(rel)
    data = files.content(rel, expected, seal)
    header = binfile.header_of(data, display)
    if header.get("kind") != kind or header.get("digest") != expected:
        raise binfile.damaged(display, f"it does not hold the {kind} the manifest's index names")
    return header, binfile.arrays_of(data, header, display)


def _view(files: Files, view: ViewEntry, items: int, seal: SealKey | None) -> View:
    def load() -> ViewData:
        header, arrays = _parsed(files, view.file, view.digest, seal, "view")
        display = files.display(view.file)
        words, alnum = arrays.get("words"), arrays.get("alnum")
        if (
            header.get("items") != items
            or words is None
            or alnum is None
            or words.size != items
            or alnum.size != items
        ):
            raise binfile.damaged(display, "its per-item counts do not match the set's items")
        word_counts, alnum_counts = words.astype(np.int64), alnum.astype(np.int64)
        # A count past 2**63 (stored as 64 bits) reads as negative: it would hide from the sums
        # the tables are checked against, and index arrays backwards.
        if bool((word_counts < 0).any() or (alnum_counts < 0).any()):
            raise binfile.damaged(display, "a word or character count is negative")
        count = int(np.maximum(word_counts - (GRAM_N - 1), 0).sum())
        read = files.reader(view.file) if seal is None else None
        grams = table_of(header, arrays, "grams", count, count, display, read)
        marks = templates_of(header, arrays, count, display)
        weights = weights_of(arrays, items, display)
        return ViewData(word_counts, alnum_counts, grams, None, templates=marks, item_weights=weights)

    def load_windows() -> PackedTable:
        header, arrays = _parsed(files, str(view.windows), view.digest, seal, "windows")
        data = view_of.data  # the counts say how many windows the table must hold
        count = int(np.maximum(data.alnum - (WINDOW_CHARS - 1), 0).sum())
        read = files.reader(str(view.windows)) if seal is None else None
        return table_of(header, arrays, "windows", count, items, files.display(str(view.windows)), read)

    has_windows = view.windows is not None
    view_of = View(
        view.field,
        view.digest,
        load,
        load_windows if has_windows else None,
        view.tables,
        has_windows=has_windows,
    )
    return view_of


def check_files(manifest: Manifest) -> list[str]:
    """Every binary file's digest against the index (what ``verify`` adds to loading); the
    problems found (none: an empty list)."""
    files = manifest.disk
    if not isinstance(files, Files):
        return []
    return [
        f"{files.display(rel)}: its digest is not the one the manifest's index records"
        for rel, data in sorted(files.listed.items())
        if files.digest_of(rel) != data.digest
    ]


def unlisted_files(manifest: Manifest) -> list[Path]:
    """Files under the manifest's ``sets/`` folder that its index does not list."""
    files = manifest.disk
    if not isinstance(files, Files):
        return []
    folder = files.root / names.SETS_DIR
    if not folder.is_dir():
        return []
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and path.relative_to(files.root).as_posix() not in files.listed
        and not path.name.startswith(".")
    )
