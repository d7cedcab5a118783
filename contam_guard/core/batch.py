"""A batch of records as every rule family sees it: its documents, hashed once.

The normaliser and hasher run once per batch (``core.spec.features.extract_features``: words, their
hashes, 5-grams and 50-character windows); each family reads what it needs of the result, so a
record is read and normalised once whatever rules are on.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec.features import TextFeatures, extract_features
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.spec.normalise import TextSpec
from contam_guard.io.readers.base import Record
from contam_guard.io.readers.documents import Document, documents

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Units:
    """Records as the documents the engine hashes (``io.readers.documents``: a record's value strings
    joined in order, so that a run may cross from one into the next; each key on its own), and
    ``first_unit[r]`` is record r's first document (``first_unit[-1]`` the count)."""

    records: list[Record]
    documents: list[Document]
    first_unit: IntArray

    @classmethod
    def of(cls, records: list[Record]) -> Units:
        per_record = [documents(record.segments) for record in records]
        counts = np.fromiter((len(found) for found in per_record), dtype=np.int64, count=len(records))
        first_unit = np.zeros(len(records) + 1, dtype=np.int64)
        np.cumsum(counts, out=first_unit[1:])
        return cls(records, [d for found in per_record for d in found], first_unit)

    @property
    def texts(self) -> list[str]:
        return [document.text for document in self.documents]

    @cached_property
    def unit_record(self) -> IntArray:
        """The record of each document."""
        return np.repeat(np.arange(len(self.records), dtype=np.int64), np.diff(self.first_unit))


@dataclass(frozen=True)
class Batch:
    """Records, their units, and the units' features under the manifest's spec and key."""

    units: Units
    features: TextFeatures
    spec: TextSpec

    @classmethod
    def of(cls, records: list[Record], *, spec: TextSpec, key: HashKey | None, windows: bool) -> Batch:
        units = Units.of(records)
        return cls(units, extract_features(units.texts, key=key, windows=windows, spec=spec), spec)

    @property
    def records(self) -> list[Record]:
        return self.units.records

    @property
    def chars(self) -> int:
        """Characters of the records' strings (the documents' separators not counted)."""
        return sum(record.chars for record in self.units.records)
