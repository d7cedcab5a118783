"""Per (unit, item): the longest shared run of masked words, and the reworded score.

A *unit* is one string of a training record (a segment), or for the reworded score one window
of its content words (``windows``). Both are whole-array passes over a batch of units.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from contam_guard.reword.hashing import Grams
from contam_guard.reword.index import RewordIndex
from contam_guard.text.hashing import GRAM_N

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

WINDOW_WORDS = 80
"""Content words per window of a long training string (a long document would otherwise cover
any item's words somewhere); windows overlap by half, so any stretch of up to 40 content
words (a long question's) lies whole in one."""


def longest_runs(grams: Grams, index: RewordIndex) -> tuple[IntArray, IntArray, IntArray]:
    """(unit, item, run) for every pair sharing a run of at least 5 masked words: ``run`` is
    the longest, exact as in the n-gram engine (r words are r - 4 consecutive shared 5-grams
    on one diagonal)."""
    units = grams.first.size - 1
    unit = np.repeat(np.arange(units, dtype=np.int64), np.diff(grams.first))
    position = np.arange(grams.hashes.size, dtype=np.int64) - grams.first[unit]
    query, entry = index.grams.lookup(grams.hashes)
    if query.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    u, up = unit[query], position[query]
    item, ip = index.grams.item[entry], index.grams.value[entry].astype(np.int64)
    diagonal = up - ip
    order = np.lexsort((up, diagonal, item, u))
    u, item, diagonal, up = u[order], item[order], diagonal[order], up[order]
    new = np.ones(u.size, dtype=np.bool_)
    new[1:] = (
        (u[1:] != u[:-1])
        | (item[1:] != item[:-1])
        | (diagonal[1:] != diagonal[:-1])
        | (up[1:] != up[:-1] + 1)
    )
    chain = np.cumsum(new) - 1
    length = np.bincount(chain)  # a chain of c shared 5-grams is a run of c + 4 words
    starts = np.flatnonzero(new)
    unit_of, item_of, run = best_per_pair(
        u[starts], item[starts], (length + GRAM_N - 1).astype(np.float64), index.items
    )
    return unit_of, item_of, run.astype(np.int64)


def windows(sizes: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """The content-word windows of units of ``sizes`` words: (unit, start, end) each."""
    step = WINDOW_WORDS // 2
    count = np.where(sizes <= WINDOW_WORDS, 1, (np.maximum(sizes - WINDOW_WORDS, 0) + step - 1) // step + 1)
    unit = np.repeat(np.arange(sizes.size, dtype=np.int64), count)
    k = np.arange(int(count.sum()), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    start = k * step
    end = np.minimum(start + WINDOW_WORDS, sizes[unit])
    return unit, start, end


RECORD_SHARE = 0.5
"""How much the record's own features that the item lacks count against a pair (Tversky's
beta): a rewording adds words, an unrelated problem adds a whole other story."""


def reworded_scores(
    hashes: NDArray[np.uint64], first: IntArray, index: RewordIndex
) -> tuple[IntArray, IntArray, FloatArray]:
    """(unit, item) for every pair sharing a content feature, with its score

        c / (I + 0.5 * (U - c)),

    the IDF-weighted size of what they share (c) over the item's (I) plus half of what the unit
    adds (U - c); weights are ln(1 + N / df) within the item's set and view. 1 for a unit holding
    exactly the item's features. ``hashes[first[u]:first[u + 1]]`` are unit u's distinct
    feature hashes."""
    units = first.size - 1
    unit = np.repeat(np.arange(units, dtype=np.int64), np.diff(first))
    out_unit, out_item, out_score = [], [], []
    for target in index.words:
        weight = target.weights(hashes)
        unit_weight = np.bincount(unit, weights=weight, minlength=units)
        query, entry = target.postings.lookup(hashes)
        if query.size == 0:
            continue
        key = unit[query] * index.items + target.postings.item[entry]
        pairs, inverse = np.unique(key, return_inverse=True)
        shared = np.bincount(inverse, weights=weight[query])
        u, item = pairs // index.items, pairs % index.items
        out_unit.append(u)
        out_item.append(item)
        out_score.append(shared / (index.item_weight[item] + RECORD_SHARE * (unit_weight[u] - shared)))
    if not out_unit:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    return np.concatenate(out_unit), np.concatenate(out_item), np.concatenate(out_score)


def best_per_pair(
    unit: IntArray, item: IntArray, value: FloatArray, items: int
) -> tuple[IntArray, IntArray, FloatArray]:
    """The largest ``value`` per (unit, item)."""
    key = unit * items + item
    pairs, inverse = np.unique(key, return_inverse=True)
    best = np.zeros(pairs.size, dtype=np.float64)
    np.maximum.at(best, inverse, value)
    return pairs // items, pairs % items, best
