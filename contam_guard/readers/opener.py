"""Open an input file as a buffered binary stream: checks, decompression, BOM, decoding.

Every failure becomes an ``InputError`` naming the file. Decompression and I/O failures
surface while reading, so they are raised as ``StreamError`` (an ``InputError`` without a
line); a reader that knows which line it was reading re-raises with that line.
"""

from __future__ import annotations

import codecs
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
from typing import TYPE_CHECKING, Protocol

import zstandard

from contam_guard.errors import InputError
from contam_guard.readers.base import ReadOptions

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

UTF8_BOM = b"\xef\xbb\xbf"
COMPRESSED_SUFFIXES = (".gz", ".zst")

# Large enough that per-chunk Python overhead is noise next to json.loads on every line.
_BUFFER_SIZE = 1 << 16
# zstd's decompressobj has no output cap, so small input chunks bound the memory one
# highly compressible chunk can expand to.
_ZSTD_CHUNK = 1 << 14
_STREAM_ERRORS = (OSError, EOFError, zlib.error, zstandard.ZstdError)


class StreamError(InputError):
    """Reading failed mid-stream (corrupt or truncated compression, I/O error)."""


class _ReadInto(Protocol):
    def readinto(self, buffer: WriteableBuffer, /) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Source:
    """An opened input: ``stream`` starts after any BOM; ``head`` is a prefix of it."""

    stream: io.BufferedReader[_GuardedRaw]
    bom_length: int
    head: bytes


class _ZstdRaw(io.RawIOBase):
    """Decompress a zstd file frame by frame, detecting a truncated last frame.

    ``stream_reader`` silently returns short output for a truncated frame, so it cannot
    tell a cut-off download from a complete file; ``decompressobj`` exposes ``eof``.
    """

    def __init__(self, source: io.RawIOBase) -> None:
        super().__init__()
        self._source = source
        self._dctx = zstandard.ZstdDecompressor()
        self._dobj = self._dctx.decompressobj()
        self._in_frame = False
        self._out = b""
        self._pos = 0
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        while self._pos >= len(self._out):
            if self._done:
                return 0
            self._fill()
        view = memoryview(buffer).cast("B")
        n = min(len(view), len(self._out) - self._pos)
        view[:n] = self._out[self._pos : self._pos + n]
        self._pos += n
        return n

    def _fill(self) -> None:
        data = self._source.read(_ZSTD_CHUNK)
        if not data:
            if self._in_frame:
                raise EOFError("zstd data ends in the middle of a frame")
            self._done = True
            return
        parts: list[bytes] = []
        while data:
            self._in_frame = True
            parts.append(self._dobj.decompress(data))
            if not self._dobj.eof:
                break
            # Concatenated frames are one stream (like `zstd -d`): restart on the rest.
            data = self._dobj.unused_data
            self._dobj = self._dctx.decompressobj()
            self._in_frame = False
        self._out = b"".join(parts)
        self._pos = 0


class _GuardedRaw(io.RawIOBase):
    """Turn low-level read failures into ``StreamError`` and strip a leading UTF-8 BOM."""

    def __init__(self, inner: _ReadInto, display: str, kind: str) -> None:
        super().__init__()
        self._inner = inner
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
            n = self._read_inner(buf)
            if not n:
                break
            chunks.append(bytes(buf[:n]))
            got += n
        data = b"".join(chunks)
        if data.startswith(UTF8_BOM):
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
            return self._inner.readinto(buffer) or 0
        except _STREAM_ERRORS as exc:
            if self._kind == "plain":
                problem = f"read error: {exc}"
                hint = None
            else:
                problem = f"{self._kind} data is corrupt or truncated ({exc})"
                hint = f"re-create or re-download the file; `{self._kind} -t FILE` checks it"
            raise StreamError(self._display, problem, hint=hint) from exc


def compression_of(path: Path) -> str:
    """``"gzip"``, ``"zstd"`` or ``"plain"``, from the file name's last suffix."""
    name = path.name.lower()
    if name.endswith(".gz"):
        return "gzip"
    if name.endswith(".zst"):
        return "zstd"
    return "plain"


def check_regular_file(path: Path, display: str) -> None:
    """Raise ``InputError`` unless ``path`` is an existing regular file (after symlinks).

    Checked before opening because opening a FIFO would block forever.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise _os_error(display, exc) from exc
    if stat.S_ISDIR(mode):
        raise InputError(display, "is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise InputError(display, "is not a regular file (a device, FIFO or socket)")


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
def open_binary(path: Path, display: str, *, head_size: int = 0) -> Iterator[Source]:
    """Open ``path`` for reading bytes, decompressing ``.gz``/``.zst`` by suffix.

    A leading UTF-8 BOM is removed. ``head_size`` bytes are read eagerly so a caller can
    sniff content (``Source.head``) before streaming.
    """
    check_regular_file(path, display)
    with ExitStack() as stack:
        try:
            plain = stack.enter_context(open(path, "rb", buffering=0))
        except OSError as exc:
            raise _os_error(display, exc) from exc
        kind = compression_of(path)
        inner: _ReadInto
        if kind == "gzip":
            inner = stack.enter_context(gzip.GzipFile(fileobj=plain, mode="rb"))
        elif kind == "zstd":
            zraw = _ZstdRaw(plain)
            stack.callback(zraw.close)
            inner = zraw
        else:
            inner = plain
        guarded = _GuardedRaw(inner, display, kind)
        stream = io.BufferedReader(guarded, _BUFFER_SIZE)
        stack.callback(stream.close)
        guarded.prime(head_size)
        yield Source(stream=stream, bom_length=guarded.bom_length, head=guarded.head)


def check_encoding(options: ReadOptions, display: str, *, line_based: bool) -> None:
    """Reject an unknown encoding or error handler up front, with the flag to fix.

    Line-based readers split on the byte ``\\n``, so they need an encoding in which that
    byte is always a newline (any ASCII-compatible one; not UTF-16/32).
    """
    try:
        codecs.lookup_error(options.errors)
    except LookupError as exc:
        raise InputError(
            display,
            f"unknown decoding error handler {options.errors!r}",
            hint="--errors takes strict, replace, ignore, backslashreplace or surrogateescape",
        ) from exc
    try:
        ok = b"a\nb".decode(options.encoding) == "a\nb"
    except LookupError as exc:
        raise InputError(
            display,
            f"unknown text encoding {options.encoding!r}",
            hint="pass a Python codec name to --encoding, e.g. utf-8, latin-1, cp1252",
        ) from exc
    except UnicodeError:
        ok = False
    if line_based and not ok:
        raise InputError(
            display,
            f"encoding {options.encoding!r} is not supported for line-based formats",
            hint="convert the file to UTF-8 first, e.g. with iconv",
        )


def decode_failure(
    display: str, exc: UnicodeDecodeError, *, line: int, line_offset: int, encoding: str
) -> InputError:
    """The error for an undecodable byte in a line that starts at file offset ``line_offset``."""
    offset = line_offset + exc.start
    bad = exc.object[exc.start : exc.start + 1]
    return InputError(
        display,
        f"cannot decode byte {bytes(bad)!r} at byte offset {offset} as {encoding} ({exc.reason})",
        line=line,
        hint="pass --encoding (e.g. latin-1) if the file is not UTF-8, "
        "or --errors replace to substitute undecodable bytes",
    )
