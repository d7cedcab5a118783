"""The binary files of one index, each opened and mapped once, when the manifest is loaded.

A mapping costs no reads; a file that a writer removes later stays the one this process reads,
so a command keeps the manifest it started with (``disk_write.py`` never replaces a file under
its name, and removes the old ones only after the new index is in place). A file missing when
it is opened raises ``ChangedError``: ``store.load`` reads the index again, and says the file
is missing only when the index did not change meanwhile. Only regular files are opened (a FIFO,
a device or a symlink loop is an error, never a hang).
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import stat
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import xxhash

from contam_guard.errors import ManifestError
from contam_guard.io import lfs
from contam_guard.io.manifest.binfile import RESTORE_FILE
from contam_guard.io.manifest.index_text import aad
from contam_guard.io.manifest.schema import DataFile, Index, SetEntry, SetMeta
from contam_guard.io.manifest.sealing import SealKey
from contam_guard.io.safe_read import file_kind

_CHUNK = 1 << 20


class ChangedError(Exception):
    """A file is not what the index says: replaced or removed while the manifest was being read
    (``store.load`` reads again), or damaged (``error``, raised when the index is unchanged)."""

    def __init__(self, rel: str, error: ManifestError | None = None) -> None:
        super().__init__(rel)
        self.error = error


def file_digest(read: Callable[[int, int], bytes], size: int) -> str:
    """``digest`` of a file's bytes as one part, read in chunks (never all in memory, never mapped)."""
    hasher = xxhash.xxh3_128()
    hasher.update(size.to_bytes(8, "little"))
    for offset in range(0, size, _CHUNK):
        hasher.update(read(min(_CHUNK, size - offset), offset))
    return hasher.hexdigest()


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


@dataclass(frozen=True)
class StoredSet:
    """Where a set read from a manifest lies (``GoldenSet.stored``): saving it there again keeps
    its view files when they still hold what it would write."""

    root: Path
    entry: SetEntry
    meta: SetMeta
    files: Files

    def damaged(self) -> list[str]:
        """The files of the set that no longer have the digest the index records."""
        entries = sorted(self.entry.data.items())
        return [rel for rel, data in entries if self.files.digest_of(rel) != data.digest]


def _close(fds: dict[str, int]) -> None:
    for fd in fds.values():
        with contextlib.suppress(OSError):
            os.close(fd)


def _open(root: Path, rel: str, data: DataFile) -> tuple[int, memoryview]:
    """The file open and mapped, after checking it is a regular file of the size the index says
    (and no Git LFS pointer)."""
    path = root / rel
    display = str(path)
    hint = RESTORE_FILE.format(display=display)
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        missing = ManifestError(
            f"{display}: missing: the manifest's index lists it ({data.bytes:,} bytes)", hint=hint
        )
        raise ChangedError(rel, missing) from None
    except OSError as exc:
        loop = " (a symlink loop)" if exc.errno == errno.ELOOP else ""
        raise ManifestError(
            f"{display}: cannot open this set file: {exc.strerror or exc}{loop}", hint=hint
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ManifestError(
                f"{display}: a set file that is not a regular file ({file_kind(info.st_mode)})", hint=hint
            )
        size = info.st_size
        if size <= lfs.MAX_POINTER_BYTES and lfs.parse_pointer(os.pread(fd, size, 0), display) is not None:
            raise ManifestError(
                f"{display}: a Git LFS pointer, not the file: its object is not in this clone",
                hint=lfs.PULL_HINT,
            )
        if size != data.bytes or size == 0:
            raise ManifestError(
                f"{display}: {size:,} bytes, but the manifest's index says {data.bytes:,} (damaged, "
                "or changed without the index)",
                hint=hint,
            )
        mapped = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        if hasattr(mmap, "MADV_RANDOM"):  # lookups read here and there: no read-ahead
            mapped.madvise(mmap.MADV_RANDOM)
    except OSError as exc:
        os.close(fd)
        raise ManifestError(
            f"{display}: cannot read this set file: {exc.strerror or exc}", hint=hint
        ) from None
    except BaseException:
        os.close(fd)
        raise
    return fd, memoryview(mapped)
