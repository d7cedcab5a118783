"""How many threads a scan's compiled passes may use, and the pool of those beside the caller's.

The prefilter and the rewording stage run without the GIL and take turns on a block, so one
``Threads`` serves a whole scan: its count says how far a block is cut, its pool runs the parts
beside the caller's. The pool is kept from one block to the next, and made again in a process
forked since it was made: a fork keeps none of a process's threads, and work handed to them would
wait forever.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


class Threads:
    """``count`` threads in all, the caller's included (1: the caller's only)."""

    def __init__(self, count: int = 1) -> None:
        self.count = count
        self._pool: ThreadPoolExecutor | None = None
        self._made_for = (0, 0)  # (threads beside the caller's, process)

    @property
    def count(self) -> int:
        return self._count

    @count.setter
    def count(self, count: int) -> None:
        if count < 1:
            raise ValueError(f"threads must be 1 or more, not {count}")
        self._count = count

    def pool(self) -> ThreadPoolExecutor:
        """The ``count - 1`` threads beside the caller's (made when first asked for)."""
        beside = max(self.count - 1, 1)
        if self._pool is None or self._made_for != (beside, os.getpid()):
            from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 (large inputs only)

            if self._pool is not None and self._made_for[1] == os.getpid():
                self._pool.shutdown(wait=False)
            self._pool = ThreadPoolExecutor(beside, thread_name_prefix="contam-guard")
            self._made_for = (beside, os.getpid())
        return self._pool
