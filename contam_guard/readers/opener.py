"""Open an input file as a buffered binary stream: path checks, decompression, BOM.

Every failure becomes an ``InputError`` naming the file. Decompression and I/O failures
surface while reading, so they are raised as ``StreamError`` (an ``InputError`` without a
line); a reader that knows which line it was reading re-raises with that line.
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import stat
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

import zstandard

from contam_guard.errors import InputError
from contam_guard.readers.base import Window
from contam_guard.readers.zstd_stream import ZstdRaw

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

UTF8_BOM = b"\xef\xbb\xbf"
COMPRESSED_SUFFIXES = (".gz", ".zst")

# Large enough that per-chunk Python overhead is noise next to json.loads on every line.
_BUFFER_SIZE = 1 << 16
_STREAM_ERRORS = (OSError, EOFError, zlib.error, zstandard.ZstdError)


class StreamError(InputError):
    """Reading failed mid-stream (corrupt or truncated compression, I/O error)."""


class _ReadInto(Protocol):
    def readinto(self, buffer: WriteableBuffer, /) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Source:
    """An opened input: ``stream`` starts after any BOM; ``head`` is a prefix of it."""

    stream: InputStream
    bom_length: int
    head: bytes
    first_offset: int = 0
    """File offset of the stream's first byte (non-zero when reading a ``Window``)."""
    first_line: int = 1
    first_record: int = 0


class _Limited(io.RawIOBase):
    """At most ``remaining`` bytes of a raw file, from its current position."""

    def __init__(self, raw: io.FileIO, remaining: int) -> None:
        super().__init__()
        self._raw = raw
        self._remaining = remaining

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        if self._remaining <= 0:
            return 0
        n = self._raw.readinto(view[: min(len(view), self._remaining)]) or 0
        self._remaining -= n
        return n


class _GuardedRaw(io.RawIOBase):
    """Turn low-level read failures into ``StreamError`` and strip a leading UTF-8 BOM."""

    def __init__(self, inner: _ReadInto, display: str, kind: str, *, strip_bom: bool = True) -> None:
        super().__init__()
        self._strip_bom = strip_bom
        # readinto1: a buffered inner stream (gzip) must not read far ahead, or corruption
        # surfaces lines before the data that is actually missing.
        self._readinto = inner.readinto1 if isinstance(inner, io.BufferedIOBase) else inner.readinto
        self._display = display
        self._kind = kind
        self._pending = b""
        self.head = b""
        self.bom_length = 0

    def readable(self) -> bool:
        return True

    def prime(self, size: int) -> None:
        """Read the first ``size`` bytes (at least enough to see a BOM) ahead of time."""
        want = max(size, len(UTF8_BOM))
        chunks: list[bytes] = []
        got = 0
        while got < want:
            buf = bytearray(want - got)
            try:
                n = self._read_inner(buf)
            except StreamError as exc:
                line = b"".join(chunks).count(b"\n") + 1
                raise InputError(self._display, exc.problem, line=line, hint=exc.hint) from exc
            if not n:
                break
            chunks.append(bytes(buf[:n]))
            got += n
        data = b"".join(chunks)
        if self._strip_bom and data.startswith(UTF8_BOM):
            data = data[len(UTF8_BOM) :]
            self.bom_length = len(UTF8_BOM)
        self._pending = data
        self.head = data[:size]

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        if self._pending:
            view = memoryview(buffer).cast("B")
            n = min(len(view), len(self._pending))
            view[:n] = self._pending[:n]
            self._pending = self._pending[n:]
            return n
        return self._read_inner(buffer)

    def _read_inner(self, buffer: WriteableBuffer) -> int:
        try:
            return self._readinto(buffer) or 0
        except _STREAM_ERRORS as exc:
            if self._kind == "plain":
                problem = f"read error: {exc}"
                hint = None
            else:
                problem = f"{self._kind} data is corrupt or truncated ({exc})"
                hint = f"re-create or re-download the file; `{self._kind} -t FILE` checks it"
            raise StreamError(self._display, problem, hint=hint) from exc


if TYPE_CHECKING:
    # BufferedReader is generic only to type checkers (not subscriptable at runtime on 3.11).
    InputStream: TypeAlias = io.BufferedReader[_GuardedRaw]


def compression_of(path: Path) -> str:
    """``"gzip"``, ``"zstd"`` or ``"plain"``, from the file name's last suffix."""
    name = path.name.lower()
    if name.endswith(".gz"):
        return "gzip"
    if name.endswith(".zst"):
        return "zstd"
    return "plain"


def check_regular_file(path: Path, display: str) -> os.stat_result:
    """Raise ``InputError`` unless ``path`` is an existing regular file (after symlinks).

    Checked before opening because opening a FIFO would block forever.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _os_error(display, exc) from exc
    if stat.S_ISDIR(info.st_mode):
        raise InputError(display, "is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(display, "is not a regular file (a device, FIFO or socket)")
    return info


def _os_error(display: str, exc: OSError) -> InputError:
    reasons = {
        errno.ENOENT: "no such file",
        errno.EISDIR: "is a directory, not a file",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ELOOP: "symlink loop (too many levels of symbolic links)",
        errno.ENOTDIR: "no such file (a parent path is not a directory)",
    }
    problem = reasons.get(exc.errno or 0, f"cannot open: {exc.strerror or exc}")
    return InputError(display, problem)


@contextmanager
def open_binary(
    path: Path, display: str, *, head_size: int = 0, window: Window | None = None
) -> Iterator[Source]:
    """Open ``path`` for reading bytes, decompressing ``.gz``/``.zst`` by suffix.

    A leading UTF-8 BOM is removed. ``head_size`` bytes are read eagerly so a caller can
    sniff content (``Source.head``) before streaming. With a ``window`` (uncompressed files
    only), the stream holds just the bytes ``[window.start, window.end)``.
    """
    check_regular_file(path, display)
    with ExitStack() as stack:
        try:
            plain = stack.enter_context(open(path, "rb", buffering=0))
        except OSError as exc:
            raise _os_error(display, exc) from exc
        kind = compression_of(path)
        inner: _ReadInto
        if window is not None:
            if kind != "plain":
                raise InputError(display, "internal: only an uncompressed file can be read in windows")
            plain.seek(window.start)
            limited = _Limited(plain, window.end - window.start)
            guarded = _GuardedRaw(limited, display, kind, strip_bom=window.start == 0)
            stream = io.BufferedReader(guarded, _BUFFER_SIZE)
            stack.callback(stream.close)
            guarded.prime(head_size)
            yield Source(
                stream=stream,
                bom_length=guarded.bom_length,
                head=guarded.head,
                first_offset=window.start,
                first_line=window.first_line,
                first_record=window.first_record,
            )
            return
        if kind == "gzip":
            inner = stack.enter_context(gzip.GzipFile(fileobj=plain, mode="rb"))
        elif kind == "zstd":
            zraw = ZstdRaw(plain)
            stack.callback(zraw.close)
            inner = zraw
        else:
            inner = plain
        guarded = _GuardedRaw(inner, display, kind)
        stream = io.BufferedReader(guarded, _BUFFER_SIZE)
        stack.callback(stream.close)
        guarded.prime(head_size)
        yield Source(stream=stream, bom_length=guarded.bom_length, head=guarded.head)
