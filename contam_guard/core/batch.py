"""A batch of records as every rule family sees it: its documents, hashed once.

The normaliser and hasher run once per batch (``core.spec.features.extract_features``: words, their
hashes, 5-grams and 50-character windows); each family reads what it needs of the result, so a
record is read and normalised once whatever rules are on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec import glued
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
    ``first_unit[r]`` is record r's first document (``first_unit[-1]`` the count).

    A document holding words glued together (``core.spec.glued``: camelCase, U+180E for spaces)
    is followed, among its record's documents, by its second reading, whose offsets ``original``
    maps back (``derived[unit]``: the document it reads again, and how)."""

    records: list[Record]
    documents: list[Document]
    first_unit: IntArray
    derived: dict[int, tuple[int, glued.Derived]] = field(default_factory=dict)

    @classmethod
    def of(cls, records: list[Record]) -> Units:
        per_record = [documents(record.segments) for record in records]
        again = glued.readings([d.text for found in per_record for d in found])
        docs: list[Document] = []
        derived: dict[int, tuple[int, glued.Derived]] = {}
        counts = np.zeros(len(records), dtype=np.int64)
        flat = 0
        for r, found in enumerate(per_record):
            first = len(docs)
            docs += found
            for k, document in enumerate(found):
                reading = again.get(flat + k)
                if reading is not None:
                    derived[len(docs)] = (first + k, reading)
                    starts = tuple(reading.shifted(s) for s in document.starts)
                    docs.append(Document(reading.text, document.segments, starts))
            flat += len(found)
            counts[r] = len(docs) - first
        first_unit = np.zeros(len(records) + 1, dtype=np.int64)
        np.cumsum(counts, out=first_unit[1:])
        return cls(records, docs, first_unit, derived)

    def original(self, unit: int, start: int, end: int) -> tuple[int, int, int]:
        """(unit, start, end) of characters ``start:end`` of a unit, in the document it reads
        again when it is a second reading."""
        if unit not in self.derived:
            return unit, start, end
        source, reading = self.derived[unit]
        return source, reading.original(start), reading.original(end)

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
