"""Writing a manifest of format 2: the index and the binary files of the sets that changed.

A set read from this manifest and saved with the same content keeps its files, byte for byte:
re-registering one set writes that set's files and the index, nothing else. Each file is
written atomically, and only when its bytes differ; the index last, so that it never names a
file not yet written; files no set uses any more are removed after it. The same golden files
always give the same bytes (a keyed manifest's too: ``sealing.py``).
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from contam_guard.atomic import write_bytes, write_text
from contam_guard.errors import ManifestError
from contam_guard.manifest import binfile, names
from contam_guard.manifest.binfile import RESTORE_FILE
from contam_guard.manifest.disk import (
    StoredSet,
    aad,
    dumps_index,
    file_digest,
    ids_digest,
    meta_aad,
)
from contam_guard.manifest.disk_arrays import ITEM_WEIGHTS, SHAPE_KEYS
from contam_guard.manifest.ids import DeferredIds, Ids
from contam_guard.manifest.model import GoldenSet, Manifest, View, is_derived
from contam_guard.manifest.packed import PackedTable
from contam_guard.manifest.schema import DataFile, Index, Seal, SetEntry, SetMeta, TemplateEntry, ViewEntry
from contam_guard.manifest.sealing import SealKey


def write(path: Path, manifest: Manifest) -> None:
    """Write ``manifest`` as format 2 at ``path`` (its index) and ``sets/`` beside it."""
    root = path.parent
    keyed = manifest.key_check is not None
    if keyed and (manifest.seal is None or manifest.salt is None):
        raise ValueError("a keyed manifest of format 2 is written with its seal key and salt")
    clash = names.clash(list(manifest.sets))
    if clash is not None:
        raise ManifestError(
            f"sets {clash[0]!r} and {clash[1]!r} differ only in case: their files would share a folder "
            "on macOS and Windows",
            hint=f"register one of them under another name (contam-guard remove {clash[1]})",
        )
    old = _current(path)
    entries: dict[str, SetEntry] = {}
    writes: dict[str, bytes] = {}
    for name in sorted(manifest.sets):
        entries[name], files = _entry_for(root, name, manifest.sets[name], manifest.seal if keyed else None)
        writes.update(files)
    index = Index(
        spec=manifest.spec,
        key_check=manifest.key_check,
        seal=Seal(salt=manifest.salt) if keyed and manifest.salt is not None else None,
        sets=entries,
    )
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in sorted(writes.items()):
        _write_if_changed(root / rel, data)
    text = dumps_index(index)
    if _read_or_none(path) != text.encode("utf-8"):
        write_text(path, text)
    kept = {rel for entry in entries.values() for rel in entry.data}
    for rel in sorted(_listed(old) - kept):
        (root / rel).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            (root / rel).parent.rmdir()  # the set's folder, once empty


def _current(path: Path) -> Index | None:
    """The index at ``path`` as it is now, if it is one of format 2 (for the files it lists)."""
    data = _read_or_none(path)
    if data is None:
        return None
    try:
        return Index.model_validate_json(data)
    except ValidationError:
        return None


def _listed(index: Index | None) -> set[str]:
    return {rel for entry in index.sets.values() for rel in entry.data} if index is not None else set()


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _write_if_changed(path: Path, data: bytes) -> None:
    if _read_or_none(path) == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(path, data)


def _entry_for(
    root: Path, name: str, golden: GoldenSet, seal: SealKey | None
) -> tuple[SetEntry, dict[str, bytes]]:
    """The index entry of ``golden`` and the files to write for it (none when its files are
    those it was read from)."""
    rels = names.view_files(name, windowed(golden), keyed=seal is not None)
    ids_rel = names.ids_file(name)
    wanted = {ids_rel} | {rel for pair in rels.values() for rel in pair if rel is not None}
    stored = golden.stored
    writes: dict[str, bytes] = {}
    if (
        isinstance(stored, StoredSet)
        and stored.root == root.resolve()
        and stored.entry.digest == golden.digest
        and (stored.entry.sealed is None) == (seal is None)
        and set(stored.entry.data) == wanted
        and _intact(name, stored, golden)
    ):
        data = dict(stored.entry.data)
        ids_sum = stored.ids_digest
    else:
        ids_sum = ids_digest(golden.ids)
        writes[ids_rel] = _sealed(ids_file(golden.ids, ids_sum), ids_rel, ids_sum, seal)
        for view_name, view in golden.views.items():
            main, window = rels[view_name]
            # a derived view (issue 15, "~") is read by no rule that honours template marks
            marked = golden.templates is not None and not is_derived(view_name)
            writes[main] = _sealed(view_file(view, golden.items, marked=marked), main, view.digest, seal)
            if window is not None:
                writes[window] = _sealed(windows_file(view, golden.items), window, view.digest, seal)
        data = {rel: _described(blob) for rel, blob in writes.items()}
    meta = SetMeta(
        id_field=golden.id_field,
        files=golden.files,
        rules=sorted(golden.rules),
        views={
            view_name: ViewEntry(
                field=view.field,
                digest=view.digest,
                tables=view.tables_digest,
                file=rels[view_name][0],
                windows=rels[view_name][1],
            )
            for view_name, view in golden.views.items()
        },
        ids_digest=ids_sum,
        n=golden.n,
        templates=(
            TemplateEntry(share=golden.templates.share, min_items=golden.templates.min_items)
            if golden.templates is not None
            else None
        ),
    )
    common: dict[str, Any] = dict(
        version=golden.version,
        digest=golden.digest,
        items=golden.items,
        history=golden.history,
        data=data,
        ids=ids_rel,
    )
    if seal is None:
        return SetEntry(**common, **meta.model_dump()), writes
    sealed = seal.seal(meta.model_dump_json().encode("utf-8"), meta_aad(name, golden.digest))
    return SetEntry(**common, sealed=base64.b64encode(sealed).decode("ascii")), writes


def windowed(golden: GoldenSet) -> dict[str, bool]:
    """Whether each view of ``golden`` has a window table: a registered view when the set's
    rules read windows; a derived view (issue 15, ``reword.views``) when it holds window hashes
    (the ``reworded`` rule's content features are stored there, whatever the rules)."""
    return {
        name: view.has_windows if is_derived(name) else golden.has_windows
        for name, view in golden.views.items()
    }


def _intact(name: str, stored: StoredSet, golden: GoldenSet) -> bool:
    """Whether the set's files can be kept as they are: they still have their digests and hold
    what the index says (read and checked here). A set just hashed again from its golden files
    (``register``) is written anew when they do not, which repairs them; no other set may be
    saved from damaged files."""
    damaged = stored.damaged()
    if damaged and all(view.in_memory for view in golden.views.values()):
        return False
    if damaged:
        shown = stored.files.display(damaged[0])
        raise ManifestError(
            f"{shown}: set {name!r}: its digest is not the one the manifest's index records "
            "(damaged, or edited)",
            hint=f"{RESTORE_FILE.format(display=shown)} (contam-guard register {name} FILE...)",
        )
    if not all(view.in_memory for view in golden.views.values()):
        if isinstance(golden.ids, DeferredIds):  # every file read and checked, as a scan would
            len(golden.ids.ids)
        for view in golden.views.values():
            view.data, view.windows  # noqa: B018
    return True


def _described(blob: bytes) -> DataFile:
    return DataFile(
        bytes=len(blob), digest=file_digest(lambda size, offset: blob[offset : offset + size], len(blob))
    )


def _sealed(plain: bytes, rel: str, expected: str, seal: SealKey | None) -> bytes:
    return plain if seal is None else seal.seal(plain, aad(rel, expected))


def ids_file(ids: Sequence[str], expected: str) -> bytes:
    offsets, blob = Ids.of(ids)
    return binfile.encode(
        {"kind": "ids", "items": len(ids), "digest": expected},
        {"offsets": (binfile.smallest_dtype(offsets), offsets), "bytes": ("|u1", blob)},
    )


def view_file(view: View, items: int, *, marked: bool = False) -> bytes:
    """A view's counts and 5-gram table (and its template marks, for a set that has them)."""
    data = view.data
    arrays: dict[str, tuple[str, NDArray[Any]]] = {
        "words": (binfile.smallest_dtype(data.words), data.words),
        "alnum": (binfile.smallest_dtype(data.alnum), data.alnum),
        **_table_arrays("grams", data.grams),
    }
    header: dict[str, Any] = {"kind": "view", "items": items, "digest": view.digest}
    header["grams"] = _shape(data.grams)
    if data.item_weights is not None:  # float64, stored as their bits (files hold unsigned arrays)
        arrays[ITEM_WEIGHTS] = ("<u8", np.ascontiguousarray(data.item_weights, dtype="<f8").view("<u8"))
    if marked:
        marks = data.templates
        arrays["templates.at"] = (binfile.smallest_dtype(marks.at), marks.at)
        arrays["templates.run"] = (binfile.smallest_dtype(marks.run), marks.run)
        header["templates"] = {"ngrams": marks.ngrams, "top": marks.top}
    return binfile.encode(header, arrays)


def windows_file(view: View, items: int) -> bytes:
    """A view's window table."""
    table = view.windows
    assert table is not None
    header = {"kind": "windows", "items": items, "digest": view.digest, "windows": _shape(table)}
    return binfile.encode(header, _table_arrays("windows", table))


def _shape(table: PackedTable) -> dict[str, int]:
    return {k: getattr(table.shape, k) for k in SHAPE_KEYS}


def _table_arrays(name: str, table: PackedTable) -> dict[str, tuple[str, NDArray[Any]]]:
    return {
        f"{name}.units": ("<u8", table.units),
        f"{name}.groups": ("<u4", table.groups),
        f"{name}.remainders": ("<u8", table.remainders),
        f"{name}.payloads": ("<u8", table.payloads),
    }
