"""The counting pass: in how many distinct records of the whole input each golden n-gram occurs.

Records are read with the ordinary readers (every error names file:line) and hashed in batches;
JSONL goes through the scan's prefilter first, and only records sharing a run of n words with
some golden item (and the lines the prefilter leaves to the exact reader) are read.
Only golden n-grams are counted, in an array over the manifest's n-gram keys, so memory is
bounded by the manifest, never by the corpus. The records holding an n-gram are remembered only
while the n-gram is still at or under ``max_doc_freq`` records: at most that many per n-gram.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.glued_lines import read_again
from contam_guard.core.match import prefilter as prefilter_status
from contam_guard.core.match.arrays import sorted_unique
from contam_guard.core.match.matcher import NO_HITS, ItemTotals, match_hits
from contam_guard.core.match.prefilter import LineFormat, Prefilter, line_format
from contam_guard.core.scrub.golden import GoldenNgrams
from contam_guard.core.spec.hashing import HashKey
from contam_guard.io.batching import batches
from contam_guard.io.readers import ReadOptions, Record, read_records
from contam_guard.io.readers.blocks import starts_record

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Job:
    """One input file and where its scrubbed copy goes (None: a dry run)."""

    path: Path
    display: str
    fmt: str
    output: Path | None
    keep: frozenset[int] = frozenset()
    """Records left out of the filter and copied unchanged (every pair they are in is
    allowlisted: ``core.scrub.allowed``)."""


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
    counter = _Counter(golden, key, max_doc_freq)
    totals = InputTotals()
    prefilter = Prefilter(golden.index, windows=False, key=key)
    for number, job in enumerate(jobs):
        totals.stamps.append(stamp(job.path))
        lines = line_format(job.fmt, read)
        if lines is not None:
            batches_read = _prefiltered(job, read, prefilter, lines, golden, totals)
        else:
            batches_read = _every_record(job, read, batch_chars, totals)
        for batch in batches_read:
            counter.add(number, [r for r in batch if r.index not in job.keep] if job.keep else batch)
    rows = counter.remembered.prune(counter.counts, max_doc_freq)
    records = np.unique(rows[:, :3], axis=0) if rows.size else np.zeros((0, 3), dtype=np.int64)
    return counter.counts, Candidates(records[:, 0], records[:, 1], records[:, 2]), totals


def _every_record(
    job: Job, read: ReadOptions, batch_chars: int, totals: InputTotals
) -> Iterator[list[Record]]:
    for batch in batches(
        read_records(job.path, job.display, read, format_name=job.fmt), batch_chars, Record.size
    ):
        totals.records += len(batch)
        totals.chars += sum(r.chars for r in batch)
        totals.bytes += sum(len(r.raw or b"") for r in batch)
        yield batch


def _prefiltered(
    job: Job,
    read: ReadOptions,
    prefilter: Prefilter,
    line_reading: LineFormat,
    golden: GoldenNgrams,
    totals: InputTotals,
) -> Iterator[list[Record]]:
    """Per block of a JSONL or text file, the records that can hold a golden n-gram.

    A record holds an n-gram of ``golden.n`` words from an item only if it shares a run of
    ``golden.n`` words with that item: the prefilter's 5-gram hits, read as runs, say which
    records do. Only those, and the lines the prefilter leaves to the exact reader, are parsed.
    """
    scratch = ItemTotals.empty(golden.index)
    blocks = prefilter.blocks(job.path, job.display, read, line_reading)
    for found in blocks:
        block = read_again(found)  # glued words: the exact reader reads them a second time
        lines = block.lines
        hashed = (lines.status == prefilter_status.CLEAN) | (lines.status == prefilter_status.HITS)
        totals.records += int(np.count_nonzero(starts_record(lines.status)))
        totals.chars += int(lines.chars[hashed].sum())
        totals.bytes += int(np.diff(lines.end, prepend=0)[lines.status != prefilter_status.BLANK].sum())
        wanted = [block.record(k) for k in np.flatnonzero(lines.status == prefilter_status.EXACT).tolist()]
        totals.chars += sum(r.chars for r in wanted)
        hit_lines, grams, _ = lines.hit_records()
        if hit_lines.size:
            table = match_hits(golden.index, grams, NO_HITS, int(hit_lines.size), scratch)
            long_enough = sorted_unique(table.record[table.longest >= golden.n])
            wanted += [block.record(k) for k in hit_lines[long_enough].tolist()]
        if wanted:
            yield wanted


class _Counter:
    """Counts of golden n-grams over distinct records, and the records of the rare ones."""

    def __init__(self, golden: GoldenNgrams, key: HashKey | None, max_doc_freq: int) -> None:
        self.golden, self.key, self.max_doc_freq = golden, key, max_doc_freq
        self.counts = np.zeros(golden.size, dtype=np.int64)
        self.remembered = _Remembered()

    def add(self, number: int, batch: list[Record]) -> None:
        hits = self.golden.find_segmented([[s.text for s in r.segments] for r in batch], self.key)
        if not len(hits):
            return
        # Distinct (n-gram, record) pairs: a batch never splits a record, so summing over
        # batches counts distinct records.
        pairs = sorted_unique(hits.key * len(batch) + hits.doc)
        gram, doc = np.divmod(pairs, len(batch))
        np.add.at(self.counts, gram, 1)
        under = self.counts[gram] <= self.max_doc_freq
        gram, doc = gram[under], doc[under]
        index = np.fromiter((batch[d].index for d in doc.tolist()), dtype=np.int64, count=doc.size)
        line = np.fromiter((batch[d].line or 0 for d in doc.tolist()), dtype=np.int64, count=doc.size)
        self.remembered.add(
            np.stack([np.full(doc.size, number), index, line, gram], axis=1), self.counts, self.max_doc_freq
        )
