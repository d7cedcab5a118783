"""GPT-3: an item is dirty if it shares any run of at least N words with one training document.

Definition (Brown et al., "Language Models are Few-Shot Learners", arXiv 2005.14165v4,
Appendix C): a gram is "a lowercase, whitespace delimited word with no punctuation"; an example
is dirty if it has "any N-gram overlap with any training document". N is "the 5th percentile
example length in words", at least 8 on non-synthetic tasks and at most 13.

Here: fires when the longest shared run (max R[i]) is at least ``n`` (default 13). With
``n: auto``, N is the set's 5th-percentile item length in words (nearest rank), clipped to
8..13. Items shorter than N words cannot fire ("too short for the rule to see"). Runs are
trimmed of the template words they begin and end with (``engine.templates``): a record sharing
only a benchmark's header with the item shares no run.

Worked example (the seed article's test item 0, "Janet's ducks lay 16 eggs per day ...",
52 words, against its copy with the numbers swapped): the swaps cut it into shared runs of 5,
13, 10 and 17 words; the longest is 17 >= 13, so the rule fires.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import field_validator

from contam_guard.rules.base import (
    MAX_WORDS,
    Action,
    BoolArray,
    Explanations,
    FloatArray,
    IntArray,
    Rule,
    RuleResult,
    RuleSettings,
)

if TYPE_CHECKING:
    from contam_guard.engine.index import ManifestIndex
    from contam_guard.engine.stats import ItemStats

NAME = "gpt3"
AUTO_MIN, AUTO_MAX = 8, 13


class Settings(RuleSettings):
    """Any shared run of at least ``n`` words (``auto``: the set's 5th-percentile length, 8..13)."""

    action: Action = "fail"
    n: int | Literal["auto"] = 13

    @field_validator("n")
    @classmethod
    def _n_at_least_five(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 5:
            raise ValueError("n must be at least 5 (runs under 5 words are not measured), or 'auto'")
        if isinstance(value, int) and value > MAX_WORDS:
            raise ValueError(f"n must be at most {MAX_WORDS:,} words, or 'auto'")
        return value


def auto_n(word_counts: IntArray) -> int:
    """GPT-3's N for a set: the 5th-percentile item length (nearest rank), clipped to 8..13."""
    if word_counts.size == 0:
        return AUTO_MAX
    ordered = np.sort(word_counts)
    rank = max(int(np.ceil(0.05 * ordered.size)) - 1, 0)
    return int(min(max(int(ordered[rank]), AUTO_MIN), AUTO_MAX))


def thresholds(index: ManifestIndex, settings: Settings) -> IntArray:
    """N for every item: the setting, or under ``auto`` its set's (and view's) own."""
    n = np.zeros(index.items, dtype=np.int64)
    for target in index.targets:
        span = slice(target.first_item, target.first_item + target.items)
        n[span] = auto_n(index.word_counts[span]) if settings.n == "auto" else settings.n
    return n


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    """Fires where the longest shared run reaches N; each pair reaching it is its own finding."""
    n = thresholds(index, settings)
    fired = stats.longest_run >= n
    run = stats.longest_run
    explain = Explanations(run.size, lambda i: f"longest shared run {run[i]} words >= N = {n[i]}")
    return RuleResult(NAME, fired, stats.longest_run.astype(np.float64), explain, pair_bar=n)


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    return np.asarray(index.word_counts >= thresholds(index, settings))


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    return {"gpt3": (stats.longest_run >= thresholds(index, settings)).astype(np.float64)}


RULE = Rule(
    name=NAME,
    title="GPT-3 (Brown et al. 2020, App. C): a shared run of N words",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: f"gpt3 needs a run of {s.n} words",
    columns=("gpt3",),
    sweep=_sweep,
    mark=lambda s: None if s.n == "auto" else (s.n, f"GPT-3: N = {s.n}"),
    per_pair=True,
    config="""\
  # GPT-3 (Brown et al. 2020, App. C): any shared run of at least n words. n: 5.. or auto
  gpt3: {enabled: true, action: fail, n: 13}
""",
)
