"""Threads beside the caller's for the compiled passes, which run without the GIL.

A pool is kept from one block to the next, and made again in a process forked since it was
made: a fork keeps none of a process's threads, and work handed to them would wait forever.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


class SparePool:
    """A pool of threads beside the caller's, made when first asked for."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._made_for = (0, 0)  # (threads, process)

    def of(self, threads: int) -> ThreadPoolExecutor:
        """A pool of ``threads`` threads (the one kept, when it has as many and is this process's)."""
        if self._pool is None or self._made_for != (threads, os.getpid()):
            from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 (large inputs only)

            if self._pool is not None and self._made_for[1] == os.getpid():
                self._pool.shutdown(wait=False)
            self._pool = ThreadPoolExecutor(threads, thread_name_prefix="contam-guard")
            self._made_for = (threads, os.getpid())
        return self._pool
