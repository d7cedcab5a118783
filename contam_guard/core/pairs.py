"""A (test item, training record) pair as every output sees it, and the columns it carries.

Each rule family (``core.families``) declares the numbers it measures per pair and per item as
``Column``s; a ``Pair`` carries the value of every registered column (0 where a family found
nothing), so that the reviews, the CSVs, SARIF and the engines' frames loop over the columns
instead of naming statistics one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from contam_guard.core.match.stats import ItemStats

SnippetKind = Literal["run", "window", "masked", "reworded"]
"""What a snippet shows: a shared run of words, a shared 50-character window, a run shared once
numbers are masked (its numbers differ), or a passage that says the item in other words (no
word is known to be shared: reviews must not highlight it as copied)."""


@dataclass(frozen=True, slots=True)
class Snippet:
    """Training-side text around what a pair shares: ``before``, the shared ``run``, ``after``."""

    before: str
    run: str
    after: str
    start: int
    """Character offset of ``run`` in the record's string."""
    span: str = ""
    """The allowlist digest of ``run`` (``core.match.pairs.run_span``), when it was taken before the
    run was changed for display (``--redact-pii``) or is not the shared words; "" otherwise."""
    kind: SnippetKind = "run"


@dataclass(frozen=True)
class Column:
    """A number a rule family measures, per pair and per item."""

    name: str
    """Its key in ``Pair.numbers``, the JSON review and the Spark frames."""
    key: str
    """Its name in every output: the CSVs' header, the JSON review's key, SARIF's property, the
    Spark frames' column."""
    item: Callable[[ItemStats], NDArray[np.generic]]
    """The per-item value (over everything scanned)."""
    label: str
    """How a review shows it, ``{}`` standing for the value (``"masked run {} words"``)."""
    title: str
    """What it is, in a few words (the HTML review's term)."""
    decimals: int = 0
    """0: an integer; otherwise a float rounded to this many decimals."""

    def shown(self, value: float) -> int | float:
        """The value as the outputs write it."""
        return round(float(value), self.decimals) if self.decimals else int(value)


@dataclass(frozen=True, slots=True)
class Pair:
    """A notable (test item, training record) pair: where the record is, its numbers, a snippet.

    ``field`` names the record's string(s) holding the snippet (``completion``,
    ``messages[2].content``; "" for plain text). ``numbers`` holds every registered column's
    value (``core.families.COLUMNS``).
    """

    item: int
    source: str
    record: int
    line: int | None
    field: str
    numbers: Mapping[str, float]
    snippet: Snippet
    allowed_inline: bool = False

    def value(self, column: str) -> float:
        return float(self.numbers.get(column, 0))

    @property
    def longest_run(self) -> int:
        return int(self.numbers.get("longest_run", 0))

    @property
    def ngrams8_found(self) -> int:
        return int(self.numbers.get("ngrams8_found", 0))

    @property
    def covered_l10(self) -> int:
        return int(self.numbers.get("covered_l10", 0))

    @property
    def window_hits(self) -> int:
        return int(self.numbers.get("window_hits", 0))

    @property
    def numbers_run(self) -> int:
        return int(self.numbers.get("numbers_run", 0))

    @property
    def reworded(self) -> float:
        return float(self.numbers.get("reworded", 0.0))

    @property
    def in_field(self) -> str:
        """``, field messages[2].content`` for reports; "" for a plain-text record."""
        return f", field {self.field}" if self.field else ""

    def rank(self) -> tuple[float, ...]:
        """How telling the pair is, most first when sorted descending: the longest shared run,
        the shared windows, the masked run, the reworded score."""
        return (self.longest_run, self.window_hits, self.numbers_run, self.reworded)
