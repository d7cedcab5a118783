"""A raw stream that serves bytes from chunks a subclass produces (decompressed, transcoded)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


class ChunkedRaw(io.RawIOBase):
    """Subclasses implement ``_fill``: set ``_out`` to the next chunk (``_pos`` to 0), or set
    ``_done`` at the end."""

    def __init__(self) -> None:
        super().__init__()
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
        raise NotImplementedError
