"""An open-addressing hash table from 64-bit hashes to postings, built and probed in numba.

Sorting the manifest's hashes at every start (for binary search) cost seconds for a large
manifest; this table is built in one linear pass and probed in one pass per batch. Postings
that share a hash are chained (``chain[p]`` is the next posting with the same hash, -1 at the
end), in increasing posting order.
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray

EMPTY = -1


@numba.njit(cache=True, nogil=True)
def build(hashes: NDArray[np.uint64], slots: NDArray[np.int64], chain: NDArray[np.int64]) -> None:
    """Fill ``slots`` (size a power of two, all EMPTY) and ``chain`` (same size as ``hashes``)."""
    mask = np.uint64(slots.size - 1)
    for posting in range(hashes.size - 1, -1, -1):  # backwards, so chains run forwards
        value = hashes[posting]
        slot = value & mask  # the hashes are already well mixed: their low bits will do
        while slots[slot] != EMPTY and hashes[slots[slot]] != value:
            slot = (slot + np.uint64(1)) & mask
        chain[posting] = slots[slot]
        slots[slot] = posting


@numba.njit(cache=True, nogil=True)
def _first(hashes: NDArray[np.uint64], slots: NDArray[np.int64], value: np.uint64) -> int:
    mask = np.uint64(slots.size - 1)
    slot = value & mask
    while slots[slot] != EMPTY:
        if hashes[slots[slot]] == value:
            found: int = slots[slot]
            return found
        slot = (slot + np.uint64(1)) & mask
    return EMPTY


@numba.njit(cache=True, nogil=True)
def probe(
    hashes: NDArray[np.uint64],
    slots: NDArray[np.int64],
    chain: NDArray[np.int64],
    queries: NDArray[np.uint64],
    valid: NDArray[np.bool_],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every (query position, posting) pair whose hashes are equal, for the valid queries."""
    first = np.full(queries.size, EMPTY, dtype=np.int64)
    total = 0
    for q in range(queries.size):
        if valid[q]:
            posting = _first(hashes, slots, queries[q])
            first[q] = posting
            while posting != EMPTY:
                total += 1
                posting = chain[posting]
    where = np.empty(total, dtype=np.int64)
    found = np.empty(total, dtype=np.int64)
    k = 0
    for q in range(queries.size):
        posting = first[q]
        while posting != EMPTY:
            where[k] = q
            found[k] = posting
            k += 1
            posting = chain[posting]
    return where, found


def capacity(count: int) -> int:
    """A power of two with at least twice as many slots as entries (short probe runs)."""
    return 1 << max(4, int(2 * count).bit_length())
