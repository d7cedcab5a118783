"""Per (unit, item): the longest shared run of masked words, and the reworded score.

A *unit* is one string of a training record (a segment), or for the reworded score one window
of its content words (``windows``). Both are whole-array passes over a batch of units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.arrays import lex_order
from contam_guard.core.reword.hashing import Grams
from contam_guard.core.reword.index import RewordIndex, TargetWords
from contam_guard.core.spec.hashing import GRAM_N

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
    query, posting = index.grams.lookup(grams.hashes, np.ones(grams.hashes.size, dtype=np.bool_))
    unit_of, item_of, run, _ = runs_from_hits(unit[query], position[query], posting, index)
    return unit_of, item_of, run


def runs_from_hits(
    unit: IntArray, at: IntArray, posting: IntArray, index: RewordIndex
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """(unit, item, run, start) of every (unit, item) pair sharing a run of at least 5 masked
    words, from its masked 5-grams found (``at``: the 5-gram's position in its unit): the longest
    run and where it starts in the unit (the first such, in masked words)."""
    if unit.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    up = at
    item, ip = index.grams.item_and_position(posting)
    diagonal = up - ip
    order = lex_order((up, diagonal, item, unit))
    u, item, diagonal, up = unit[order], item[order], diagonal[order], up[order]
    new = np.ones(u.size, dtype=np.bool_)
    new[1:] = (
        (u[1:] != u[:-1])
        | (item[1:] != item[:-1])
        | (diagonal[1:] != diagonal[:-1])
        | (up[1:] != up[:-1] + 1)
    )
    chain = np.cumsum(new) - 1
    length = np.bincount(chain) + GRAM_N - 1  # a chain of c shared 5-grams is a run of c + 4 words
    starts = np.flatnonzero(new)
    u, item, start = u[starts], item[starts], up[starts]
    # the longest run per (unit, item), the first in the unit among equals
    order = lex_order((start, -length, item, u))
    u, item, length, start = u[order], item[order], length[order], start[order]
    first = np.ones(u.size, dtype=np.bool_)
    first[1:] = (u[1:] != u[:-1]) | (item[1:] != item[:-1])
    return u[first], item[first], length[first].astype(np.int64), start[first]


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


SLACK = 1e-6
"""Relative margin of every bound below: rounding can only make the filter keep more."""


@dataclass(frozen=True)
class Prefixes:
    """One (set, view)'s content features arranged for prefix filtering at ``floor``.

    A pair's score c / (I + 0.5 (U - c)) is at most c / I, so a pair reaching the floor t shares
    c >= t I. With an item's features sorted heaviest (rarest) first, its *prefix* is the
    shortest leading run whose remaining features weigh less than t I: a string sharing none of
    the prefix cannot reach t (the set-similarity-join prefix filter). Strings are looked up in
    the prefixes only, and the exact score is computed for the pairs that may reach t."""

    target: TargetWords
    floor: float
    starts: IntArray
    """The prefix entries of feature number f (its place in ``target.distinct``) are
    ``starts[f]:starts[f + 1]`` of ``item`` and ``weight``."""
    item: IntArray
    """Global item of each prefix entry."""
    weight: FloatArray
    rest: FloatArray
    """Per item of the target: the weight of its features outside its prefix."""
    keys: IntArray
    """Sorted ``local item * F + feature number`` of every (item, feature) of the target (F
    distinct features)."""

    @classmethod
    def of(cls, target: TargetWords, floor: float) -> Prefixes:
        postings = target.postings
        weight = postings.value.astype(np.float64)
        local = postings.item - target.first_item
        order = np.lexsort((postings.hashes, -weight, local))
        w, item = weight[order], local[order]
        total = np.bincount(item, weights=w, minlength=target.items)
        running = np.cumsum(w)
        start = np.searchsorted(item, item)  # each entry's item's first entry (items sorted)
        before = running - w - (running[start] - w[start])
        in_prefix = total[item] - before >= floor * total[item] * (1 - SLACK)
        outside = ~in_prefix
        rest = np.asarray(np.bincount(item[outside], weights=w[outside], minlength=target.items), np.float64)
        features = target.distinct.size
        number = np.searchsorted(target.distinct, postings.hashes).astype(np.int64)
        keys = np.sort(local * max(features, 1) + number)
        chosen = order[in_prefix]
        chosen = chosen[np.argsort(number[chosen], kind="stable")]
        starts = np.searchsorted(number[chosen], np.arange(features + 1)).astype(np.int64)
        return cls(target, floor, starts, postings.item[chosen], weight[chosen], rest, keys)


DIRECT_FACTOR = 8
"""A batch of Q feature hashes is scored against a view of E stored features directly (each
hash looked up in the stored table, every pair sharing one scored) while ``Q * DIRECT_FACTOR <
E``: a commit's few records never decode the view. Larger batches go through the view's
``Prefixes``, built once (a sort of the whole view) and far fewer pairs to score. Both give the
same pairs and scores, bit for bit (tests/reword/test_prefix_filter.py)."""


class Scorer:
    """How one (set, view)'s features are scored at ``floor``: directly, or through its
    ``Prefixes`` once a batch is large enough to pay for them (``DIRECT_FACTOR``)."""

    def __init__(self, target: TargetWords, floor: float, path: str = "auto") -> None:
        """``path``: "auto", or "direct" / "prefixes" to force one (for the tests)."""
        self.target = target
        self.floor = floor
        self.path = path

    @cached_property
    def prefixes(self) -> Prefixes:
        return Prefixes.of(self.target, self.floor)

    def uses_prefixes(self, queries: int) -> bool:
        if self.path != "auto":
            return self.path == "prefixes"
        return "prefixes" in self.__dict__ or queries * DIRECT_FACTOR >= self.target.entries


def reworded_scores(
    hashes: NDArray[np.uint64], first: IntArray, scorers: Sequence[Scorer]
) -> tuple[IntArray, IntArray, FloatArray]:
    """(unit, item) for every pair whose score

        c / (I + 0.5 * (U - c))

    reaches its target's floor (``Scorer.floor``), with the score: c the IDF-weighted size of
    what they share, I the item's, U the unit's (so 0.5 (U - c) is half of what the unit adds);
    weights are ln(1 + N / df) within the item's set and view. 1 for a unit holding exactly
    the item's features. ``hashes[first[u]:first[u + 1]]`` are unit u's distinct feature hashes
    (sorted). Each score is computed exactly as over all pairs (same sums in the same order:
    ``tests/reword/test_prefix_filter.py`` checks both paths against that reference)."""
    units = first.size - 1
    unit = np.repeat(np.arange(units, dtype=np.int64), np.diff(first))
    out_unit, out_item, out_score = [], [], []
    for scorer in scorers:
        if hashes.size == 0 or scorer.target.items == 0:
            continue
        if scorer.uses_prefixes(hashes.size):
            u, item, score = _through_prefixes(scorer.prefixes, hashes, unit, units)
        else:
            u, item, score = _directly(scorer.target, scorer.floor, hashes, unit, units)
        keep = score >= scorer.floor
        out_unit.append(u[keep])
        out_item.append(item[keep])
        out_score.append(score[keep])
    if not out_unit:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    return np.concatenate(out_unit), np.concatenate(out_item), np.concatenate(out_score)


def _directly(
    target: TargetWords, floor: float, hashes: NDArray[np.uint64], unit: IntArray, units: int
) -> tuple[IntArray, IntArray, FloatArray]:
    """Every (unit, item) pair sharing a feature that may reach ``floor``, scored: the entries
    are found by query, so each pair's shared weights are summed in the unit's (hash) order.

    An item weighs at least what it shares (I >= c, also as rounded: the same positive weights
    summed in the same order, with more of them), so c / (c + 0.5 (U - c)) bounds the score
    without I: the pairs under the floor by it are dropped before any item's weight is read,
    and a view whose pairs are all dropped is never decoded."""
    query, item, weight = target.found(hashes)
    unit_weight = np.asarray(np.bincount(unit, weights=weight, minlength=units), np.float64)
    span = max(target.first_item + target.items, 1)
    pairs, inverse = np.unique(unit[query] * span + item, return_inverse=True)
    shared = np.asarray(np.bincount(inverse, weights=weight[query], minlength=pairs.size), np.float64)
    u, item = pairs // span, pairs % span
    own = unit_weight[u]
    bound = shared / (shared + RECORD_SHARE * (own - shared))
    may = bound >= floor * (1 - SLACK)
    u, item, shared, own = u[may], item[may], shared[may], own[may]
    if u.size == 0:
        return u, item, shared
    whole = target.item_weight[item - target.first_item]
    return u, item, shared / (whole + RECORD_SHARE * (own - shared))


def _through_prefixes(
    p: Prefixes, hashes: NDArray[np.uint64], unit: IntArray, units: int
) -> tuple[IntArray, IntArray, FloatArray]:
    """The pairs that may reach ``p.floor`` (``_candidates``), scored exactly."""
    target = p.target
    number, known, weight = target.numbered(hashes)
    unit_weight = np.asarray(np.bincount(unit, weights=weight, minlength=units), np.float64)
    u, item = _candidates(p, number, known, unit, unit_weight)
    shared = _shared(p, u, item - target.first_item, unit, known, number, weight, units)
    whole = target.item_weight[item - target.first_item]
    return u, item, shared / (whole + RECORD_SHARE * (unit_weight[u] - shared))


def _candidates(
    p: Prefixes,
    number: IntArray,
    known: NDArray[np.bool_],
    unit: IntArray,
    unit_weight: FloatArray,
) -> tuple[IntArray, IntArray]:
    """(unit, global item) of the pairs that share a prefix feature and whose bound reaches the
    floor: c is at most what they share of the prefix plus the item's rest (and at most I, U),
    and the score grows with c."""
    held = np.flatnonzero(known)
    lo, hi = p.starts[number[held]], p.starts[number[held] + 1]
    count = hi - lo
    query = np.repeat(held, count)
    entry = np.repeat(lo, count) + np.arange(int(count.sum()), dtype=np.int64)
    entry -= np.repeat(np.cumsum(count) - count, count)
    span = max(p.target.first_item + p.target.items, 1)
    key = unit[query] * span + p.item[entry]
    pairs, inverse = np.unique(key, return_inverse=True)
    in_prefix = np.bincount(inverse, weights=p.weight[entry], minlength=pairs.size)
    u, item = pairs // span, pairs % span
    whole, own = p.target.item_weight[item - p.target.first_item], unit_weight[u]
    bound = np.minimum(np.minimum(in_prefix + p.rest[item - p.target.first_item], whole), own)
    best = bound / (whole + RECORD_SHARE * (own - bound))
    keep = best >= p.floor * (1 - SLACK)
    return u[keep], item[keep]


def _shared(
    p: Prefixes,
    u: IntArray,
    local: IntArray,
    unit: IntArray,
    known: NDArray[np.bool_],
    number: IntArray,
    weight: FloatArray,
    units: int,
) -> FloatArray:
    """c of each (unit, local item) pair: the weights of the unit's features the item has, summed
    in the unit's (hash) order, as the all-pairs reference sums them."""
    held = np.flatnonzero(known)
    count = np.bincount(unit[held], minlength=units)
    start = np.cumsum(count) - count
    per_pair = count[u]
    pair = np.repeat(np.arange(u.size, dtype=np.int64), per_pair)
    offset = np.arange(int(per_pair.sum()), dtype=np.int64)
    offset -= np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
    feature = held[np.repeat(start[u], per_pair) + offset]
    key = local[pair] * max(p.target.distinct.size, 1) + number[feature]
    where = np.minimum(np.searchsorted(p.keys, key), p.keys.size - 1)
    found = p.keys[where] == key
    return np.asarray(np.bincount(pair[found], weights=weight[feature[found]], minlength=u.size), np.float64)


def best_per_pair(
    unit: IntArray, item: IntArray, value: FloatArray, items: int
) -> tuple[IntArray, IntArray, FloatArray]:
    """The largest ``value`` per (unit, item)."""
    key = unit * items + item
    pairs, inverse = np.unique(key, return_inverse=True)
    best = np.zeros(pairs.size, dtype=np.float64)
    np.maximum.at(best, inverse, value)
    return pairs // items, pairs % items, best
