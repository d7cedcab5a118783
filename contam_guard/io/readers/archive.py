"""zip and tar archives (``.tar``, ``.tar.gz``/``.tgz``, ``.tar.xz``, ``.tar.bz2``, ``.tar.zst``,
``.tar.lz4``), read member by member with Python's ``zipfile`` and ``tarfile``.

Each member is read as a file of its own (its format from its name, else sniffed from its bytes)
and its records are named ``ARCHIVE:MEMBER`` (``data.tar.gz:inner/train.jsonl``; an archive
inside an archive adds another ``:``). Nothing is ever extracted to disk: a member's name is
only shown, so names that climb out (``../x``, ``/etc/x``) cannot write or read elsewhere. A tar
archive is read as a stream, in one pass; its links (symbolic or hard) are not read: they hold no
data of their own. Hostile shapes end in an ``InputError`` (exit 2, or a notice under
``--skip-unreadable``), never in a hang: a member larger than ``member.MAX_MEMBER_BYTES`` (a zip
bomb; a zip member's size is checked from its header, before any inflating), archives nested
deeper than ``member.MAX_DEPTH``, an encrypted zip member.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from contam_guard.errors import InputError
from contam_guard.io import lfs
from contam_guard.io.readers import notes
from contam_guard.io.readers.base import Input, ReadOptions, Record, StreamError
from contam_guard.io.readers.compression import compression_of
from contam_guard.io.readers.member import (
    BOMB_FLOOR,
    HEAD_BYTES,
    MAX_DEPTH,
    MAX_RATIO,
    SEPARATOR,
    Bounded,
    Member,
    shown_name,
    too_large,
)
from contam_guard.io.readers.opener import check_regular_file, open_raw

MemberReader = Callable[[Member, ReadOptions], Iterator[Record]]
"""How a member is read (``readers.read_member``: by its name's format, else sniffed)."""
_SPOOL_BYTES = 64 << 20
"""A member that needs random access (a zip in a tar, a Parquet file) is held in memory up to
this size, in a temporary file beyond it."""
_BUFFER = 1 << 16
_TORCH = "PyTorch checkpoint (model weights)"


def depth_of(path: Input) -> int:
    """Archives ``path`` lies in (0: a file on disk)."""
    return path.depth if isinstance(path, Member) else 0


def _members_depth(path: Input, display: str) -> int:
    depth = depth_of(path) + 1
    if depth > MAX_DEPTH:
        raise InputError(
            display,
            f"an archive nested more than {MAX_DEPTH} archives deep; contam-guard reads "
            f"{MAX_DEPTH} levels of archives inside one another",
            hint="extract the outer archives and scan what they hold",
        )
    return depth


@contextmanager
def seekable(path: Input, display: str, limit: int) -> Iterator[io.BufferedIOBase | Path]:
    """``path`` where it can be read at random (an uncompressed file on disk, LFS objects
    resolved), or its decompressed bytes (at most ``limit``) in a temporary spool (a member, a
    ``.gz`` file)."""
    if isinstance(path, Path) and compression_of(path) == "plain":
        with lfs.content_of(path, display) as content:
            check_regular_file(content, display)
            yield content
        return
    with open_raw(path, display, 0) as raw, _spooled() as spool:
        bounded = Bounded(raw.stream.read, display, limit)
        while chunk := bounded.read(_BUFFER):
            spool.write(chunk)
        spool.seek(0)
        yield spool


def _spooled() -> io.BufferedRandom:
    import tempfile  # noqa: PLC0415 (only for members that need random access)

    spool: io.BufferedRandom = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # type: ignore[assignment]  # noqa: SIM115 (the caller's with closes it)
    return spool


def read_zip(path: Input, display: str, options: ReadOptions, read_member: MemberReader) -> Iterator[Record]:
    """Every member of a zip archive, in the order of its central directory."""
    depth = _members_depth(path, display)
    limit = options.max_member_bytes
    with seekable(path, display, limit) as where:
        try:
            archive = zipfile.ZipFile(where)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise InputError(display, f"not a zip archive, or corrupt: {exc}") from exc
        with archive:
            infos = [info for info in archive.infolist() if not info.is_dir()]
            if _is_torch(infos):
                notes.NOTES.not_text(display, _TORCH)
                return
            for info in infos:
                name = info.filename
                shown = f"{display}{SEPARATOR}{shown_name(name)}"
                if info.flag_bits & 0x1:
                    raise InputError(shown, "an encrypted zip member: contam-guard cannot read it")
                if info.file_size > limit or (
                    info.file_size > BOMB_FLOOR and info.file_size > MAX_RATIO * info.compress_size
                ):
                    raise too_large(shown, min(limit, MAX_RATIO * info.compress_size))
                try:
                    handle = archive.open(info)
                except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
                    raise InputError(shown, f"cannot read this zip member: {exc}") from exc
                with handle:
                    yield from read_member(
                        _member(name, shown, handle, depth, info.file_size, limit), options
                    )


def _is_torch(infos: list[zipfile.ZipInfo]) -> bool:
    """``torch.save``'s zip: ``NAME/data.pkl`` and the tensors' storages under ``NAME/data/``."""
    names = [info.filename for info in infos]
    return any(n.endswith("/data.pkl") or n == "data.pkl" for n in names) and any(
        "/data/" in n for n in names
    )


def read_tar(path: Input, display: str, options: ReadOptions, read_member: MemberReader) -> Iterator[Record]:
    """Every regular file of a tar archive (compressed as its name says, or not), in order."""
    depth = _members_depth(path, display)
    with open_raw(path, display, 0) as raw:
        stream = io.BufferedReader(raw.stream, _BUFFER)
        try:
            archive = tarfile.open(fileobj=stream, mode="r|")  # noqa: SIM115 (closed by the with below)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise _tar_error(display, exc) from exc
        with archive:
            while True:
                try:
                    info = archive.next()
                except (tarfile.TarError, OSError, EOFError) as exc:
                    raise _tar_error(display, exc) from exc
                if info is None:
                    return
                if not info.isreg():
                    continue  # folders, links (no data of their own), devices, FIFOs
                shown = f"{display}{SEPARATOR}{shown_name(info.name)}"
                if info.size > options.max_member_bytes:
                    raise too_large(shown, options.max_member_bytes)
                handle = archive.extractfile(info)
                if handle is None:
                    continue
                member = _member(info.name, shown, handle, depth, info.size, options.max_member_bytes)
                yield from read_member(member, options)


def _tar_error(display: str, exc: BaseException) -> InputError:
    if isinstance(exc, StreamError):
        return exc
    return InputError(
        display,
        f"not a tar archive, or corrupt or truncated: {exc}",
        hint="re-create or re-download the file; `tar -tf FILE` checks it",
    )


class _MemberRaw(io.RawIOBase):
    """A member's file object as a raw stream whose failures name the member."""

    def __init__(self, handle: io.BufferedIOBase | tarfile.ExFileObject, display: str) -> None:
        super().__init__()
        self._handle = handle
        self._display = display
        self._pending = b""

    def readable(self) -> bool:
        return True

    def prime(self, size: int) -> bytes:
        """Read ``size`` bytes ahead (served again first): the member's head."""
        parts, got = [], 0
        while got < size:
            chunk = self._read(size - got)
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        self._pending = b"".join(parts)
        return self._pending

    def _read(self, size: int) -> bytes:
        try:
            return self._handle.read(size)
        except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, ValueError) as exc:
            raise StreamError(
                self._display,
                f"the archive member is corrupt or truncated ({exc})",
                hint="re-create or re-download the archive",
            ) from exc

    def readinto(self, buffer: memoryview | bytearray, /) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        if self._pending:
            n = min(len(view), len(self._pending))
            view[:n] = self._pending[:n]
            self._pending = self._pending[n:]
            return n
        data = self._read(len(view))
        view[: len(data)] = data
        return len(data)


def _member(name: str, display: str, handle: object, depth: int, size: int, limit: int) -> Member:
    raw = _MemberRaw(handle, display)  # type: ignore[arg-type]
    head = raw.prime(HEAD_BYTES)
    stream = Bounded(raw.read, display, limit)
    return Member(PurePosixPath(name).name, display, stream, head, depth=depth, size=size, limit=limit)
