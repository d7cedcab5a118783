"""Llama 2: the share of an item's tokens inside long shared n-grams; dirty at 80%.

Definition (Touvron et al., "Llama 2: Open Foundation and Fine-Tuned Chat Models", arXiv
2307.09288v2, Appendix A.6): "We consider a token to be contaminated if it appears in any token
n-gram longer than 10 tokens in both the evaluation sample and the training set"; a sample is
"clean" under 20% contaminated tokens and "dirty" at 80% or more.

Here, with two documented differences: it counts normalised *words*, not Llama 2 tokenizer
tokens (a token count of 10 is not a word count of 10), and it has no skip-gram budget (Llama 2
allowed a matched span to differ in up to four positions), so it can only under-count against
a skip-gram version. Covered words are the union of [i, i + R[i]) wherever R[i] >= ``min_run``
(10). ``dirty`` at >= 0.80, ``not clean`` at >= 0.20; the rule fires on the level named by
``fire_on`` (default ``dirty``).

Worked example (seed article, test item 0 against its number-swapped copy): 40 of its 52
words lie in runs of 10 or more, 77%: not clean, not dirty.
"""

from __future__ import annotations

import numpy as np

from contam_guard.rules.base import ItemStats, RuleResult

NAME = "llama2"


def evaluate(stats: ItemStats, dirty: float, not_clean: float, fire_on: str) -> RuleResult:
    share = np.divide(stats.covered_l10, stats.words, out=np.zeros(stats.words.size), where=stats.words > 0)
    bar = dirty if fire_on == "dirty" else not_clean
    fired = (stats.words > 0) & (share >= bar)
    explain = [
        f"{c} of {w} words in shared runs ({s:.1%}): "
        + ("dirty" if s >= dirty else "not clean" if s >= not_clean else "clean")
        for c, w, s in zip(stats.covered_l10.tolist(), stats.words.tolist(), share.tolist())
    ]
    return RuleResult(NAME, fired, share, explain)
