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

from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import Field

from contam_guard.core.rules.base import (
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


class Settings(RuleSettings):
    """50-character windows of the alnum view; fire on any window or on the 3-draw probability."""

    mode: Literal["any_window", "probability"] = "any_window"
    probability: float = Field(0.5, ge=0.0, le=1.0)


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    p = three_draw_probability(stats.windows, stats.window_hits)
    if settings.mode == "any_window":
        fired = stats.window_hits > 0
    else:
        fired = (stats.windows > 0) & (p >= settings.probability)
    hits, windows = stats.window_hits, stats.windows

    def say(i: int) -> str:
        return f"{hits[i]} of {windows[i]} windows found; 3 draws catch it with p = {float(p[i]):.1%}"

    explain = Explanations(p.size, say)
    return RuleResult(NAME, np.asarray(fired), p, explain)


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    return np.asarray(index.window_counts > 0)


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    return {
        "gpt4 x3": three_draw_probability(stats.windows, stats.window_hits),
        "gpt4 all": (stats.window_hits > 0).astype(np.float64),
    }


RULE = Rule(
    name=NAME,
    title="GPT-4 (OpenAI 2023, App. C): 50-character substrings",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: "gpt4 needs 50 letters and digits",
    columns=("gpt4 x3", "gpt4 all"),
    sweep=_sweep,
    config="""\
  # GPT-4 (OpenAI 2023, App. C): 50-character windows of the alphanumeric text.
  # mode any_window (every window checked) or probability (3 random draws, in expectation).
  gpt4: {enabled: true, action: warn, mode: any_window, probability: 0.5}
""",
    uses_windows=True,
)
