"""Open an input file as a buffered binary stream: Git LFS pointers, path checks, decompression,
byte-order marks and transcoding (``io.readers.transcode``).

This is the one door every streaming reader goes through, so a Git LFS pointer is never read as
data (``contam_guard.io.lfs``), an empty ``.gz``/``.zst`` is never "no records", and UTF-16/32 text
reaches the line splitters as UTF-8. Every failure becomes an ``InputError`` naming the file.
Decompression, decoding and I/O failures surface while reading, so they are raised as
``StreamError`` (an ``InputError`` without a line); a reader that knows which line it was reading
re-raises with that line.
"""

from __future__ import annotations

import errno
import io
import lzma
import os
import stat
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import zstandard

from contam_guard.errors import InputError
from contam_guard.io import lfs
from contam_guard.io.readers import meter, transcode
from contam_guard.io.readers.base import Input, StreamError, Window
from contam_guard.io.readers.compression import ReadInto, compression_of, decompressor
from contam_guard.io.readers.member import Bounded, Member

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

UTF8_BOM = b"\xef\xbb\xbf"

# Large enough that per-chunk Python overhead is noise next to json.loads on every line.
_BUFFER_SIZE = 1 << 16
_STREAM_ERRORS = (OSError, EOFError, zlib.error, zstandard.ZstdError, lzma.LZMAError)
_CHECK_TOOL = {"gzip": "gzip", "zstd": "zstd", "xz": "xz", "bz2": "bzip2", "lz4": "lz4"}
"""The command that tests a file of each compression (``gzip -t FILE``), for the hint."""


@dataclass(frozen=True, slots=True)
class Source:
    """An opened input: ``stream`` starts after any BOM; ``head`` is a prefix of it.

    When ``transcoded_from`` is set, the stream holds the file's text re-encoded in the encoding
    the readers decode with (``transcode.stream_encoding``), and offsets into the stream are not
    file offsets (the transcoder reports undecodable bytes with their file offset itself).
    """

    stream: InputStream
    bom_length: int
    head: bytes
    first_offset: int = 0
    """File offset of the stream's first byte (non-zero when reading a ``Window``)."""
    first_line: int = 1
    first_record: int = 0
    transcoded_from: str | None = None
    """The file's encoding when it was transcoded (a UTF-16/32 BOM, sniffed, or asked for)."""


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

    def __init__(self, inner: ReadInto, display: str, kind: str, *, strip_bom: bool = True) -> None:
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
        self.bom_codec: str | None = None
        self._deferred: StreamError | None = None

    def readable(self) -> bool:
        return True

    def prime(self, size: int) -> None:
        """Read the first ``size`` bytes (at least enough to see a BOM) ahead of time; remove a
        leading BOM (UTF-8, UTF-16 or UTF-32), noting its codec.

        A read failure is kept for the read after the bytes before it, so a reader still gets
        every whole line before a corrupt part and names the line where reading stopped."""
        want = max(size, 4)
        chunks: list[bytes] = []
        got = 0
        while got < want:
            buf = bytearray(want - got)
            try:
                n = self._read_inner(buf)
            except StreamError as exc:
                self._deferred = exc
                break
            if not n:
                break
            chunks.append(bytes(buf[:n]))
            got += n
        data = b"".join(chunks)
        bom = transcode.bom_of(data) if self._strip_bom else None
        if bom is not None:
            self.bom_codec, self.bom_length = bom
            data = data[self.bom_length :]
        self._pending = data
        self.head = data[:size]

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        if self._pending:
            view = memoryview(buffer).cast("B")
            n = min(len(view), len(self._pending))
            view[:n] = self._pending[:n]
            self._pending = self._pending[n:]
            return n
        if self._deferred is not None:
            raise self._deferred
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
                tool = _CHECK_TOOL.get(self._kind)
                hint = "re-create or re-download the file" + (f"; `{tool} -t FILE` checks it" if tool else "")
            raise StreamError(self._display, problem, hint=hint) from exc


if TYPE_CHECKING:
    # BufferedReader is generic only to type checkers (not subscriptable at runtime on 3.11).
    InputStream: TypeAlias = io.BufferedReader[io.RawIOBase]


def check_regular_file(path: Path, display: str) -> os.stat_result:
    """Raise ``InputError`` unless ``path`` is an existing regular file (after symlinks) that is
    not a Git LFS pointer.

    Checked before opening because opening a FIFO would block forever.
    """
    info = _regular_status(path, display)
    # The last line of defence: whoever reads a file without ``io.lfs.content_of`` still never
    # reads a pointer's three lines as data.
    pointer = lfs.read_pointer(path, display) if info.st_size < lfs.MAX_POINTER_BYTES else None
    if pointer is not None:
        raise lfs.pointer_error(display, pointer, "contam-guard reads the real file only")
    return info


def _regular_status(path: Path, display: str) -> os.stat_result:
    """``path``'s status, or the ``InputError`` saying why it is not a regular file."""
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


def empty_container(kind: str, display: str) -> InputError:
    """The error for a zero-byte compressed file: no valid gzip or zstd stream is empty."""
    return InputError(
        display,
        f"empty {kind} file: not a valid {kind} stream (an empty text compresses to a few bytes)",
        hint="re-create or re-download the file; a zero-byte file is a failed write or download",
    )


def transcodes(path: Path, encoding: str) -> bool:
    """Whether ``open_binary`` reads the uncompressed file ``path`` through a transcoder (so its
    bytes are not the readers' bytes, and it cannot be cut into byte windows)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(transcode.SNIFF_BYTES)
        bom = transcode.bom_of(head)
        rest = head[bom[1] :] if bom else head
        return transcode.source_codec(rest, bom[0] if bom else None, encoding) is not None
    except (OSError, LookupError):
        return False  # the reader reports an unreadable file or an unknown encoding


@contextmanager
def open_binary(
    path: Input,
    display: str,
    *,
    head_size: int = 0,
    window: Window | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> Iterator[Source]:
    """Open ``path`` (a file, or a ``Member`` inside one) for reading bytes, decompressing by
    suffix (``io.readers.compression``: ``.gz``, ``.zst``, ``.xz``, ``.bz2``, ``.lz4``).

    A Git LFS pointer is replaced by the object's content when this clone has it, else it is an
    ``InputError`` with the fix (``contam_guard.io.lfs``). A zero-byte compressed file is an error.
    A leading BOM is removed; a file in UTF-16/32 (by BOM, by ``encoding``, or sniffed) is
    transcoded to ``transcode.stream_encoding(encoding)``, decoding with ``errors``.
    ``head_size`` bytes are read eagerly so a caller can sniff content (``Source.head``) before
    streaming. With a ``window`` (uncompressed files only), the stream holds just the bytes
    ``[window.start, window.end)``.
    """
    with _decompressed(path, display, window) as (inner, kind, first):
        guarded = _GuardedRaw(inner, display, kind, strip_bom=first.start == 0)
        guarded.prime(max(head_size, transcode.SNIFF_BYTES))
        # A later window continues a file whose start needed no transcoding (the planner checks).
        codec = None
        if first.start == 0:
            codec = transcode.source_codec(guarded.head, guarded.bom_codec, encoding)
        raw: io.RawIOBase = guarded
        head = guarded.head[:head_size]
        if codec is not None:
            if window is not None:
                raise InputError(display, f"internal: a {codec} file cannot be read in byte windows")
            transcoder = transcode.Transcoder(
                guarded,
                codec=codec,
                target=transcode.stream_encoding(encoding),
                errors=errors,
                display=display,
                offset=guarded.bom_length,
                error_type=StreamError,
            )
            head = transcoder.prime(head_size)  # a failure waits for the read that reaches it
            raw = transcoder
        stream = io.BufferedReader(raw, _BUFFER_SIZE)
        try:
            yield Source(
                stream=stream,
                bom_length=guarded.bom_length,
                head=head,
                first_offset=first.start,
                first_line=first.first_line,
                first_record=first.first_record,
                transcoded_from=codec,
            )
        finally:
            stream.close()


def head_of(path: Path, display: str, size: int = 8192) -> bytes:
    """The first ``size`` bytes of the file ``path`` as they are on disk (an LFS pointer's
    object's), for sniffing; an ``InputError`` when it cannot be read."""
    with lfs.content_of(path, display) as content:
        check_regular_file(content, display)
        try:
            with open(content, "rb") as handle:
                return handle.read(size)
        except OSError as exc:
            raise _os_error(display, exc) from exc


@dataclass(frozen=True, slots=True)
class RawSource:
    """An input's bytes after decompression, nothing else done to them (no BOM removed, no
    transcoding): what archives and sniffing read. ``head`` is a prefix, also in ``stream``."""

    stream: io.RawIOBase
    head: bytes
    compression: str


@contextmanager
def open_raw(path: Input, display: str, head_size: int) -> Iterator[RawSource]:
    """Open ``path`` for its decompressed bytes, the first ``head_size`` of them read ahead.

    Read errors (corrupt compression, I/O) are ``StreamError``s naming ``display``."""
    with _decompressed(path, display, None) as (inner, kind, _):
        guarded = _GuardedRaw(inner, display, kind, strip_bom=False)
        guarded.prime(head_size)
        try:
            yield RawSource(guarded, guarded.head, kind)
        finally:
            guarded.close()


@contextmanager
def _decompressed(path: Input, display: str, window: Window | None) -> Iterator[tuple[ReadInto, str, Window]]:
    """(the decompressed byte stream, the compression, the window read) of a file or member."""
    if isinstance(path, Member):
        if window is not None:
            raise InputError(display, "internal: an archive member cannot be read in windows")
        kind = compression_of(path.name)
        if kind != "plain" and not path.head:
            raise empty_container(kind, display)
        stream = path.open()
        with ExitStack() as stack:
            stack.callback(stream.close)
            inner: ReadInto = stream
            if kind != "plain":
                unpacked = decompressor(kind, stream)
                stack.callback(unpacked.close)
                inner = unpacked
                if path.limit is not None:  # inside an archive: a bomb must not inflate forever
                    inner = Bounded(unpacked.read, display, path.limit)
            yield inner, kind, Window(0, path.size or 0, 1, 0)
        return
    # One open of the file: whether it is a Git LFS pointer is read from the open file, which is
    # then the one read (opening it again could read other bytes, if the file changed meanwhile).
    with _opened(path, display) as (plain, info):
        pointer = lfs.pointer_in(plain, path, info.st_size, display)
        if pointer is None:
            with _decompressed_file(plain, info, path, display, window) as found:
                yield found
            return
    with lfs.object_of(path, display, pointer) as content, _opened(content, display) as (plain, info):
        if lfs.pointer_in(plain, content, info.st_size, display) is not None:
            raise lfs.pointer_error(display, pointer, "contam-guard reads the real file only")
        with _decompressed_file(plain, info, content, display, window) as found:
            yield found


@contextmanager
def _opened(path: Path, display: str) -> Iterator[tuple[io.FileIO, os.stat_result]]:
    """``path`` open for reading (unbuffered) and its status, once it is known to be a regular
    file (a FIFO would block the open forever)."""
    info = _regular_status(path, display)
    with ExitStack() as stack:
        try:
            handle = stack.enter_context(open(path, "rb", buffering=0))
        except OSError as exc:
            raise _os_error(display, exc) from exc
        yield handle, info


@contextmanager
def _decompressed_file(
    plain: io.FileIO, info: os.stat_result, path: Path, display: str, window: Window | None
) -> Iterator[tuple[ReadInto, str, Window]]:
    with ExitStack() as stack:
        kind = compression_of(path)
        if kind != "plain" and info.st_size == 0:
            raise empty_container(kind, display)
        inner: ReadInto
        first = Window(0, info.st_size, 1, 0) if window is None else window
        if window is not None:
            if kind != "plain":
                raise InputError(display, "internal: only an uncompressed file can be read in windows")
            plain.seek(window.start)
            inner = _Limited(plain, window.end - window.start)
        elif kind != "plain":
            unpacked = decompressor(kind, plain)
            stack.callback(unpacked.close)
            inner = unpacked
        else:
            inner = plain
        stack.callback(meter.METER.track(plain))  # progress: bytes read of the file on disk
        yield inner, kind, first
