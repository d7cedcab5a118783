"""PaLM: an item is contaminated if at least 70% of its 8-grams were seen in the training data.

Definition (Chowdhery et al., "PaLM: Scaling Language Modeling with Pathways", arXiv
2204.02311v5, Section 8): examples are split by "whether at least 70% of the 8-grams in
question, prompt, or target were seen at least once" in the training data.

Here: the denominator is the item's 8-grams (words - 7); an 8-gram counts as seen when it
occurs in any scanned record, i.e. R[i] >= 8 at its start. Fires when the share is at least
``threshold`` (0.70). Items under 8 words have no 8-grams and cannot fire. 8-grams holding a
template word (``io.manifest.templates``) are left out of both counts.

Worked example (seed article, test item 0 against its number-swapped copy): 19 of its 45
8-grams are found, 42% < 70%: the rule does not fire.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from contam_guard.core.rules.base import (
    BoolArray,
    Explanations,
    FloatArray,
    Rule,
    RuleResult,
    RuleSettings,
    share,
)

if TYPE_CHECKING:
    from contam_guard.core.match.index import ManifestIndex
    from contam_guard.core.match.stats import ItemStats

NAME = "palm"


class Settings(RuleSettings):
    """At least ``threshold`` of the item's 8-grams occur in the scanned data."""

    threshold: float = Field(0.70, ge=0.0, le=1.0)


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    seen = share(stats.ngrams8_found, stats.ngrams8)
    fired = (stats.ngrams8 > 0) & (seen >= settings.threshold)
    found, grams = stats.ngrams8_found, stats.ngrams8

    def say(i: int) -> str:
        return f"{found[i]} of {grams[i]} 8-grams found ({float(seen[i]):.1%}) >= {settings.threshold:.0%}"

    explain = Explanations(seen.size, say)
    return RuleResult(NAME, fired, seen, explain)


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    return np.asarray(index.word_counts >= 8)


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    return {"palm": evaluate(stats, settings, index).fired.astype(np.float64)}


RULE = Rule(
    name=NAME,
    title="PaLM (Chowdhery et al. 2022, Sec. 8): 70% of the item's 8-grams seen",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: "palm needs 8 words",
    columns=("palm",),
    sweep=_sweep,
    mark=lambda s: (8, "PaLM: 8-grams"),
    config="""\
  # PaLM (Chowdhery et al. 2022, Sec. 8): at least 70% of the item's 8-grams seen.
  palm: {enabled: true, action: warn, threshold: 0.70}
""",
)
