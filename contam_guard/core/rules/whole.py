"""whole: an item is dirty if all of it, word for word, is found in one training string.

Definition: the limit case of GPT-3's rule (Brown et al., "Language Models are Few-Shot
Learners", arXiv 2005.14165v4, Appendix C: an example is dirty if it has "any N-gram overlap
with any training document") with N set to the item's own length, so that it reaches the items
GPT-3's rule cannot: an item shorter than N has no N-gram. GPT-3 set N per benchmark to the 5th
percentile item length, at least 8, so up to one item in twenty (more where the floor of 8
applies) is shorter than its N; and a short-question benchmark (ARC, TriviaQA, MMLU) holds many
items of 9-12 words: copied whole into a chat message, such an item passes the GPT-3 rule at
13. A whole copy is no chance collision of common phrasing (GPT-3's reason for its floor of 8):
every word of the item, in order, in one string.

Here: fires on each (item, record) pair whose longest shared run holds every word of the item
(the run equals the item's word count), when the item has at least ``min_words`` (5) words.
Runs are measured through 5-grams, so an item of fewer than 5 words cannot be measured by any
run rule (``contam-guard sets`` counts them). An item that begins or ends with template words
(``io.manifest.templates``) needs the run left when they are trimmed; one with template words inside
is not seen (a run is cut at them). The rule is decided per pair, like GPT-3's: each copy is its
own finding, naming its record. Where GPT-3's rule is on and fails, a whole copy of an item of
at least its N words is GPT-3's finding already, and this rule reports only the items shorter
than N (``Rule.defers_to``: no pair fails twice, and allowlist entries made for GPT-3's findings
keep their meaning); with GPT-3's rule disabled or set to warn, every whole copy fails here.

Worked example: the 11-word item "Which gas do green plants release into the air during
photosynthesis" inside the chat message "Quick one: which gas do green plants release into the
air during photosynthesis? Thanks!" shares a run of 11 words = its 11 words: the rule fires
(GPT-3's, at N = 13, does not). With "release" changed to "give off", the longest run is 5
words ("into the air during photosynthesis") < 11: it does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from contam_guard.core.rules.base import (
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
    from contam_guard.core.match.index import ManifestIndex
    from contam_guard.core.match.stats import ItemStats

NAME = "whole"
MIN_WORDS = 5
"""Runs are measured through 5-grams: a shorter item has none."""


class Settings(RuleSettings):
    """The whole item (at least ``min_words`` words) shared in one run with one record."""

    action: Action = "fail"
    min_words: int = Field(MIN_WORDS, ge=MIN_WORDS, le=MAX_WORDS)


def bars(index: ManifestIndex, settings: Settings) -> IntArray:
    """The run a whole copy of each item gives (``ManifestIndex.whole_runs``); 0 where the rule
    cannot see the item."""
    whole = index.whole_runs
    return np.where(whole >= settings.min_words, whole, 0)


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    """Fires where one record shares the whole item; each such pair is its own finding."""
    whole = bars(index, settings)
    fired = (whole > 0) & (stats.longest_run >= whole)
    run = stats.longest_run

    def say(i: int) -> str:
        return f"longest shared run {run[i]} words; the whole item is {whole[i]} words"

    # An item the rule cannot see gets a bar no run reaches (its pairs are never findings).
    pair_bar = np.where(whole > 0, whole, MAX_WORDS + 1)
    return RuleResult(NAME, np.asarray(fired), run.astype(np.float64), Explanations(run.size, say), pair_bar)


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    return np.asarray(bars(index, settings) > 0)


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    return {}  # no column in the sweep table: it compares the published rules at each n


RULE = Rule(
    name=NAME,
    title="whole: the whole item (5 words or more) verbatim in one string (GPT-3's rule at N = its length)",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: f"whole needs an item of {s.min_words} words",
    columns=(),
    sweep=_sweep,
    per_pair=True,
    defers_to="gpt3",
    pair_detail=lambda value, bar: f"the whole item ({int(bar)} words) found verbatim in one string",
    more_detail=lambda records, longest, bar: (
        f"and {records} more record(s) not listed (--max-pairs-per-item) hold the whole item "
        f"({int(bar)} words) verbatim in one string"
    ),
    config="""\
  # whole: every word of the item, in order, in one training string; items of min_words (5)
  # or more, however short against gpt3's n (runs are measured through 5-grams).
  whole: {enabled: true, action: fail, min_words: 5}
""",
)
