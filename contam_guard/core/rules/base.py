"""What a rule is: settings, a verdict per item over the shared statistics, and what it needs.

A rule is one module (``contam_guard/core/rules/<name>.py``) defining its settings model and its
``RULE``, and one line in the registry (``contam_guard/core/rules/__init__.py``): the config, the
command line (``--only``, ``--fail-on`` ...), the verdicts, the sweep table, SARIF and the "can
this scan find anything" notice all read the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    # The engine's types, for annotations only: the config imports the rules (for their
    # settings), and must not load the engine and its compiled kernels to do so.
    from contam_guard.core.match.index import ManifestIndex
    from contam_guard.core.match.stats import ItemStats

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

Action = Literal["fail", "warn"]
BoolArray = NDArray[np.bool_]
MAX_WORDS = 1_000_000
"""Bound of every word-count setting: no test item is a million words long, and a bound keeps a
typo (``n: 99999999999999999999999``) from overflowing the engine's integer arrays."""


class RuleSettings(BaseModel):
    """Every rule's settings: on or off, and what a finding does. A rule adds its numbers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = True
    action: Action = "warn"


S = TypeVar("S", bound=RuleSettings)


class Explanations(Sequence[str]):
    """One sentence per item, written when read: a verdict reads only the fired items' (with
    100,000 registered items, writing every item's took a good part of a second)."""

    def __init__(self, size: int, say: Callable[[int], str]) -> None:
        self._size = size
        self._say = say

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._say(i) for i in range(*index.indices(self._size))]
        if not -self._size <= index < self._size:
            raise IndexError(index)
        return self._say(index % self._size)


@dataclass(frozen=True)
class RuleResult:
    """A rule's verdict on every item: a score, whether it fired, and the numbers behind it."""

    rule: str
    fired: NDArray[np.bool_]
    score: FloatArray
    explain: Sequence[str]
    """One short sentence per item with the numbers (only read for fired items)."""
    pair_bar: IntArray | FloatArray | None = None
    """For a rule decided per (item, record) pair (GPT-3): the shared run a pair needs, per item;
    each such pair is its own finding. None: one finding per fired item, listing its pairs."""


def _run_detail(value: float, bar: float) -> str:
    return f"shared run of {int(value)} words >= N = {int(bar)}"


def _more_run_detail(records: int, longest: int, bar: float) -> str:
    return (
        f"and {records} more record(s) not listed (--max-pairs-per-item) share a run "
        f"of up to {longest} words >= N = {int(bar)}"
    )


@dataclass(frozen=True)
class Rule(Generic[S]):
    """One overlap rule, as the registry holds it."""

    name: str
    title: str
    """One line with the citation, for SARIF and listings."""
    settings: type[S]
    evaluate: Callable[[ItemStats, S, ManifestIndex], RuleResult]
    sees: Callable[[ManifestIndex, S], BoolArray]
    """Per item: whether it is long enough for the rule to fire at all."""
    needs: Callable[[S], str]
    """What an item needs for the rule to see it, in words ("gpt3 needs a run of 13 words")."""
    columns: tuple[str, ...]
    """The rule's columns in the sweep table."""
    sweep: Callable[[ItemStats, S, ManifestIndex], dict[str, FloatArray]]
    """For each of ``columns``, per item, how much the item counts towards it (0..1)."""
    config: str
    """The rule's lines in the commented default config (``contam-guard init``)."""
    mark: Callable[[S], tuple[int, str] | None] = lambda settings: None
    """The word threshold the sweep plot marks for the rule, with its label (None: none)."""
    uses_windows: bool = False
    """Reads the 50-character windows (the scan computes them only when such a rule is on)."""
    per_pair: bool = False
    """Decided per (item, record) pair (``RuleResult.pair_bar``), not per item over everything
    scanned: each such finding names one record."""
    pair_value: Callable[[Any], float] | None = None
    """For a per-pair rule: the number of a ``core.pairs.Pair`` that must reach the bar (None: its
    longest shared run, GPT-3's; such a rule also sums the pairs beyond the cap)."""
    pair_detail: Callable[[float, float], str] = _run_detail
    """A per-pair finding's sentence, from the pair's value and the bar."""
    more_detail: Callable[[int, int, float], str] = _more_run_detail
    """The sentence of a per-pair finding for the records beyond ``--max-pairs-per-item``
    sharing one run, from their count, that run's length and the bar."""
    registered_as: str | None = None
    """The rule whose registration this rule reads (the manifest records that rule's name): a
    rule over the same stored hashes as another adds no rule a set is registered for."""
    defers_to: str | None = None
    """Another per-pair rule over the same pair value: on the items where that rule is on, fails,
    and has a bar no higher than this rule's, every pair this rule would report is that rule's
    failing finding already, so this rule reports none there (no pair fails twice)."""

    def settings_of(self, rules: Any) -> S:
        """This rule's settings in a ``core.config.Rules``."""
        value = getattr(rules, self.name)
        assert isinstance(value, self.settings)
        return value


def share(numerator: IntArray, denominator: IntArray) -> FloatArray:
    """numerator / denominator per item, 0 where the denominator is 0."""
    return np.divide(
        numerator, denominator, out=np.zeros(numerator.size, dtype=np.float64), where=denominator > 0
    )


__all__ = [
    "MAX_WORDS",
    "Action",
    "BoolArray",
    "Explanations",
    "FloatArray",
    "IntArray",
    "Rule",
    "RuleResult",
    "RuleSettings",
    "share",
]
