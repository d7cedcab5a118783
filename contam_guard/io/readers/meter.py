"""How many bytes of their files the readers have read, for a progress bar with a total.

Every streaming reader opens its file through ``io.readers.opener`` (the one door), which registers
the file's handle here while it is open. ``bytes_read`` sums, over the files opened in this
process, the position reached in each: bytes on disk, so a ``.gz``/``.zst`` file counts its
compressed bytes, and its total is its size on disk too. A progress bar compares the change in
``bytes_read`` with ``input_bytes`` of the files it was given. Parquet, Arrow, ORC and zip files
are read from their path by pyarrow or zipfile, so they are neither counted nor in the total.
Nothing but progress reads it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import BinaryIO


class ByteMeter:
    """Bytes read from files, while open (their position) and after (their last position).

    Progress must never break a read: a handle that cannot say its position is not counted.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = 0
        self._open: dict[int, tuple[BinaryIO, int]] = {}

    def track(self, handle: BinaryIO) -> Callable[[], None]:
        """Count ``handle``'s reads from its current position on; returns the function to call
        before the handle is closed."""
        start = _position(handle)
        if start is None:
            return _untracked
        key = id(handle)
        with self._lock:
            self._open[key] = (handle, start)

        def untrack() -> None:
            with self._lock:
                self._open.pop(key, None)
                self._closed += max((_position(handle) or start) - start, 0)

        return untrack

    def bytes_read(self) -> int:
        with self._lock:
            return self._closed + sum(max((_position(h) or s) - s, 0) for h, s in self._open.values())


def _position(handle: BinaryIO) -> int | None:
    tell = getattr(handle, "tell", None)
    try:
        return int(tell()) if tell is not None else None
    except (OSError, ValueError):
        return None


def _untracked() -> None:
    """Nothing to stop counting."""


METER = ByteMeter()
"""The meter ``io.readers.opener`` reports to."""


def bytes_read() -> int:
    """Bytes of their files the readers have read so far in this process."""
    return METER.bytes_read()
