"""Small array helpers the engine needs more than once."""

from __future__ import annotations

import mmap
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

Scalar = TypeVar("Scalar", bound=np.generic)


def sorted_unique(values: NDArray[Scalar]) -> NDArray[Scalar]:
    """The distinct values of a 1-D array, sorted: ``np.unique(values)``.

    Written out because numpy 2's ``np.unique`` imports ``numpy.ma`` on its first call (to
    check for masked arrays), about 50 ms that a pre-commit scan of a small file should not pay.
    """
    ordered = np.sort(values, kind="stable")
    return ordered[_run_starts(ordered)]


def first_of_each(values: NDArray[Scalar]) -> tuple[NDArray[Scalar], NDArray[np.intp]]:
    """The distinct values of a 1-D array, sorted, and where each first occurs:
    ``np.unique(values, return_index=True)`` (without numpy.ma, as ``sorted_unique``)."""
    order = np.argsort(values, kind="stable")
    starts = _run_starts(values[order])
    return values[order[starts]], order[starts]


def _run_starts(ordered: NDArray[Scalar]) -> NDArray[np.bool_]:
    """Whether each value of a sorted array differs from the one before it (the first does)."""
    starts = np.ones(ordered.size, dtype=np.bool_)
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    return starts


def members(values: NDArray[Scalar], wanted: NDArray[Scalar]) -> NDArray[np.bool_]:
    """Whether each of ``values`` is one of ``wanted``: ``np.isin(values, wanted)`` (which goes
    through ``np.unique``, and so numpy.ma)."""
    table = np.sort(wanted)
    if table.size == 0:
        return np.zeros(values.size, dtype=np.bool_)
    at = np.minimum(np.searchsorted(table, values), table.size - 1)
    return np.asarray(table[at] == values, dtype=np.bool_)


def lex_order(keys: tuple[NDArray[np.int64], ...]) -> NDArray[np.intp]:
    """``np.lexsort(keys)`` (the last key sorts first; stable), by one stable argsort of the keys
    packed into one int64 when their ranges fit in 62 bits: several times faster than lexsort.
    """
    if keys[0].size == 0:
        return np.zeros(0, dtype=np.intp)
    lows = [int(key.min()) for key in keys]
    widths = [(int(key.max()) - low).bit_length() for key, low in zip(keys, lows)]
    if sum(widths) > 62:
        return np.lexsort(keys)
    packed = np.zeros(keys[0].size, dtype=np.int64)
    for key, low, width in zip(reversed(keys), reversed(lows), reversed(widths)):
        packed <<= width
        packed |= key - low
    return np.argsort(packed, kind="stable")


def sparse_zeros(size: int, dtype: type[Scalar]) -> NDArray[Scalar]:
    """A writable array of zeros whose memory is taken page by page as it is written.

    ``np.zeros`` asks for huge pages for arrays of a few MB or more, so that writing one value
    makes 2 MB resident: a manifest-sized array of totals that a small scan writes in a few
    places would cost tens of MB. An anonymous mapping gets ordinary 4 KB pages."""
    nbytes = size * np.dtype(dtype).itemsize
    if nbytes < 1 << 20:
        return np.zeros(size, dtype=dtype)
    # Private: reading a page never written maps the shared zero page, which costs nothing
    # (a shared anonymous mapping would allocate it).
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    memory = mmap.mmap(-1, nbytes, flags=flags) if flags else mmap.mmap(-1, nbytes)
    return np.frombuffer(memory, dtype=dtype, count=size)
