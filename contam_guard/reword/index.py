"""The derived views of a manifest as search structures, numbered as the engine numbers items.

Items are the n-gram engine's (``engine.index.ManifestIndex``: one per (set, view) and item),
so the rewording rules' per-item numbers sit beside every other rule's. A target whose derived
views are missing (a set registered before them) has no item the rules can see.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.engine.index import ManifestIndex
from contam_guard.manifest.model import Manifest
from contam_guard.reword.views import NUMBERS, WORDS, derived_name
from contam_guard.text.hashing import GRAM_N, WINDOW_CHARS

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
U64 = NDArray[np.uint64]


@dataclass(frozen=True)
class Table:
    """Hashes sorted, each with its item and a value (a position, or a weight)."""

    hashes: U64
    item: IntArray
    value: NDArray[np.generic]

    @classmethod
    def of(cls, hashes: U64, item: IntArray, value: NDArray[np.generic]) -> Table:
        order = np.argsort(hashes, kind="stable")
        return cls(hashes[order], item[order], value[order])

    def lookup(self, queries: U64) -> tuple[IntArray, IntArray]:
        """(query index, table index) for every table entry equal to a query."""
        counts = np.zeros(queries.size, dtype=np.int64)
        lo = np.searchsorted(self.hashes, queries, side="left").astype(np.int64)
        if self.hashes.size:
            # most queries are in no item: search the right end only for those that are
            hit = np.flatnonzero(self.hashes[np.minimum(lo, self.hashes.size - 1)] == queries)
            counts[hit] = np.searchsorted(self.hashes, queries[hit], side="right") - lo[hit]
        query = np.repeat(np.arange(queries.size, dtype=np.int64), counts)
        starts = np.cumsum(counts) - counts
        entry = np.repeat(lo, counts) + (
            np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
        )
        return query, entry


@dataclass(frozen=True)
class TargetWords:
    """One (set, view)'s content features: the inverted index and each feature's IDF there."""

    first_item: int
    items: int
    postings: Table
    """Feature hash -> (global item, IDF weight)."""
    distinct: U64
    """The distinct feature hashes, sorted, with ``df`` the items holding each."""
    df: NDArray[np.float64]

    def weights(self, hashes: U64) -> FloatArray:
        """ln(1 + N / df) of each hash; a feature no item has counts df = 1/2."""
        return self.numbered(hashes)[2]

    def numbered(self, hashes: U64) -> tuple[IntArray, BoolArray, FloatArray]:
        """Per hash: its place in ``distinct`` (valid where known), whether some item has it,
        and its weight (``weights``)."""
        df = np.full(hashes.size, 0.5)
        where = np.zeros(hashes.size, dtype=np.int64)
        known = np.zeros(hashes.size, dtype=np.bool_)
        if self.distinct.size:
            where = np.searchsorted(self.distinct, hashes).astype(np.int64)
            np.minimum(where, self.distinct.size - 1, out=where)
            known = self.distinct[where] == hashes
            df[known] = self.df[where[known]]
        return where, known, np.log1p(self.items / df)


@dataclass(frozen=True)
class RewordIndex:
    items: int
    masked_words: IntArray
    """Per item: its words with numbers masked (0 where its set has no derived views)."""
    has_numbers: BoolArray
    content_words: IntArray
    """Per item: its distinct content words."""
    has_words: BoolArray
    grams: Table
    """Masked 5-gram hash -> (item, position)."""
    words: list[TargetWords]
    """Per (set, view) with derived views: its content features."""
    item_weight: FloatArray
    """Per item: the sum of its content features' weights."""

    @classmethod
    def build(cls, manifest: Manifest, index: ManifestIndex) -> RewordIndex:
        items = index.items
        masked = np.zeros(items, dtype=np.int64)
        content = np.zeros(items, dtype=np.int64)
        has_numbers = np.zeros(items, dtype=np.bool_)
        has_words = np.zeros(items, dtype=np.bool_)
        gram_parts: list[tuple[U64, IntArray, IntArray]] = []
        targets: list[TargetWords] = []
        weight = np.zeros(items, dtype=np.float64)
        for target in index.targets:
            views = manifest.sets[target.set_name].views
            span = slice(target.first_item, target.first_item + target.items)
            numbers = views.get(derived_name(target.view, NUMBERS))
            if numbers is not None and numbers.word_counts.size == target.items:
                counts = numbers.word_counts
                masked[span], has_numbers[span] = counts, True
                per_item = np.maximum(counts - (GRAM_N - 1), 0)
                item = np.repeat(np.arange(target.items, dtype=np.int64), per_item) + target.first_item
                position = np.arange(int(per_item.sum()), dtype=np.int64) - np.repeat(
                    np.cumsum(per_item) - per_item, per_item
                )
                gram_parts.append((numbers.gram_hashes, item, position))
            words = views.get(derived_name(target.view, WORDS))
            if words is not None and words.alnum_counts.size == target.items:
                per_item = np.maximum(words.alnum_counts - (WINDOW_CHARS - 1), 0)
                content[span], has_words[span] = per_item, True
                hashes = words.window_hashes
                item = np.repeat(np.arange(target.items, dtype=np.int64), per_item) + target.first_item
                # each item's features are distinct, so a feature's count is its df
                distinct, inverse, df = np.unique(hashes, return_inverse=True, return_counts=True)
                idf = np.log1p(target.items / df[inverse].astype(np.float64))
                weight += np.bincount(item, weights=idf, minlength=items)
                targets.append(
                    TargetWords(
                        target.first_item,
                        target.items,
                        Table.of(hashes, item, idf),
                        distinct,
                        df.astype(np.float64),
                    )
                )
        grams = Table.of(*_joined(gram_parts))
        return cls(items, masked, has_numbers, content, has_words, grams, targets, weight)


def _joined(parts: list[tuple[U64, IntArray, IntArray]]) -> tuple[U64, IntArray, IntArray]:
    if not parts:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return (
        np.concatenate([p[0] for p in parts]).astype(np.uint64),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )
