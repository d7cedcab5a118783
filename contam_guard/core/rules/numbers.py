"""numbers: GPT-3's rule on the item's words with every number masked.

A copy whose numbers were changed (GSM-Plus's "numerical substitution": ``16 eggs`` becomes
``20 eggs``, ``three`` becomes ``five``) is cut by every changed number into runs that GPT-3's
rule may find too short. Here both sides are compared with every number one placeholder word
(spec ``numbers-v1``, ``contam_guard/core/reword/numbers.py``: digits, decimals, thousands
separators, fractions, percentages, currency amounts, ordinals and English number words), so
such a copy shares the whole item.

Here: fires when the longest run of masked words shared with one record is at least ``n``
(default 13, as GPT-3's). Computed from the manifest alone, from the ``FIELD~numbers-v1``
derived view (its masked 5-gram hashes, keyed like every other hash); items of a set
registered before it have no such view and cannot fire until it is registered again (or, in a
manifest of an older spec, upgraded).

Worked example (the seed article's test item 0, "Janet's ducks lay 16 eggs per day. She eats
three for breakfast ...", 52 words, against its copy with 16, three, four and $2 changed): GPT-3's
longest run is 17 words; masked, the two are the same 52 words, so the run is 52 >= 13.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

NAME = "numbers"


class Settings(RuleSettings):
    """A shared run of at least ``n`` words once every number is one placeholder."""

    action: Action = "warn"
    n: int = Field(13, ge=5, le=MAX_WORDS)


def runs(stats: ItemStats) -> IntArray:
    """Per item: the longest masked run shared with one record (zeros without the pass)."""
    if stats.reword is None:
        return np.zeros(stats.words.size, dtype=np.int64)
    return stats.reword.numbers_run


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    """Fires where the longest masked run reaches n; each pair reaching it is its own finding."""
    run = runs(stats)
    bar = np.full(run.size, settings.n, dtype=np.int64)
    explain = Explanations(run.size, lambda i: f"longest {_detail(int(run[i]), settings.n)}")
    return RuleResult(NAME, run >= bar, run.astype(np.float64), explain, pair_bar=bar)


def _detail(value: float, bar: float) -> str:
    return f"shared run with numbers masked {int(value)} words >= N = {int(bar)}"


def _pair_run(pair: Any) -> float:
    return float(pair.numbers_run)


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    # Masking merges a number's words into one, so this counts words before it: an upper bound.
    return np.asarray(index.word_counts >= settings.n)


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    return {NAME: (runs(stats) >= settings.n).astype(np.float64)}


RULE = Rule(
    name=NAME,
    title="numbers: GPT-3's rule with every number one placeholder word",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: f"numbers needs a run of {s.n} words",
    columns=(NAME,),
    sweep=_sweep,
    per_pair=True,
    pair_value=_pair_run,
    pair_detail=_detail,
    config="""\
  # numbers: GPT-3's rule with every number (digits, fractions, %, number words)
  # one placeholder word: catches copies with changed numbers. n: 5..
  numbers: {enabled: true, action: warn, n: 13}
""",
)
