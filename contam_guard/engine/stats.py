"""Per-item statistics aggregated over everything scanned: what the rules read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from contam_guard.engine.index import ManifestIndex
from contam_guard.engine.matcher import ItemTotals, union_lengths

if TYPE_CHECKING:
    from contam_guard.reword.scan_pass import RewordStats

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


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
    _covered: dict[int, IntArray] = field(default_factory=dict, compare=False, repr=False)
    reword: RewordStats | None = field(default=None, compare=False, repr=False)
    """Issue 15: the rewording rules' per-item numbers (``reword.scan_pass``), when they ran."""

    def covered(self, min_run: int) -> IntArray:
        """Words inside shared runs of at least ``min_run`` words, per item."""
        if min_run == 10:
            return self.covered_l10
        if self.runs is None:
            raise ValueError("these statistics keep no runs: only the coverage at 10 words is known")
        if min_run not in self._covered:
            item, position, run = self.runs
            long_runs = run >= min_run
            self._covered[min_run] = union_lengths(
                item[long_runs], position[long_runs], (position + run)[long_runs], self.words.size
            )
        return self._covered[min_run]


def item_stats(index: ManifestIndex, totals: ItemTotals) -> ItemStats:
    """Aggregate the flat per-position totals into per-item numbers.

    Only the positions with a shared run (R > 0) are visited (issue 13): with 100,000 registered
    items a one-record scan has a few, and every number here is 0 elsewhere."""
    items = index.items
    at = np.flatnonzero(totals.run)
    run = totals.run[at]
    position_item = np.searchsorted(index.word_base + index.word_counts, at, side="right").astype(np.int64)
    position = at - index.word_base[position_item]
    longest = np.zeros(items, dtype=np.int64)
    np.maximum.at(longest, position_item, run)
    found8 = np.bincount(position_item[run >= 8], minlength=items).astype(np.int64)
    long_runs = run >= 10
    covered = union_lengths(position_item[long_runs], position[long_runs], (position + run)[long_runs], items)
    # Manifest 2: the found windows' items, from the tables (only the found ones are read).
    found_items = index.windows.item_of(np.flatnonzero(totals.window_found))
    hits = np.bincount(found_items, minlength=items).astype(np.int64)
    return ItemStats(
        words=index.word_counts,
        longest_run=longest,
        ngrams8=np.maximum(index.word_counts - 7, 0),
        ngrams8_found=found8,
        covered_l10=covered,
        windows=index.window_counts,
        window_hits=hits,
        runs=(position_item, position, run),
    )
