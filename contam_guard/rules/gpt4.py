"""GPT-4: three random 50-character substrings of the item; a match if any occurs in training.

Definition (OpenAI, "GPT-4 Technical Report", arXiv 2303.08774v6, Appendix C): remove "all
spaces and symbols, keeping only characters (including numbers)", take "three substrings of 50
characters" at random from each evaluation example; "A match is identified if any of the three
sampled evaluation substrings is a substring of the processed training example."

Here, without hidden randomness: the item's m windows of 50 characters (alnum view, case kept)
are all checked; h of them occur in some scanned record. The probability that three distinct
random windows include a match is 1 - C(m-h, 3) / C(m, 3) (with fewer than 3 windows, all are
drawn). ``mode: any_window`` fires when h > 0 (every window checked); ``mode: probability``
fires when that probability is at least ``probability``. Items under 50 characters have no
window and cannot fire.

Worked example (seed article, test item 0 against its number-swapped copy): 35 of its 172
windows are found; 1 - C(137, 3) / C(172, 3) = 49.7%.
"""

from __future__ import annotations

import numpy as np

from contam_guard.rules.base import FloatArray, IntArray, ItemStats, RuleResult

NAME = "gpt4"


def three_draw_probability(m: IntArray, h: IntArray) -> FloatArray:
    """P(at least one of 3 distinct random windows is found) = 1 - C(m-h,3)/C(m,3)."""
    mf = m.astype(np.float64)
    miss = (mf - h) * (mf - h - 1) * (mf - h - 2)
    total = mf * (mf - 1) * (mf - 2)
    ratio = np.divide(miss, total, out=np.ones(m.size), where=total > 0)
    probability = 1.0 - ratio
    few = (m > 0) & (m < 3)  # every window is drawn
    probability[few] = (h[few] > 0).astype(np.float64)
    probability[m == 0] = 0.0
    return np.asarray(probability, dtype=np.float64)


def evaluate(stats: ItemStats, mode: str, probability: float) -> RuleResult:
    p = three_draw_probability(stats.windows, stats.window_hits)
    fired = stats.window_hits > 0 if mode == "any_window" else (stats.windows > 0) & (p >= probability)
    explain = [
        f"{h} of {m} windows found; 3 draws catch it with p = {q:.1%}"
        for h, m, q in zip(stats.window_hits.tolist(), stats.windows.tolist(), p.tolist())
    ]
    return RuleResult(NAME, np.asarray(fired), p, explain)
