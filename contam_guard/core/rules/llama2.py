"""Llama 2: the share of an item's tokens inside long shared n-grams; dirty at 80%.

Definition (Touvron et al., "Llama 2: Open Foundation and Fine-Tuned Chat Models", arXiv
2307.09288v2, Appendix A.6): "We consider a token to be contaminated if it appears in any token
n-gram longer than 10 tokens in both the evaluation sample and the training set"; a sample is
"clean" under 20% contaminated tokens and "dirty" at 80% or more.

Here, with two documented differences: it counts normalised *words*, not Llama 2 tokenizer
tokens (a token count of 10 is not a word count of 10), and by default it has no skip-gram
budget, so it can only under-count against a skip-gram version. ``skip_budget: 4`` (``--skip-budget
4``) is Llama 2's: "a matched span may differ in up to four positions (the "skipgram budget")"
(the seed article's wording of App. A.6). A span is then exact runs of 5+ words chained across
gaps that cost at most ``skip_budget`` differing positions in all, a replaced, inserted or
deleted word one each (``core.match.chains``); its words, the differing ones between its runs
included, are covered when it is ``min_run`` words or longer. Without it, covered words are the
union of [i, i + R[i]) wherever R[i] >= ``min_run`` (10). ``dirty`` at >= 0.80, ``not clean`` at
>= 0.20; the rule fires on the level named by ``fire_on`` (default ``dirty``). Template words
(``io.manifest.templates``) are left out of both counts, and runs are trimmed of those they begin
and end with.

Worked example (seed article, test item 0 against its number-swapped copy): 40 of its 52
words lie in runs of 10 or more, 77%: not clean, not dirty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import Field

from contam_guard.core.rules.base import (
    MAX_WORDS,
    BoolArray,
    Explanations,
    FloatArray,
    IntArray,
    Rule,
    RuleResult,
    RuleSettings,
    share,
)

if TYPE_CHECKING:
    from contam_guard.core.match.index import ManifestIndex
    from contam_guard.core.match.stats import ItemStats

NAME = "llama2"
SKIP_BUDGET_MAX = 64
"""A bound on the skip-gram budget (the kernel's longest link): Llama 2's is 4."""


class Settings(RuleSettings):
    """Share of the item's words inside shared runs of at least ``min_run`` words."""

    min_run: int = Field(10, ge=5, le=MAX_WORDS)
    dirty: float = Field(0.80, ge=0.0, le=1.0)
    not_clean: float = Field(0.20, ge=0.0, le=1.0)
    fire_on: Literal["dirty", "not_clean"] = "dirty"
    skip_budget: int = Field(0, ge=0, le=SKIP_BUDGET_MAX)
    """Positions a matched span may differ in (Llama 2's skip-gram budget: 4); 0: exact runs."""


def _covered(stats: ItemStats, settings: Settings) -> IntArray:
    if settings.skip_budget:
        return stats.covered_skip(settings.min_run)
    return stats.covered(settings.min_run)


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    covered = _covered(stats, settings)
    part = share(covered, stats.words)
    bar = settings.dirty if settings.fire_on == "dirty" else settings.not_clean
    fired = (stats.words > 0) & (part >= bar)
    words = stats.words

    def say(i: int) -> str:
        s = float(part[i])
        verdict = "dirty" if s >= settings.dirty else "not clean" if s >= settings.not_clean else "clean"
        spans = f"skip-gram spans (budget {settings.skip_budget})" if settings.skip_budget else "shared runs"
        return f"{covered[i]} of {words[i]} words in {spans} ({s:.1%}): {verdict}"

    explain = Explanations(part.size, say)
    return RuleResult(NAME, fired, part, explain)


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    return np.asarray(index.word_counts >= settings.min_run)


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    part = share(_covered(stats, settings), stats.words)
    words = stats.words > 0
    return {
        "l2 dirty": (words & (part >= settings.dirty)).astype(np.float64),
        "l2 >=20%": (words & (part >= settings.not_clean)).astype(np.float64),
    }


RULE = Rule(
    name=NAME,
    title="Llama 2 (Touvron et al. 2023, App. A.6): share of words in long shared runs",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: f"llama2 needs runs of {s.min_run} words",
    columns=("l2 dirty", "l2 >=20%"),
    sweep=_sweep,
    mark=lambda s: (s.min_run, f"Llama 2: runs of {s.min_run}+"),
    config="""\
  # Llama 2 (Touvron et al. 2023, App. A.6), with words for tokens: share of words in
  # shared runs of 10+ words; dirty at 80%, not clean at 20%. skip_budget: 4 is Llama 2's
  # skip-gram budget (a span may differ in up to 4 positions); 0 counts exact runs only.
  llama2: {enabled: true, action: warn, min_run: 10, dirty: 0.80, not_clean: 0.20, fire_on: dirty,
           skip_budget: 0}
""",
)
