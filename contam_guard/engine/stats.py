"""Per-item statistics aggregated over everything scanned: what the rules read."""

from __future__ import annotations

import numpy as np

from contam_guard.engine.index import ManifestIndex
from contam_guard.engine.matcher import ItemTotals, union_lengths
from contam_guard.rules.base import ItemStats


def item_stats(index: ManifestIndex, totals: ItemTotals, min_run: int = 10) -> ItemStats:
    """Aggregate the flat per-position totals into per-item numbers."""
    items = index.items
    position_item = np.repeat(np.arange(items, dtype=np.int64), index.word_counts)
    position = np.arange(totals.run.size, dtype=np.int64) - index.word_base[position_item]
    longest = np.zeros(items, dtype=np.int64)
    np.maximum.at(longest, position_item, totals.run)
    found8 = np.bincount(position_item[totals.run >= 8], minlength=items).astype(np.int64)
    long_runs = totals.run >= min_run
    covered = union_lengths(
        position_item[long_runs], position[long_runs], (position + totals.run)[long_runs], items
    )
    window_item = np.repeat(np.arange(items, dtype=np.int64), index.window_counts)
    hits = np.bincount(window_item[totals.window_found], minlength=items).astype(np.int64)
    return ItemStats(
        words=index.word_counts,
        longest_run=longest,
        ngrams8=np.maximum(index.word_counts - 7, 0),
        ngrams8_found=found8,
        covered_l10=covered,
        windows=index.window_counts,
        window_hits=hits,
    )
