"""Writing a manifest: the sets' binary files, then the index, then removing what it no longer lists.

A registration is committed as a database commits: every new file is written (atomically) under
a new name, its stem and the digest of its bytes (``names.addressed``), so no file the current
index names is ever replaced; then the index is replaced (atomically); then the files no set
uses any more, and what interrupted writes left, are removed. A writer killed at any point
leaves the old index with all its files, or the new one with all its files; a reader holding
the old index keeps the files it opened (and one that finds a file gone reads the new index:
``store.load``). A set read from this manifest and saved with the same content keeps its view
files, byte for byte; the same golden files always give the same bytes (a keyed manifest's too:
``sealing.py``).
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contam_guard.errors import ManifestError
from contam_guard.io.atomic import write_bytes, write_text
from contam_guard.io.manifest import names, record
from contam_guard.io.manifest.binfile import RESTORE_FILE
from contam_guard.io.manifest.disk_encode import ids_file, view_file, windows_file
from contam_guard.io.manifest.disk_files import StoredSet, file_digest
from contam_guard.io.manifest.ids import DeferredIds
from contam_guard.io.manifest.index_text import aad, dumps_index, ids_digest, mac_body, meta_aad
from contam_guard.io.manifest.model import GoldenSet, Manifest, Spec, is_derived
from contam_guard.io.manifest.schema import DataFile, Index, Seal, SetEntry, SetMeta, TemplateEntry, ViewEntry
from contam_guard.io.manifest.sealing import SealKey, is_padded, padded_meta, padded_size


def write(path: Path, manifest: Manifest) -> bool:
    """Write ``manifest`` at ``path`` (its index) and ``sets/`` beside it; whether anything changed."""
    root = path.parent
    keyed = manifest.key_check is not None
    if keyed and (manifest.seal is None or manifest.salt is None):
        raise ValueError("a keyed manifest is written with its seal key and salt")
    clash = names.clash(list(manifest.sets))
    if clash is not None:
        raise ManifestError(
            f"sets {clash[0]!r} and {clash[1]!r} differ only in case: their files would share a folder "
            "on macOS and Windows",
            hint=f"register one of them under another name (contam-guard remove {clash[1]})",
        )
    seal = manifest.seal if keyed else None
    old = _current(path)
    entries: dict[str, SetEntry] = {}
    writes: dict[str, bytes] = {}
    for name in sorted(manifest.sets):
        entries[name], files = _entry_for(root, name, manifest.sets[name], manifest.spec, seal)
        writes.update(files)
    index = Index(
        spec=manifest.spec,
        key_check=manifest.key_check,
        seal=Seal(salt=manifest.salt) if keyed and manifest.salt is not None else None,
        sets=entries,
    )
    if seal is not None:
        index = index.model_copy(update={"mac": seal.index_mac(mac_body(index))})
    changed = False
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in sorted(writes.items()):
        if _read_or_none(root / rel) != data:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            write_bytes(root / rel, data)
            changed = True
            _step()
    text = dumps_index(index)
    if _read_or_none(path) != text.encode("utf-8"):
        write_text(path, text)
        changed = True
        _step()
    _remove_unlisted(root, old, index)
    return changed


def _remove_unlisted(root: Path, old: Index | None, new: Index) -> None:
    """Remove the files the new index does not list: those the old one did, and those of ours
    (``names.ours``) an interrupted write left in the folder of a set either index names (another
    manifest may share the folder: no other set's folder is touched); then the empty set folders."""
    kept = _listed(new)
    found = _listed(old)
    for name in {*(old.sets if old is not None else ()), *new.sets}:
        folder = root / names.set_folder(name)
        with contextlib.suppress(OSError):
            found |= {f"{names.set_folder(name)}/{p.name}" for p in folder.iterdir() if names.ours(p.name)}
    for rel in sorted(found - kept):
        with contextlib.suppress(FileNotFoundError):
            (root / rel).unlink()
            _step()
    for rel in sorted({str(Path(rel).parent) for rel in found} - {str(Path(rel).parent) for rel in kept}):
        with contextlib.suppress(OSError):
            (root / rel).rmdir()  # the set's folder, once empty
            _step()


# --- Fault injection, for the crash tests only (tests/security/test_round2_manifest.py).
# CONTAM_GUARD_MANIFEST_KILL_AFTER=N kills this process with SIGKILL right after the writer's
# N-th file operation (a set file written, the index replaced, a file or folder removed), so a
# test kills a real register exactly after each step in turn. Read nowhere else.
_DONE = [0]


def _step() -> None:
    limit = os.environ.get("CONTAM_GUARD_MANIFEST_KILL_AFTER")
    if not limit:
        return
    _DONE[0] += 1
    if str(_DONE[0]) == limit:
        os.kill(os.getpid(), signal.SIGKILL)


# --- end of fault injection


def _current(path: Path) -> Index | None:
    """The index at ``path`` as it is now (for the files it lists)."""
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


def _entry_for(
    root: Path, name: str, golden: GoldenSet, spec: Spec, seal: SealKey | None
) -> tuple[SetEntry, dict[str, bytes]]:
    """The index entry of ``golden`` and the files it names (its view files are those it was
    read from, when they still hold what would be written)."""
    stems = names.view_files(name, windowed(golden), keyed=seal is not None)
    stored = golden.stored
    writes: dict[str, bytes] = {}
    if _keeps_views(root, name, golden, stems, seal):
        assert isinstance(stored, StoredSet)
        data = {rel: stored.entry.data[rel] for rel in stored.entry.data if rel != stored.entry.ids}
        files = {view: (e.file, e.windows) for view, e in stored.meta.views.items()}
    else:
        data, files = {}, {}
        for view_name, view in golden.views.items():
            main, window = stems[view_name]
            # a derived view ("~") is read by no rule that honours template marks
            marked = golden.templates is not None and not is_derived(view_name)
            main_rel = _add(
                writes,
                data,
                main,
                view_file(view, golden.items, marked=marked),
                view.digest,
                seal,
                golden.items,
            )
            window_rel = None
            if window is not None:
                window_rel = _add(
                    writes, data, window, windows_file(view, golden.items), view.digest, seal, golden.items
                )
            files[view_name] = (main_rel, window_rel)
    ids_sum = ids_digest(golden.ids)
    meta = SetMeta(
        id_field=golden.id_field,
        files=golden.files,
        rules=sorted(golden.rules),
        views={
            view_name: ViewEntry(
                field=view.field,
                digest=view.digest,
                tables=view.tables_digest,
                file=files[view_name][0],
                windows=files[view_name][1],
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
        data={},
        ids="",
    )
    # The ids file's header holds the set's record, the entry's other fields: first the entry
    # without its files (the record does not name them), then the ids file, then the entry.
    bare = SetEntry.model_construct(**common, **meta.model_dump())
    header = {record.KEY: record.set_record(name, spec, bare, meta)}
    ids_rel = _add(
        writes, data, names.ids_file(name), ids_file(golden.ids, ids_sum, header), ids_sum, seal, golden.items
    )
    common.update(data=dict(sorted(data.items())), ids=ids_rel)
    if seal is None:
        return SetEntry(**common, **meta.model_dump()), writes
    plain = padded_meta(meta.model_dump_json().encode("utf-8"))
    sealed = seal.seal(plain, meta_aad(name, golden.digest))
    return SetEntry(**common, sealed=base64.b64encode(sealed).decode("ascii")), writes


def _add(
    writes: dict[str, bytes],
    data: dict[str, DataFile],
    stem: str,
    plain: bytes,
    expected: str,
    seal: SealKey | None,
    items: int,
) -> str:
    """Add a file of stem ``stem`` to write (sealed, and padded, when keyed); its name."""
    blob = plain if seal is None else _sealed(plain, stem, expected, seal, items)
    described = DataFile(
        bytes=len(blob), digest=file_digest(lambda size, offset: blob[offset : offset + size], len(blob))
    )
    rel = names.addressed(stem, described.digest)
    writes[rel] = blob
    data[rel] = described
    return rel


def _sealed(plain: bytes, stem: str, expected: str, seal: SealKey, items: int) -> bytes:
    """``plain`` sealed, padded first (with zero bytes after its arrays, which no reader reads)
    so that the sealed size is ``sealing.padded_size``."""
    from contam_guard.io.manifest.sealing import OVERHEAD  # noqa: PLC0415

    target = padded_size(len(plain) + OVERHEAD, items)
    return seal.seal(plain + bytes(target - OVERHEAD - len(plain)), aad(stem, expected))


def _keeps_views(
    root: Path, name: str, golden: GoldenSet, stems: dict[str, tuple[str, str | None]], seal: SealKey | None
) -> bool:
    """Whether ``golden``'s view files can stay those it was read from: the same content and
    layout (views, window tables, keyed or not; sealed ones padded), and intact."""
    stored = golden.stored
    if not (
        isinstance(stored, StoredSet)
        and stored.root == root.resolve()
        and stored.entry.digest == golden.digest
        and (stored.entry.sealed is None) == (seal is None)
        and {view: e.windows is not None for view, e in stored.meta.views.items()}
        == {view: pair[1] is not None for view, pair in stems.items()}
    ):
        return False
    if seal is not None and not all(is_padded(d.bytes, golden.items) for d in stored.entry.data.values()):
        return False
    return _intact(name, stored, golden)


def windowed(golden: GoldenSet) -> dict[str, bool]:
    """Whether each view of ``golden`` has a window table: a registered view when the set's
    rules read windows; a derived view (``core.reword.views``) when it holds window hashes
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
