"""A zstd decompressing raw stream that notices truncation."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import zstandard

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

# zstd's decompressobj has no output cap, so small input chunks bound the memory one
# highly compressible chunk can expand to.
_ZSTD_CHUNK = 1 << 14


class ZstdRaw(io.RawIOBase):
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
