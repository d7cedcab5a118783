"""GPT-3: an item is dirty if it shares any run of at least N words with one training document.

Definition (Brown et al., "Language Models are Few-Shot Learners", arXiv 2005.14165v4,
Appendix C): a gram is "a lowercase, whitespace delimited word with no punctuation"; an example
is dirty if it has "any N-gram overlap with any training document". N is "the 5th percentile
example length in words", at least 8 on non-synthetic tasks and at most 13.

Here: fires when the longest shared run (max R[i]) is at least ``n`` (default 13). With
``n: auto``, N is the set's 5th-percentile item length in words (nearest rank), clipped to
8..13. Items shorter than N words cannot fire ("too short for the rule to see").

Worked example (the seed article's test item 0, "Janet's ducks lay 16 eggs per day ...",
52 words, against its copy with the numbers swapped): the swaps cut it into shared runs of 5,
13, 10 and 17 words; the longest is 17 >= 13, so the rule fires.
"""

from __future__ import annotations

import numpy as np

from contam_guard.rules.base import IntArray, ItemStats, RuleResult

NAME = "gpt3"
AUTO_MIN, AUTO_MAX = 8, 13


def auto_n(word_counts: IntArray) -> int:
    """GPT-3's N for a set: the 5th-percentile item length (nearest rank), clipped to 8..13."""
    if word_counts.size == 0:
        return AUTO_MAX
    ordered = np.sort(word_counts)
    rank = max(int(np.ceil(0.05 * ordered.size)) - 1, 0)
    return int(min(max(int(ordered[rank]), AUTO_MIN), AUTO_MAX))


def evaluate(stats: ItemStats, n: IntArray) -> RuleResult:
    """``n``: the threshold for each item (it may differ between sets when ``auto``)."""
    fired = stats.longest_run >= n
    explain = [
        f"longest shared run {r} words >= N = {k}" for r, k in zip(stats.longest_run.tolist(), n.tolist())
    ]
    return RuleResult(NAME, fired, stats.longest_run.astype(np.float64), explain)
