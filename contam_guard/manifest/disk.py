"""Manifest format 2 on disk: the index (``schema.py``) and one binary file per set and view.

Reading maps every binary file the index lists at once (a mapping costs no reads; a file that a
``register`` replaces later stays the one this process reads, so a scan keeps the manifest it
started with) and checks what is cheap: each file's size, and for an unkeyed manifest that each
header names the content the index expects (a file replaced between reading the index and
mapping the files is caught here, and ``store.load`` reads again). The arrays themselves are
read when used. ``verify`` checks every file's SHA-256 (``check_files``).

Writing rewrites only the files of the sets that changed: a set read from this manifest and
saved unchanged keeps its files, byte for byte, and a re-registration of one set writes that
set's files and the index, nothing else. Each file is written atomically; the index last, so
that it never names a file not yet written; files no set uses any more are removed after it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import mmap
import os
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from contam_guard import lfs
from contam_guard.atomic import write_bytes, write_text
from contam_guard.errors import HashKeyError, ManifestError
from contam_guard.manifest import binfile, checks, names
from contam_guard.manifest.binfile import RESTORE_FILE
from contam_guard.manifest.model import (
    GoldenSet,
    Ids,
    Manifest,
    SetSummary,
    Spec,
    View,
    ViewData,
    all_rules,
    uses_windows,
)
from contam_guard.manifest.packed import PackedTable, Shape, WordPairs, width_for
from contam_guard.manifest.schema import DataFile, Index, Seal, SetEntry, SetMeta, ViewEntry
from contam_guard.manifest.sealing import SealKey
from contam_guard.text.hashing import GRAM_N, WINDOW_CHARS, digest

_AAD = b"contam-guard manifest 2\0"
TABLES = ("grams", "windows")


class ChangedError(Exception):
    """A file does not hold what the index says: replaced while the manifest was being read."""


def index_digest(index: Index) -> str:
    body = index.model_dump(mode="json", exclude={"digest"})
    return digest(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def dumps_index(index: Index) -> str:
    """The index's canonical text: sorted keys, two-space indent, trailing newline."""
    sealed = index.model_copy(update={"digest": index_digest(index)})
    return json.dumps(sealed.model_dump(mode="json"), sort_keys=True, indent=2) + "\n"


def ids_digest(ids: Sequence[str]) -> str:
    return digest(json.dumps(list(ids)).encode("utf-8"))


@dataclass(frozen=True)
class StoredSet:
    """Where a set read from a manifest of format 2 lies (``GoldenSet.stored``)."""

    root: Path
    entry: SetEntry
    ids_digest: str


# --- reading -------------------------------------------------------------------------------


class Files:
    """The binary files of one index, each mapped once; sealed ones opened when first read."""

    def __init__(self, path: Path, index: Index) -> None:
        self.path = path
        self.root = path.parent
        self.index = index
        self._maps: dict[str, memoryview] = {}
        self._fds: dict[str, int] = {}
        for entry in index.sets.values():
            for rel, data in entry.data.items():
                self._fds[rel], self._maps[rel] = _open(self.root, rel, data)
        weakref.finalize(self, _close, list(self._fds.values()))

    def reader(self, rel: str) -> Callable[[int, int], bytes]:
        """``read(size, offset)`` of the file as mapped (the same inode, whatever replaced it since)."""
        fd = self._fds[rel]
        return lambda size, offset: os.pread(fd, size, offset)

    def display(self, rel: str) -> str:
        return str(self.root / rel)

    def raw(self, rel: str) -> memoryview:
        return self._maps[rel]

    def plain(self, rel: str, expected: str, seal: SealKey | None) -> memoryview:
        """The file's container bytes (opened with ``seal`` when sealed; ``expected`` is the
        content digest it must hold)."""
        data = self._maps[rel]
        if seal is None:
            return data
        return memoryview(seal.open(data, _aad(rel, expected), self.display(rel)))


def _aad(rel: str, expected: str) -> bytes:
    return _AAD + rel.encode("utf-8") + b"\0" + expected.encode("ascii")


def _close(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _open(root: Path, rel: str, data: DataFile) -> tuple[int, memoryview]:
    """The file open and mapped, after checking it is the size the index says (and no Git LFS
    pointer)."""
    path = root / rel
    display = str(path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise ManifestError(
            f"{display}: missing: the manifest's index lists it ({data.bytes:,} bytes)",
            hint=f"restore it from version control (git checkout -- {display}), or register the set again",
        ) from None
    try:
        size = os.fstat(fd).st_size
        if size <= lfs.MAX_POINTER_BYTES:
            head = os.pread(fd, size, 0)
            pointer = lfs.parse_pointer(head, display)
            if pointer is not None:
                raise ManifestError(
                    f"{display}: a Git LFS pointer, not the file: its object is not in this clone",
                    hint=lfs.PULL_HINT,
                )
        if size != data.bytes:
            raise ManifestError(
                f"{display}: {size:,} bytes, but the manifest's index says {data.bytes:,} (damaged, "
                "or changed without the index)",
                hint=RESTORE_FILE.format(display=display),
            )
        mapped = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        if hasattr(mmap, "MADV_RANDOM"):  # lookups read here and there: no read-ahead
            mapped.madvise(mmap.MADV_RANDOM)
    except BaseException:
        os.close(fd)
        raise
    return fd, memoryview(mapped)


def from_index(path: Path, raw: dict[str, Any], spec: Spec | None, seal: SealKey | None) -> Manifest:
    """The checked manifest of a format-2 index's JSON object; ``ChangedError`` when a file is not
    the one the index names (read again)."""
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

    def unlock(key: SealKey) -> Manifest:
        sets = {name: _golden(files, name, entry, key) for name, entry in index.sets.items()}
        return Manifest(
            spec=index.spec,
            key_check=index.key_check,
            sets=sets,
            salt=salt,
            digest=index.digest,
            path=path,
            summaries=summaries,
            seal=key,
            disk=files,
        )

    if index.seal is not None and seal is None:
        return Manifest(
            spec=index.spec,
            key_check=index.key_check,
            salt=salt,
            digest=index.digest,
            path=path,
            summaries=summaries,
            sealed_error=lambda: HashKeyError(
                f"{path}: this manifest is keyed: its sets are sealed, and no key was given to open them",
                hint="export CONTAM_GUARD_KEY=<the secret used at registration> (or the variable "
                "key_env names in the config)",
            ),
            unlock=unlock,
            disk=files,
        )
    if index.seal is None:
        for name, entry in index.sets.items():
            _check_headers(files, name, entry)
    return unlock(seal) if seal is not None else _unkeyed(path, index, files, summaries)


def _unkeyed(path: Path, index: Index, files: Files, summaries: dict[str, SetSummary]) -> Manifest:
    sets = {name: _golden(files, name, entry, None) for name, entry in index.sets.items()}
    return Manifest(
        spec=index.spec,
        key_check=None,
        sets=sets,
        digest=index.digest,
        path=path,
        summaries=summaries,
        disk=files,
    )


def _summary(entry: SetEntry) -> SetSummary:
    views = None
    if entry.views is not None:
        views = {name: entry.data[view.file].bytes for name, view in entry.views.items()}
    windows = uses_windows(entry.rules) if entry.rules is not None else None
    sizes = {rel: data.bytes for rel, data in entry.data.items()}
    return SetSummary(entry.version, entry.digest, entry.items, entry.history, sizes, views, windows)


def _check_headers(files: Files, name: str, entry: SetEntry) -> None:
    """Each file's header names the content the index expects (cheap: the first page)."""
    meta = entry.meta()
    expected = {view.file: view.digest for view in meta.views.values()}
    expected[entry.ids] = meta.ids_digest
    for rel, want in expected.items():
        header = binfile.header_of(files.raw(rel), files.display(rel))
        if header.get("digest") != want:
            raise ChangedError(rel)


def _meta(files: Files, name: str, entry: SetEntry, seal: SealKey | None) -> SetMeta:
    if entry.sealed is None:
        return entry.meta()
    assert seal is not None
    where = f"{files.path}: set {name!r}"
    try:
        blob = base64.b64decode(entry.sealed.encode("ascii"), validate=True)
    except ValueError:
        raise ManifestError(f"{where}: its sealed metadata is not base64") from None
    text = seal.open(blob, _meta_aad(name, entry.digest), where)
    try:
        return SetMeta.model_validate_json(text)
    except ValidationError as exc:
        raise ManifestError(f"{where}: its sealed metadata is malformed ({exc.errors()[0]['msg']})") from None


def _meta_aad(name: str, set_digest: str) -> bytes:
    return _AAD + b"meta\0" + name.encode("utf-8") + b"\0" + set_digest.encode("ascii")


def _golden(files: Files, name: str, entry: SetEntry, seal: SealKey | None) -> GoldenSet:
    meta = _meta(files, name, entry, seal)
    label = f"{files.path}: set {name!r}"
    hint = checks.RESTORE_HINT.format(path=files.path)
    if sum(f.items for f in meta.files) != entry.items:
        raise ManifestError(f"{label}: the files' item counts do not add up to its items", hint=hint)
    unknown = sorted(set(meta.rules) - set(all_rules()))
    if unknown:
        raise ManifestError(
            f"{label}: registered for rules this contam-guard does not know: {unknown}", hint=hint
        )
    if any(view.file not in entry.data for view in meta.views.values()):
        raise ManifestError(f"{label}: a view's file is not among the set's files", hint=hint)
    windows = uses_windows(meta.rules)
    views = {
        view_name: View(view.field, view.digest, _view_loader(files, view, entry.items, windows, seal))
        for view_name, view in meta.views.items()
    }
    ids = DeferredIds(entry.items, lambda: _ids(files, entry.ids, meta.ids_digest, entry.items, seal))
    return GoldenSet(
        version=entry.version,
        digest=entry.digest,
        id_field=meta.id_field,
        files=meta.files,
        ids=ids,
        views=views,
        history=entry.history,
        rules=tuple(meta.rules),
        stored=StoredSet(files.root.resolve(), entry, meta.ids_digest),
    )


class DeferredIds(Sequence[str]):
    """A set's ids, read from its file when first needed (their count is the index's)."""

    def __init__(self, count: int, load: Callable[[], Ids]) -> None:
        self._count = count
        self._load = load
        self._ids: Ids | None = None

    @property
    def ids(self) -> Ids:
        if self._ids is None:
            self._ids = self._load()
        return self._ids

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self.ids[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)


def _ids(files: Files, rel: str, expected: str, items: int, seal: SealKey | None) -> Ids:
    display = files.display(rel)
    data = files.plain(rel, expected, seal)
    header = binfile.header_of(data, display)
    arrays = binfile.arrays_of(data, header, display)
    offsets, blob = arrays.get("offsets"), arrays.get("bytes")
    if (
        header.get("kind") != "ids"
        or header.get("digest") != expected
        or offsets is None
        or blob is None
        or offsets.size != items + 1
        or (offsets.size and (int(offsets[0]) != 0 or int(offsets[-1]) != blob.size))
        or bool((np.diff(offsets.astype(np.int64)) < 0).any())
    ):
        raise binfile.damaged(display, "its ids do not match the manifest's index")
    return Ids(offsets, blob)


def _view_loader(
    files: Files, view: ViewEntry, items: int, windows: bool, seal: SealKey | None
) -> Callable[[], ViewData]:
    def load() -> ViewData:
        display = files.display(view.file)
        data = files.plain(view.file, view.digest, seal)
        header = binfile.header_of(data, display)
        if (
            header.get("kind") != "view"
            or header.get("digest") != view.digest
            or header.get("items") != items
        ):
            raise binfile.damaged(display, "it does not hold the view the manifest's index names")
        arrays = binfile.arrays_of(data, header, display)
        read = files.reader(view.file) if seal is None else None
        return view_data(arrays, header, items, windows, display, read)

    return load


def view_data(
    arrays: dict[str, NDArray[Any]],
    header: dict[str, Any],
    items: int,
    windows: bool,
    display: str,
    read: Callable[[int, int], bytes] | None = None,
) -> ViewData:
    """The checked view of a file's arrays: every size agrees with the counts (else the engine
    could index outside them)."""
    words, alnum = arrays.get("words"), arrays.get("alnum")
    if words is None or alnum is None or words.size != items or alnum.size != items:
        raise binfile.damaged(display, "its per-item counts do not match the set's items")
    word_counts, alnum_counts = words.astype(np.int64), alnum.astype(np.int64)
    tables: dict[str, PackedTable | None] = {}
    for name in TABLES:
        shape = header.get(name)
        if shape is None:
            tables[name] = None
            continue
        if not isinstance(shape, dict) or not all(isinstance(shape.get(k), int) for k in _SHAPE_KEYS):
            raise binfile.damaged(display, f"its {name} table has no valid shape")
        parts = {part: arrays.get(f"{name}.{part}") for part in ("units", "groups", "remainders", "payloads")}
        if any(part is None for part in parts.values()):
            raise binfile.damaged(display, f"its {name} table is incomplete")
        pairs = {}
        if read is not None:
            for part in ("remainders", "payloads"):
                pairs[part] = _pairs(read, header["arrays"][f"{name}.{part}"]["offset"])
        table = PackedTable(Shape(**{k: shape[k] for k in _SHAPE_KEYS}), **parts, pairs=pairs)  # type: ignore[arg-type]
        problem = table.check()
        if problem is not None:
            raise binfile.damaged(display, f"its {name} table: {problem}")
        tables[name] = table
    grams, window_table = tables["grams"], tables["windows"]
    gram_count = int(np.maximum(word_counts - (GRAM_N - 1), 0).sum())
    window_count = int(np.maximum(alnum_counts - (WINDOW_CHARS - 1), 0).sum())
    if (
        grams is None
        or grams.count != gram_count
        or grams.shape.payload_bits != width_for(max(gram_count - 1, 0))
    ):
        raise binfile.damaged(display, "its 5-gram table does not match its word counts")
    if (window_table is not None) != windows:
        raise binfile.damaged(
            display, "it holds window hashes where the set's rules want none, or the reverse"
        )
    if window_table is not None and (
        window_table.count != window_count or window_table.shape.payload_bits != width_for(max(items - 1, 0))
    ):
        raise binfile.damaged(display, "its window table does not match its character counts")
    return ViewData(word_counts, alnum_counts, grams, window_table)


_SHAPE_KEYS = ("count", "bucket_bits", "payload_bits")


def _pairs(read: Callable[[int, int], bytes], offset: int) -> WordPairs:
    """Reads of words ``w`` and ``w + 1`` of the array at ``offset`` in a file."""

    def pairs(words: NDArray[np.int64]) -> NDArray[np.uint64]:
        data = b"".join(read(16, offset + 8 * w) for w in words.tolist())
        return np.frombuffer(data, dtype="<u8").reshape(-1, 2).astype(np.uint64)

    return pairs


def check_files(manifest: Manifest) -> list[str]:
    """Every binary file's SHA-256 against the index (what ``verify`` adds to loading), as read
    (mapped) by ``manifest``; the problems found (none: an empty list)."""
    files = manifest.disk
    if not isinstance(files, Files):
        return []
    problems = []
    for name, entry in sorted(files.index.sets.items()):
        for rel, data in sorted(entry.data.items()):
            if hashlib.sha256(files.raw(rel)).hexdigest() != data.sha256:
                problems.append(
                    f"{files.display(rel)}: its SHA-256 is not the one the index records (set {name!r})"
                )
    return problems


def unlisted_files(manifest: Manifest) -> list[Path]:
    """Files under the manifest's ``sets/`` folder that its index does not list."""
    if manifest.path is None:
        return []
    root = manifest.path.parent
    listed = {rel for summary in manifest.summaries.values() for rel in summary.data}
    folder = root / names.SETS_DIR
    if not folder.is_dir():
        return []
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and path.relative_to(root).as_posix() not in listed
        and not path.name.startswith(".")
    )


# --- writing -------------------------------------------------------------------------------


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
        seal=Seal(salt=manifest.salt) if keyed else None,
        sets=entries,
    )
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
    except (FileNotFoundError, IsADirectoryError):
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
    view_files = names.view_files(name, list(golden.views), keyed=seal is not None)
    ids_rel = names.ids_file(name)
    stored = golden.stored
    writes: dict[str, bytes] = {}
    if (
        isinstance(stored, StoredSet)
        and stored.root == root.resolve()
        and stored.entry.digest == golden.digest
        and (stored.entry.sealed is None) == (seal is None)
        and set(stored.entry.data) == {*view_files.values(), ids_rel}
    ):
        data = dict(stored.entry.data)
        ids_sum = stored.ids_digest
    else:
        ids_sum = ids_digest(golden.ids)
        writes[ids_rel] = _sealed(_ids_file(golden.ids, ids_sum), ids_rel, ids_sum, seal)
        for view_name, view in golden.views.items():
            rel = view_files[view_name]
            writes[rel] = _sealed(_view_file(view, golden.items), rel, view.digest, seal)
        data = {
            rel: DataFile(bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest())
            for rel, blob in writes.items()
        }
    meta = SetMeta(
        id_field=golden.id_field,
        files=golden.files,
        rules=sorted(golden.rules),
        views={
            view_name: ViewEntry(field=view.field, digest=view.digest, file=view_files[view_name])
            for view_name, view in golden.views.items()
        },
        ids_digest=ids_sum,
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
    sealed = seal.seal(meta.model_dump_json().encode("utf-8"), _meta_aad(name, golden.digest))
    return SetEntry(**common, sealed=base64.b64encode(sealed).decode("ascii")), writes


def _sealed(plain: bytes, rel: str, expected: str, seal: SealKey | None) -> bytes:
    return plain if seal is None else seal.seal(plain, _aad(rel, expected))


def _ids_file(ids: Sequence[str], expected: str) -> bytes:
    offsets, blob = Ids.of(ids)
    return binfile.encode(
        {"kind": "ids", "items": len(ids), "digest": expected},
        {"offsets": (binfile.smallest_dtype(offsets), offsets), "bytes": ("|u1", blob)},
    )


def _view_file(view: View, items: int) -> bytes:
    data = view.data
    arrays: dict[str, tuple[str, NDArray[Any]]] = {
        "words": (binfile.smallest_dtype(data.words), data.words),
        "alnum": (binfile.smallest_dtype(data.alnum), data.alnum),
    }
    header: dict[str, Any] = {"kind": "view", "items": items, "digest": view.digest}
    for name, table in (("grams", data.grams), ("windows", data.windows)):
        if table is None:
            header[name] = None
            continue
        header[name] = {k: getattr(table.shape, k) for k in _SHAPE_KEYS}
        arrays[f"{name}.units"] = ("<u8", table.units)
        arrays[f"{name}.groups"] = ("<u4", table.groups)
        arrays[f"{name}.remainders"] = ("<u8", table.remainders)
        arrays[f"{name}.payloads"] = ("<u8", table.payloads)
    return binfile.encode(header, arrays)
