"""PaLM: an item is contaminated if at least 70% of its 8-grams were seen in the training data.

Definition (Chowdhery et al., "PaLM: Scaling Language Modeling with Pathways", arXiv
2204.02311v5, Section 8): examples are split by "whether at least 70% of the 8-grams in
question, prompt, or target were seen at least once" in the training data.

Here: the denominator is the item's 8-grams (words - 7); an 8-gram counts as seen when it
occurs in any scanned record, i.e. R[i] >= 8 at its start. Fires when the share is at least
``threshold`` (0.70). Items under 8 words have no 8-grams and cannot fire.

Worked example (seed article, test item 0 against its number-swapped copy): 19 of its 45
8-grams are found, 42% < 70%: the rule does not fire.
"""

from __future__ import annotations

import numpy as np

from contam_guard.rules.base import ItemStats, RuleResult

NAME = "palm"


def evaluate(stats: ItemStats, threshold: float) -> RuleResult:
    share = np.divide(
        stats.ngrams8_found, stats.ngrams8, out=np.zeros(stats.words.size), where=stats.ngrams8 > 0
    )
    fired = (stats.ngrams8 > 0) & (share >= threshold)
    explain = [
        f"{f} of {m} 8-grams found ({s:.1%}) >= {threshold:.0%}"
        for f, m, s in zip(stats.ngrams8_found.tolist(), stats.ngrams8.tolist(), share.tolist())
    ]
    return RuleResult(NAME, fired, share, explain)
