"""Reading a manifest of format 2: the index (``schema.py``) and the sets' binary files.

Every binary file the index lists is opened and mapped at once (a mapping costs no reads; a file
that a ``register`` replaces later stays the one this process reads, so a scan keeps the
manifest it started with), after checking its size; for an unkeyed manifest each header must
name the content the index expects (a file replaced between reading the index and opening the
files raises ``ChangedError``, and ``store.load`` reads again). A file's content is read when it
is first used, and its digest checked then: a scan that reads no windows never reads a window
file. ``verify`` checks every file (``check_files``). Writing is ``disk_write.py``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import mmap
import os
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash
from numpy.typing import NDArray
from pydantic import ValidationError

from contam_guard import lfs
from contam_guard.engine.templates import TemplateSettings
from contam_guard.errors import HashKeyError, ManifestError
from contam_guard.manifest import binfile, checks, names
from contam_guard.manifest.binfile import RESTORE_FILE
from contam_guard.manifest.disk_arrays import table_of, templates_of, weights_of
from contam_guard.manifest.ids import DeferredIds, Ids
from contam_guard.manifest.model import (
    GoldenSet,
    Manifest,
    SetSummary,
    Spec,
    View,
    ViewData,
    all_rules,
    is_derived,
    uses_windows,
)
from contam_guard.manifest.packed import PackedTable
from contam_guard.manifest.schema import DataFile, Index, SetEntry, SetMeta, ViewEntry
from contam_guard.manifest.sealing import SealKey
from contam_guard.text.hashing import GRAM_N, WINDOW_CHARS, digest

AAD = b"contam-guard manifest 2\0"
_CHUNK = 1 << 20


class ChangedError(Exception):
    """A file does not hold what the index says: replaced while the manifest was being read."""


def _body(index: Index, exclude: set[str] | None = None) -> dict[str, Any]:
    """The index as JSON; a set without template settings has no ``templates`` key (an index
    written before they existed keeps its digest)."""
    body = index.model_dump(mode="json", exclude=exclude)
    for entry in body["sets"].values():
        if entry.get("templates", 0) is None:
            del entry["templates"]
    return body


def index_digest(index: Index) -> str:
    body = _body(index, {"digest"})
    return digest(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def dumps_index(index: Index) -> str:
    """The index's canonical text: sorted keys, two-space indent, trailing newline."""
    sealed = index.model_copy(update={"digest": index_digest(index)})
    return json.dumps(_body(sealed), sort_keys=True, indent=2) + "\n"


def ids_digest(ids: Sequence[str]) -> str:
    return digest(json.dumps(list(ids)).encode("utf-8"))


def file_digest(read: Callable[[int, int], bytes], size: int) -> str:
    """``digest`` of a file's bytes as one part, read in chunks (never all in memory, never mapped)."""
    hasher = xxhash.xxh3_128()
    hasher.update(size.to_bytes(8, "little"))
    for offset in range(0, size, _CHUNK):
        hasher.update(read(min(_CHUNK, size - offset), offset))
    return hasher.hexdigest()


def aad(rel: str, expected: str) -> bytes:
    return AAD + rel.encode("utf-8") + b"\0" + expected.encode("ascii")


def meta_aad(name: str, set_digest: str) -> bytes:
    return AAD + b"meta\0" + name.encode("utf-8") + b"\0" + set_digest.encode("ascii")


@dataclass(frozen=True)
class StoredSet:
    """Where a set read from a manifest of format 2 lies (``GoldenSet.stored``)."""

    root: Path
    entry: SetEntry
    ids_digest: str
    files: Files

    def damaged(self) -> list[str]:
        """The files of the set that no longer have the digest the index records."""
        entries = sorted(self.entry.data.items())
        return [rel for rel, data in entries if self.files.digest_of(rel) != data.digest]


class Files:
    """The binary files of one index, each opened and mapped once; each checked against its
    digest (and opened, when sealed) when first read."""

    def __init__(self, path: Path, index: Index) -> None:
        self.path = path
        self.root = path.parent
        self.index = index
        self.listed = {rel: data for entry in index.sets.values() for rel, data in entry.data.items()}
        self._maps: dict[str, memoryview] = {}
        self._fds: dict[str, int] = {}
        self._checked: set[str] = set()
        weakref.finalize(self, _close, self._fds)
        for rel, data in self.listed.items():
            self._fds[rel], self._maps[rel] = _open(self.root, rel, data)

    def display(self, rel: str) -> str:
        return str(self.root / rel)

    def raw(self, rel: str) -> memoryview:
        """The file as mapped (not checked)."""
        return self._maps[rel]

    def reader(self, rel: str) -> Callable[[int, int], bytes]:
        """``read(size, offset)`` of the file as opened (the same inode, whatever replaced it since)."""
        fd = self._fds[rel]
        return lambda size, offset: os.pread(fd, size, offset)

    def digest_of(self, rel: str) -> str:
        return file_digest(self.reader(rel), len(self._maps[rel]))

    def content(self, rel: str, expected: str, seal: SealKey | None) -> memoryview:
        """The file's container bytes, its digest checked (opened with ``seal`` when sealed;
        ``expected`` is the content digest it must hold)."""
        if rel not in self._checked:
            if self.digest_of(rel) != self.listed[rel].digest:
                raise ManifestError(
                    f"{self.display(rel)}: its digest is not the one the manifest's index records "
                    "(damaged, edited, or replaced without the index)",
                    hint=RESTORE_FILE.format(display=self.display(rel)),
                )
            self._checked.add(rel)
        data = self._maps[rel]
        if seal is None:
            return data
        return memoryview(seal.open(data, aad(rel, expected), self.display(rel)))


def _close(fds: dict[str, int]) -> None:
    for fd in fds.values():
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
            hint=RESTORE_FILE.format(display=display),
        ) from None
    try:
        size = os.fstat(fd).st_size
        if size <= lfs.MAX_POINTER_BYTES and lfs.parse_pointer(os.pread(fd, size, 0), display) is not None:
            raise ManifestError(
                f"{display}: a Git LFS pointer, not the file: its object is not in this clone",
                hint=lfs.PULL_HINT,
            )
        if size != data.bytes or size == 0:
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
    """The checked manifest of a format-2 index's JSON object (sealed, when keyed and no
    ``seal`` is given); ``ChangedError`` when a file is not the one the index names."""
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
        sets = {name: _golden(files, name, entry, key) for name, entry in index.sets.items()}
        return Manifest(**common, sets=sets, summaries=summaries, seal=key)

    if index.seal is None:
        for entry in index.sets.values():
            _check_headers(files, entry)
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


def _check_headers(files: Files, entry: SetEntry) -> None:
    """Each file's header names the content the index expects (cheap: the first page)."""
    meta = entry.meta()
    expected = {entry.ids: meta.ids_digest}
    for view in meta.views.values():
        expected[view.file] = view.digest
        if view.windows is not None:
            expected[view.windows] = view.digest
    for rel, want in expected.items():
        if binfile.header_of(files.raw(rel), files.display(rel)).get("digest") != want:
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
    text = seal.open(blob, meta_aad(name, entry.digest), where)
    try:
        return SetMeta.model_validate_json(text)
    except ValidationError as exc:
        raise ManifestError(f"{where}: its sealed metadata is malformed ({exc.errors()[0]['msg']})") from None


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
    windows = uses_windows(meta.rules)
    for view_name, view in meta.views.items():
        rels = [view.file, view.windows] if view.windows is not None else [view.file]
        # a derived view's window table is there when it holds window hashes (disk_write.windowed)
        wrong = not is_derived(view_name) and (view.windows is not None) != windows
        if any(rel not in entry.data for rel in rels) or wrong:
            raise ManifestError(f"{label}: its views' files do not match its rules and files", hint=hint)
    views = {view_name: _view(files, view, entry.items, seal) for view_name, view in meta.views.items()}
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
        n=meta.n,
        templates=(
            TemplateSettings(meta.templates.share, meta.templates.min_items) if meta.templates else None
        ),
        stored=StoredSet(files.root.resolve(), entry, meta.ids_digest, files),
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
