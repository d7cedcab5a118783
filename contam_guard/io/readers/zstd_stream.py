"""A zstd decompressing raw stream that notices truncation."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import zstandard

from contam_guard.io.readers.chunked import ChunkedRaw

if TYPE_CHECKING:
    pass

# zstd's decompressobj has no output cap, so small input chunks bound the memory one
# highly compressible chunk can expand to.
_ZSTD_CHUNK = 1 << 14


class ZstdRaw(ChunkedRaw):
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
