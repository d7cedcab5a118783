"""Per-item statistics aggregated over everything scanned: what the rules read."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.match.matcher import ItemTotals, union_lengths

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class RewordStats:
    """The rewording rules' per-item numbers over everything scanned (``core.families.reword``):
    the longest shared run once numbers are masked, the best reworded score, and the item's
    content features (too few: the reworded rule cannot measure it)."""

    numbers_run: IntArray
    reworded: FloatArray
    content_words: IntArray


@dataclass(frozen=True)
class ItemStats:
    """One entry per test item (global numbering of the manifest index)."""

    words: IntArray
    longest_run: IntArray
    """max R[i]: the longest run of words shared with one scanned record (0 under 5)."""
    ngrams8: IntArray
    ngrams8_found: IntArray
    """8-grams of the item found in some scanned record: positions with R[i] >= 8."""
    covered_l10: IntArray
    """Words inside shared runs of at least 10 words (Llama 2's default; ``covered`` for another)."""
    windows: IntArray
    """m: 50-character windows of the item's alnum view."""
    window_hits: IntArray
    """h: those windows found in some scanned record."""
    runs: tuple[IntArray, IntArray, IntArray] | None = field(default=None, compare=False, repr=False)
    """(item, position, R) of every word position with R > 0, for ``covered`` at another run length."""
    template: tuple[IntArray, IntArray] | None = field(default=None, compare=False, repr=False)
    """(item, position) of every template word (``io.manifest.templates``): not counted as covered."""
    _covered: dict[int, IntArray] = field(default_factory=dict, compare=False, repr=False)
    reword: RewordStats | None = field(default=None, compare=False, repr=False)
    """The rewording rules' per-item numbers, when they ran."""
    skip: tuple[IntArray, IntArray, IntArray] | None = field(default=None, compare=False, repr=False)
    """(item, position, span) of every Llama 2 skip-gram span start (``core.match.chains``),
    when the scan chained them (None: the skip-gram budget is off)."""
    gapped_longest: IntArray | None = field(default=None, compare=False, repr=False)
    """The longest gapped run per item (``core.match.chains``), when the gapped rule ran."""

    def covered(self, min_run: int) -> IntArray:
        """Words inside shared runs of at least ``min_run`` words, per item."""
        if min_run == 10:
            return self.covered_l10
        if self.runs is None:
            raise ValueError("these statistics keep no runs: only the coverage at 10 words is known")
        if min_run not in self._covered:
            item, position, run = self.runs
            self._covered[min_run] = _covered(item, position, run, min_run, self.words.size, self.template)
        return self._covered[min_run]

    def covered_skip(self, min_run: int) -> IntArray:
        """Words inside Llama 2 skip-gram spans of at least ``min_run`` words, per item (the
        exact coverage where the scan did not chain)."""
        if self.skip is None:
            return self.covered(min_run)
        key = -min_run
        if key not in self._covered:
            item, position, span = self.skip
            self._covered[key] = _covered(item, position, span, min_run, self.words.size, self.template)
        return self._covered[key]


def _starts(index: ManifestIndex, flat: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """(item, position, value) of every word with a value, sorted by item and position."""
    at = np.flatnonzero(flat)
    owner = np.searchsorted(index.word_base + index.word_counts, at, side="right").astype(np.int64)
    return owner, at - index.word_base[owner], flat[at]


def item_stats(index: ManifestIndex, totals: ItemTotals) -> ItemStats:
    """Aggregate the flat per-position totals into per-item numbers.

    Only the positions with a shared run (R > 0) are visited: with 100,000 registered
    items a one-record scan has a few, and every number here is 0 elsewhere."""
    items = index.items
    at = np.flatnonzero(totals.run)
    run = totals.run[at]
    position_item = np.searchsorted(index.word_base + index.word_counts, at, side="right").astype(np.int64)
    position = at - index.word_base[position_item]
    longest = np.zeros(items, dtype=np.int64)
    np.maximum.at(longest, position_item, run)
    words, ngrams8 = index.word_counts, np.maximum(index.word_counts - 7, 0)
    found = run >= 8
    template = None
    if index.templates.marked:
        # Template words (``io.manifest.templates``) count for nothing: PaLM's share is over the
        # 8-grams without one, Llama 2's over the other words (a whole templated item copied
        # scores as its header-stripped copy does).
        flat = index.templates.words
        owner = np.searchsorted(index.word_base + index.word_counts, flat, side="right").astype(np.int64)
        template = (owner, flat - index.word_base[owner])
        words = words - np.bincount(owner, minlength=items)
        base, end = index.word_base[owner], index.word_base[owner] + index.word_counts[owner] - 7
        low, high = np.maximum(flat - 7, base), np.minimum(flat + 1, end)
        some = high > low
        ngrams8 = ngrams8 - union_lengths(owner[some], low[some], high[some], items)
        found &= index.templates.words_in(at, at + 8) == 0
    found8 = np.bincount(position_item[found], minlength=items).astype(np.int64)
    covered = _covered(position_item, position, run, 10, items, template)
    # Manifest 2: the found windows' items, from the tables (only the found ones are read).
    found_items = index.windows.item_of(np.flatnonzero(totals.window_found))
    hits = np.bincount(found_items, minlength=items).astype(np.int64)
    skip = None if totals.skip is None else _starts(index, totals.skip)
    gapped = None
    if totals.gapped is not None:
        owner, _, span = _starts(index, totals.gapped)
        gapped = np.zeros(items, dtype=np.int64)
        np.maximum.at(gapped, owner, span)
    return ItemStats(
        words=words,
        longest_run=longest,
        ngrams8=ngrams8,
        ngrams8_found=found8,
        covered_l10=covered,
        windows=index.window_counts,
        window_hits=hits,
        runs=(position_item, position, run),
        template=template,
        skip=skip,
        gapped_longest=gapped,
    )


def _covered(
    item: IntArray,
    position: IntArray,
    run: IntArray,
    min_run: int,
    items: int,
    template: tuple[IntArray, IntArray] | None,
) -> IntArray:
    """Words inside runs of at least ``min_run`` words, per item, template words left out
    (rows sorted by item and position)."""
    long_runs = run >= min_run
    item, start, end = item[long_runs], position[long_runs], (position + run)[long_runs]
    covered = union_lengths(item, start, end, items)
    if template is None or item.size == 0:
        return covered
    # A template word is covered when the furthest-reaching run starting at or before it, in
    # its item, reaches past it.
    owner, at = template
    span = int(max(int(end.max()), int(at.max()) if at.size else 0)) + 1
    key, word = item * span + start, owner * span + at
    reach = np.maximum.accumulate(item * span + end)
    row = np.searchsorted(key, word, side="right") - 1
    inside = (row >= 0) & (reach[np.maximum(row, 0)] > word)
    return covered - np.bincount(owner[inside], minlength=items).astype(np.int64)
