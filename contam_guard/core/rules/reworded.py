"""reworded: a training record that says an item in other words.

The n-gram rules see almost nothing of a rewording (the seed article: 0.8% of GSM-Plus's
"problem understanding" copies). This rule compares what the two are about: each item's set of
content features (``contam_guard/core/reword/content.py``, spec ``words-v2``: content words' stems
cut to 5 characters, number values, each number with the word after it, and each two
consecutive numbers), IDF-weighted within its set and view (ln(1 + N/df)).
A training string (or, for a long one, each window of 80 content words) scores

    c / (I + 0.5 * (U - c))

with c the weight of what they share, I the item's and U the string's own (Tversky's index,
beta 0.5: added words count half). A string of several lines is also scored line by line and
without its first line, the best kept (a question and its choices in one string: the stem
alone, the choices alone). Candidates come from an inverted index from feature to item, never
all pairs. Computed from the manifest alone (the ``FIELD~words-v2`` derived view: hashes only,
keyed like every other hash).

A field of Python code (HumanEval's prompts and solutions) has no prose features: its items
are the prose of their docstrings, examples left out (``FIELD~code-v1``, an item with at least
``code.CODE_MIN_FEATURES`` of them), scored the same way against the docstrings of each
scanned string (``core/reword/code.py``): a rephrased function keeps what its docstring says
while its names, loops and doctest values change.

Fires when the score of a pair reaches ``threshold`` (0.32: calibrated on the development sets
of ``tests/data/rewordings``: 94% of its hand-written rewordings of GSM8K test questions reach
it, 100% and 74% of its close and aggressive rephrasings of GSM8K train questions, while at
most 1% of GSM8K's training questions reach it against the test set; docs/decisions.md,
"Rewording recall"). Each pair is its own finding, and reports its score.

Worked examples (``tests/data/rewordings``): GSM8K test item 160 ("A tank of water has a depth
of 17 feet on Monday ...") against its rewording ("On Monday the water in a tank stands 17 feet
deep ...") keeps tank, water, deep/depth-like words and every number: 0.786, a finding. Item 84
("A football team played 22 games. They won 8 more than they lost ...") against "A soccer club
finished a season of 22 matches. Its wins exceeded its losses by 8 ..." shares only ``#22``,
``#8`` and ``win``: 0.145, below the bar (every other word was replaced).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from contam_guard.core.rules.base import BoolArray, Explanations, FloatArray, Rule, RuleResult, RuleSettings

if TYPE_CHECKING:
    from contam_guard.core.match.index import ManifestIndex
    from contam_guard.core.match.stats import ItemStats

NAME = "reworded"
MIN_FEATURES = 5
"""Items with fewer content features are too short to tell a rewording from a coincidence."""


class Settings(RuleSettings):
    """A (record, item) similarity of content features of at least ``threshold``. Scores from
    ``report_floor`` up (or from the threshold, when lower) are computed exactly and reported:
    an item's best score in the items CSV, the near misses under the threshold. Pairs under it
    are never scored, and an item whose best pair is under it shows 0. A floor at the
    threshold leaves the findings as they are and makes the scan walk fewer candidates: with
    100,000 registered items, a third of the time (docs/decisions.md, Performance Q10)."""

    threshold: float = Field(0.32, gt=0.0, le=1.0)
    report_floor: float = Field(0.2, gt=0.0, le=1.0)


def scores(stats: ItemStats) -> FloatArray:
    """Per item: its best score with one record (zeros without the pass)."""
    if stats.reword is None:
        return np.zeros(stats.words.size, dtype=np.float64)
    return stats.reword.reworded


def _seen(stats: ItemStats) -> BoolArray:
    if stats.reword is None:
        return np.zeros(stats.words.size, dtype=np.bool_)
    return np.asarray(stats.reword.content_words >= MIN_FEATURES)


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    """Fires where some record's score reaches the threshold; each such pair is a finding."""
    score = scores(stats)
    bar = np.full(score.size, settings.threshold, dtype=np.float64)
    explain = Explanations(score.size, lambda i: _detail(float(score[i]), settings.threshold))
    return RuleResult(NAME, (score >= bar) & _seen(stats), score, explain, pair_bar=bar)


def _detail(value: float, bar: float) -> str:
    return f"reworded score {value:.3f} >= {bar:.2f}"


def _pair_score(pair: Any) -> float:
    return float(pair.reworded)


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    # Content features are not in the engine's index; every item with some words may have them.
    return np.asarray(index.word_counts >= MIN_FEATURES)


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    return {NAME: evaluate(stats, settings, index).fired.astype(np.float64)}


RULE = Rule(
    name=NAME,
    title="reworded: IDF-weighted overlap of content words and numbers",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: f"reworded needs {MIN_FEATURES} content words",
    columns=(NAME,),
    sweep=_sweep,
    per_pair=True,
    pair_value=_pair_score,
    pair_detail=_detail,
    config="""\
  # reworded: a record saying an item in other words (IDF-weighted overlap of
  # content words and numbers). threshold: 0..1. Scores from report_floor up are
  # reported (the near misses); at the threshold, a large manifest scans faster.
  reworded: {enabled: true, action: warn, threshold: 0.32, report_floor: 0.2}
""",
)
