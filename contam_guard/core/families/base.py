"""What a rule family gives for a batch: per (record, item) pair its numbers, whether the pair is
worth listing, and where in the record to show it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.pairs import SnippetKind

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class Located:
    """Where a pair's snippet lies: characters ``start:end`` of unit ``unit`` of the batch."""

    unit: int
    start: int
    end: int
    kind: SnippetKind


@dataclass(frozen=True)
class FamilyRows:
    """One family's pairs in a batch: row k is (record[k], item[k]) with ``numbers[c][k]`` for
    each of the family's columns; ``notable[k]``: one of its rules lists the pair."""

    record: IntArray
    item: IntArray
    numbers: Mapping[str, NDArray[np.generic]]
    notable: BoolArray
    locate: Callable[[int], Located | None]
    """Where row k's snippet lies (None: this family cannot say)."""

    @classmethod
    def empty(cls, columns: tuple[str, ...]) -> FamilyRows:
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none, {c: none for c in columns}, np.zeros(0, dtype=np.bool_), lambda _: None)

    def __len__(self) -> int:
        return int(self.record.size)
