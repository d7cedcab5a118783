"""The reworded rule's weights: each content feature's IDF in its (set, view), and each item's.

A feature's weight is ln(1 + N / df) among the N items of its view (df: the items holding it).
An item's weight is the sum of its features' weights, summed in hash order (the order of the
view's stored table), so that it is the same number whether ``register`` stored it
(``ViewData.item_weights``) or a scan computes it from the table (a view stored without it).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from contam_guard.io.manifest.packed import PackedTable

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def idf(items: int, df: FloatArray) -> FloatArray:
    """ln(1 + N / df): a feature's weight in a view of N items (df = 1/2 for one no item has).

    Computed once per distinct df with the C library's ``log1p`` (``math.log1p``): numpy's
    vectorised ``log1p`` may round the last bit differently from one array position to the
    next (its SIMD loops and its scalar tail are different functions), and the scan's compiled
    and numpy paths must sum the very same weights."""
    values, inverse = np.unique(df, return_inverse=True)
    table = np.array([math.log1p(items / value) for value in values.tolist()], dtype=np.float64)
    return table[inverse.reshape(-1)] if values.size else np.zeros(0, dtype=np.float64)


def runs(hashes: NDArray[np.uint64]) -> tuple[BoolArray, IntArray, FloatArray]:
    """Of sorted feature hashes (one entry per item holding each): per entry, whether it starts
    its feature's run and the feature's number; per feature, its df (each item's features are
    distinct, so a feature's entries are the items holding it)."""
    new = np.ones(hashes.size, dtype=np.bool_)
    new[1:] = hashes[1:] != hashes[:-1]
    number = np.cumsum(new, dtype=np.int64) - 1
    return new, number, np.bincount(number, minlength=int(new.sum())).astype(np.float64)


def item_weights(table: PackedTable, items: int) -> FloatArray:
    """Each item's weight, from its view's feature table (hash -> item; decoded, not kept)."""
    _, number, df = runs(table.decode_hashes())
    item = table.decode_payloads().astype(np.int64)
    weight = idf(items, df[number])
    # bincount sums each item's weights in entry (hash) order
    return np.asarray(np.bincount(item, weights=weight, minlength=items), dtype=np.float64)
