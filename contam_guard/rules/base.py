"""What every rule sees: per-item statistics aggregated over everything scanned."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

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
    """Words inside shared runs of at least ``min_run`` (Llama 2's) words."""
    windows: IntArray
    """m: 50-character windows of the item's alnum view."""
    window_hits: IntArray
    """h: those windows found in some scanned record."""


@dataclass(frozen=True)
class RuleResult:
    """A rule's verdict on every item: a score, whether it fired, and the numbers behind it."""

    rule: str
    fired: NDArray[np.bool_]
    score: FloatArray
    explain: list[str]
    """One short sentence per item with the numbers (only read for fired items)."""
