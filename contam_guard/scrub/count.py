"""The counting pass: in how many distinct records of the whole input each golden n-gram occurs.

Records are read with the ordinary readers (every error names file:line) and hashed in batches.
Only golden n-grams are counted, in an array over the manifest's n-gram keys, so memory is
bounded by the manifest, never by the corpus. The records holding an n-gram are remembered only
while the n-gram is still at or under ``max_doc_freq`` records: at most that many per n-gram.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from contam_guard.readers import ReadOptions, read_records
from contam_guard.scan import batches
from contam_guard.scrub.golden import GoldenNgrams
from contam_guard.text.hashing import HashKey

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Job:
    """One input file and where its scrubbed copy goes (None: a dry run)."""

    path: Path
    display: str
    fmt: str
    output: Path | None


@dataclass
class InputTotals:
    records: int = 0
    chars: int = 0
    bytes: int = 0
    stamps: list[tuple[int, int]] = field(default_factory=list)
    """(size, mtime in ns) of each input when first read: a later pass checks it is unchanged."""


@dataclass(frozen=True)
class Candidates:
    """Records holding an n-gram that occurs in at most ``max_doc_freq`` records."""

    file: IntArray
    record: IntArray
    line: IntArray


def stamp(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


class _Remembered:
    """(file, record, line, key) rows for n-grams not yet seen in more than the limit."""

    def __init__(self) -> None:
        self.chunks: list[IntArray] = []
        self.rows = 0
        self.kept_after_prune = 0

    def add(self, rows: IntArray, counts: IntArray, limit: int) -> None:
        self.chunks.append(rows)
        self.rows += rows.shape[0]
        # Prune when the list has doubled: amortised linear, and never more than twice the
        # rows of n-grams still under the limit.
        if self.rows > 2 * self.kept_after_prune + 65536:
            self.prune(counts, limit)

    def prune(self, counts: IntArray, limit: int) -> IntArray:
        rows = np.concatenate(self.chunks) if self.chunks else np.zeros((0, 4), dtype=np.int64)
        rows = rows[counts[rows[:, 3]] <= limit]
        self.chunks, self.rows, self.kept_after_prune = [rows], rows.shape[0], rows.shape[0]
        return rows


def count_pass(
    jobs: list[Job],
    golden: GoldenNgrams,
    read: ReadOptions,
    key: HashKey | None,
    *,
    max_doc_freq: int,
    batch_chars: int,
) -> tuple[IntArray, Candidates, InputTotals]:
    """Counts per golden n-gram (distinct records), the candidate records, and input totals."""
    counts = np.zeros(golden.size, dtype=np.int64)
    remembered = _Remembered()
    totals = InputTotals()
    for number, job in enumerate(jobs):
        totals.stamps.append(stamp(job.path))
        for batch in batches(read_records(job.path, job.display, read, format_name=job.fmt), batch_chars):
            totals.records += len(batch)
            totals.chars += sum(len(r.text) for r in batch)
            totals.bytes += sum(len(r.raw or b"") for r in batch)
            hits = golden.find([r.text for r in batch], key)
            if not len(hits):
                continue
            # Distinct (n-gram, record) pairs: a batch never splits a record, so summing over
            # batches counts distinct records.
            pairs = np.unique(hits.key * len(batch) + hits.doc)
            gram, doc = np.divmod(pairs, len(batch))
            np.add.at(counts, gram, 1)
            under = counts[gram] <= max_doc_freq
            gram, doc = gram[under], doc[under]
            index = np.fromiter((batch[d].index for d in doc.tolist()), dtype=np.int64, count=doc.size)
            line = np.fromiter((batch[d].line or 0 for d in doc.tolist()), dtype=np.int64, count=doc.size)
            remembered.add(
                np.stack([np.full(doc.size, number), index, line, gram], axis=1), counts, max_doc_freq
            )
    rows = remembered.prune(counts, max_doc_freq)
    records = np.unique(rows[:, :3], axis=0) if rows.size else np.zeros((0, 3), dtype=np.int64)
    return counts, Candidates(records[:, 0], records[:, 1], records[:, 2]), totals
