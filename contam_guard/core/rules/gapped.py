"""Gapped: GPT-3's rule for a run that survives a few inserted, deleted or replaced words.

GPT-3's rule (``gpt3``) flags an item sharing an exact run of N words with one record. A filler
word every 6-10 words, or every 7th-12th word deleted, cuts a copied item into exact runs of
5-11 words, under GSM8K's N of 13: the copy passes ``gpt3``. This rule chains a pair's exact runs
(5 words or more) across gaps of at most ``gaps`` words, with ``gaps`` edited words per 8 words
of the chained span in all (``core.match.chains``: a gap costs the longer of its item and record
sides), and fires where the chained span (item words, the edited ones included) reaches the same
N as ``gpt3`` (``n: auto``: each set's 5th-percentile length, 8..13, or the set's own N).

``gaps`` is 2 by default: one inserted, deleted or replaced word costs 1 and a punctuation mark
glued to the next word (``end.Next``: two words read as one) costs 2, so 2 per 8 catches both at
the false hits of 1 per 8 (``tests/reword/test_edit_table.py``; docs/decisions.md, E2).

Off by default: it is a different question from GPT-3's (a copy that was edited to hide it),
GPT-3's published numbers stay its own, and a pair of unrelated texts sharing two stock phrases
a word apart can chain where neither phrase alone reaches N. One finding per item, listing the
records it shares runs with.

Worked example: a GSM8K test question of 40 words with "um" inserted after words 8, 16, 24 and
32 shares exact runs of 8 words with its copy; chained, the span is 40 words with 4 edits, within
the budget (4 <= 40 // 8), so the rule fires at N = 13 where ``gpt3`` does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import Field

from contam_guard.core.rules import gpt3
from contam_guard.core.rules.base import (
    Action,
    BoolArray,
    Explanations,
    FloatArray,
    Rule,
    RuleResult,
    RuleSettings,
)

if TYPE_CHECKING:
    from contam_guard.core.match.index import ManifestIndex
    from contam_guard.core.match.stats import ItemStats

NAME = "gapped"
GAPS_MAX = 8
"""A bound on ``gaps``: 8 edited words per 8 words would chain anything."""


class Settings(RuleSettings):
    """A chained run of at least N words with ``gaps`` edited words per 8 (off by default)."""

    enabled: bool = False
    action: Action = "fail"
    gaps: int = Field(2, ge=1, le=GAPS_MAX)
    n: int | Literal["auto"] = "auto"

    def gpt3(self) -> gpt3.Settings:
        return gpt3.Settings(n=self.n)


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    n = gpt3.thresholds(index, settings.gpt3())
    longest = stats.longest_run if stats.gapped_longest is None else stats.gapped_longest
    fired = longest >= n

    def say(i: int) -> str:
        return (
            f"gapped run of {longest[i]} words ({settings.gaps} edited word(s) per 8 allowed) >= N = {n[i]}; "
            f"longest exact run {stats.longest_run[i]} words"
        )

    return RuleResult(NAME, fired, longest.astype(np.float64), Explanations(longest.size, say))


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    return np.asarray(index.word_counts >= gpt3.thresholds(index, settings.gpt3()))


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    return {}  # the chained spans exist only in a scan that ran the rule: no column to compare


RULE = Rule(
    name=NAME,
    title="Gapped run (GPT-3's N words, a few words inserted, deleted or replaced)",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: f"gapped needs a run of {gpt3.Settings(n=s.n).n} words with gaps",
    columns=(),
    sweep=_sweep,
    registered_as=gpt3.NAME,  # GPT-3's 5-gram hashes: a set registered for gpt3 is one for gapped
    config="""\
  # Gapped run: GPT-3's rule for a copy cut by a few inserted, deleted or replaced words (a
  # filler word every few words, a word deleted every few): exact runs chained across gaps of
  # at most `gaps` words, `gaps` edited words per 8 in all, reaching GPT-3's N. Off by default.
  gapped: {enabled: false, action: fail, gaps: 2, n: auto}
""",
)
