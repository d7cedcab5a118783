"""The scan task: input rows in, the local engine's batches, notable pairs and totals out.

Each task reads its rows into ``Record``s (``records.py``), gathers them into batches of about
``batch_chars`` characters and hands each batch to ``contam_guard.engine.scanner.scan_batch``: the very
function the local engine runs per batch (``extract_features`` → ``match_batch`` → notable
pairs and snippets). What leaves the task (``OUTPUT_SCHEMA``, one ``kind`` per row):

- ``PAIR``: a notable pair (a shared run of 8+ words or a shared window) with its numbers and
  the training-side snippet, record and line still split-local;
- ``RUN`` / ``WINDOW``: the task's per-item totals, sparse: (flat position, R) where R > 0,
  and each window position found;
- ``SPLIT``: each split's counts (lines, records, bytes, characters), for numbering and totals;
- ``FIELD``: the fields read in a file (``run`` holds the path without list positions), for
  the summary's census, as the local engine keeps it;
- ``REWORD_ITEM`` / ``REWORD_HIT``, when a rewording rule is on (issue 15; the payload's
  ``reword``): the same records go through the local pass (``reword.scan_pass.Accumulator``) and
  the task sends its per-item maxima, sparse (item in ``position``, numbers run in ``value``,
  reworded score in ``score``), and its kept (item, record) hits with their snippet (the start of
  the string, ``reword.step.snippet_of``; the allowlist key of the whole string in ``span``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark import Broadcast, TaskContext
from pyspark.sql import types as st

from contam_guard.engine.batching import batches
from contam_guard.engine.matcher import ItemTotals
from contam_guard.engine.scanner import (
    PairRow,
    ScanResult,
    Snippet,
    scan_batch,  # the local engine's own batch step
)
from contam_guard.readers.base import Record
from contam_guard.reword.scan_pass import Accumulator, Hit, RewordStats
from contam_guard.reword.step import snippet_of
from contam_guard.spark.inputs import InputPlan, canonical
from contam_guard.spark.payload import EnginePayload, index_of, reword_index_of, scorers_of
from contam_guard.spark.records import RowReader, SplitCounter, is_blank

PAIR, RUN, WINDOW, SPLIT, FIELD, REWORD_ITEM, REWORD_HIT = 0, 1, 2, 3, 4, 5, 6
_TOTALS_CHUNK = 1 << 20

_FIELDS: list[tuple[str, pa.DataType, st.DataType]] = [
    ("kind", pa.int8(), st.ByteType()),
    ("file", pa.string(), st.StringType()),
    ("block", pa.int64(), st.LongType()),
    ("item", pa.int64(), st.LongType()),
    ("record", pa.int64(), st.LongType()),
    ("line", pa.int64(), st.LongType()),
    ("field", pa.string(), st.StringType()),
    ("longest_run", pa.int64(), st.LongType()),
    ("ngrams8_found", pa.int64(), st.LongType()),
    ("covered_l10", pa.int64(), st.LongType()),
    ("window_hits", pa.int64(), st.LongType()),
    ("allow", pa.bool_(), st.BooleanType()),
    ("before", pa.string(), st.StringType()),
    ("run", pa.string(), st.StringType()),
    ("after", pa.string(), st.StringType()),
    ("start", pa.int64(), st.LongType()),
    ("position", pa.int64(), st.LongType()),
    ("value", pa.int64(), st.LongType()),
    ("lines", pa.int64(), st.LongType()),
    ("records", pa.int64(), st.LongType()),
    ("bytes", pa.int64(), st.LongType()),
    ("chars", pa.int64(), st.LongType()),
    ("score", pa.float64(), st.DoubleType()),
    ("span", pa.string(), st.StringType()),
]
ARROW_SCHEMA = pa.schema([pa.field(name, arrow) for name, arrow, _ in _FIELDS])
OUTPUT_SCHEMA = st.StructType([st.StructField(name, spark, True) for name, _, spark in _FIELDS])

ArrowMap = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]


def _batch(columns: dict[str, Any], rows: int) -> pa.RecordBatch:
    """A batch of ``ARROW_SCHEMA`` from the given columns; the others are all null."""
    arrays = [
        pa.array(columns[name], type=arrow) if name in columns else pa.nulls(rows, type=arrow)
        for name, arrow, _ in _FIELDS
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)


class PartitionScan:
    """One task's scan: its splits, the current batch, and the engine's running result."""

    def __init__(self, payload: EnginePayload, plan: InputPlan, partition: int) -> None:
        index = index_of(payload)
        self.payload = payload
        self.plan = plan
        self.partition = partition
        self.result = ScanResult(index=index, totals=ItemTotals.empty(index))
        self.reader = RowReader(plan.read)
        self.splits: list[SplitCounter] = []
        self._split_at: dict[tuple[str, int], int] = {}
        self._keys: dict[str, str] = {}
        self.reword: Accumulator | None = None
        if payload.reword is not None:
            bars = payload.reword.bars(index.items)
            scorers = scorers_of(payload, bars)
            self.reword = Accumulator(reword_index_of(payload), index.spec, payload.key, bars, scorers)

    def _canonical(self, path: str) -> str:
        key = self._keys.get(path)
        if key is None:
            key = self._keys[path] = canonical(path)
        return key

    def _split(self, path: str, block: int | None) -> int:
        # A DataFrame's rows have no file split: the task's partition numbers them.
        key = (self._canonical(path), self.partition if block is None else block)
        number = self._split_at.get(key)
        if number is None:
            number = len(self.splits)
            self._split_at[key] = number
            self.splits.append(SplitCounter(*key))
        return number

    def records(self, batch: pa.RecordBatch) -> Iterator[Record]:
        """The records of one input batch (a blank line is none), numbered split by split."""
        files = batch.column("file").to_pylist()
        blocks = batch.column("block").to_pylist()
        raws = batch.column("raw").to_pylist()
        texts = batch.column("text").to_pylist()
        rows = batch.column("row").to_pylist()
        allows = batch.column("allow").to_pylist()
        for i in range(batch.num_rows):
            number = self._split(files[i], blocks[i])
            split = self.splits[number]
            file = self.plan.files[split.file]
            if file.fmt == "text":  # a whole file: its paragraphs
                yield from self.reader.text_records(file, split, raws[i], str(number))
                continue
            if file.fmt == "jsonl":
                record = self.reader.line_record(file, split, raws[i], str(number))
            else:
                row = (texts[i], raws[i], rows[i], bool(allows[i]))
                record = self.reader.row_record(file, split, row, str(number))
            if record is not None:
                yield record

    def scan(self, input_batches: Iterator[pa.RecordBatch]) -> None:
        """Every record, in the local engine's batches, through its own batch step."""
        records = (record for batch in input_batches for record in self.records(batch))
        for batch in batches(records, self.payload.batch_chars, Record.size):
            scan_batch(self.result, batch, self.payload.key, self.payload.windows)
            if self.reword is not None:  # the rewording rules' pass, on the same records
                self.reword.add(batch, self.payload.batch_chars)

    def finish(self) -> Iterator[pa.RecordBatch]:
        if self.result.pairs:
            yield self._pairs(self.result.pairs)
        if self.reword is not None:
            yield from self._reworded(self.reword.stats())
        totals = self.result.totals
        run = np.flatnonzero(totals.run)
        for first in range(0, run.size, _TOTALS_CHUNK):
            at = run[first : first + _TOTALS_CHUNK]
            columns = {"kind": np.full(at.size, RUN, np.int8), "position": at, "value": totals.run[at]}
            yield _batch(columns, at.size)
        found = np.flatnonzero(totals.window_found)
        for first in range(0, found.size, _TOTALS_CHUNK):
            at = found[first : first + _TOTALS_CHUNK]
            yield _batch({"kind": np.full(at.size, WINDOW, np.int8), "position": at}, at.size)
        seen = sorted(
            {
                (self.splits[int(name)].file, path)
                for name, paths in self.result.fields.items()
                for path in paths
            }
        )
        if seen:
            yield _batch(
                {"kind": [FIELD] * len(seen), "file": [f for f, _ in seen], "run": [p for _, p in seen]},
                len(seen),
            )
        if self.splits:
            yield _batch(
                {
                    "kind": [SPLIT] * len(self.splits),
                    "file": [s.file for s in self.splits],
                    "block": [s.block for s in self.splits],
                    "lines": [s.lines for s in self.splits],
                    "records": [s.records for s in self.splits],
                    "bytes": [s.size for s in self.splits],
                    "chars": [s.chars for s in self.splits],
                },
                len(self.splits),
            )

    def _pairs(self, pairs: list[PairRow]) -> pa.RecordBatch:
        return _batch(
            {
                **self._placed(PAIR, pairs),
                **{name: [getattr(p, name) for p in pairs] for name in PairRow.NUMBERS},
                **_snippet_columns([p.snippet for p in pairs]),
            },
            len(pairs),
        )

    def _placed(self, kind: int, rows: Sequence[PairRow | Hit]) -> dict[str, list[Any]]:
        """The columns every pair-like row has: where it lies (split-local) and its item."""
        splits = [self.splits[int(r.source)] for r in rows]
        return {
            "kind": [kind] * len(rows),
            "file": [s.file for s in splits],
            "block": [s.block for s in splits],
            "item": [r.item for r in rows],
            "record": [r.record for r in rows],
            "line": [r.line for r in rows],
            "field": [r.field for r in rows],
            "allow": [r.allowed_inline for r in rows],
        }

    def _reworded(self, stats: RewordStats) -> Iterator[pa.RecordBatch]:
        """The pass's per-item maxima (items with a nonzero one) and its kept hits."""
        found = np.flatnonzero((stats.numbers_run > 0) | (stats.reworded > 0))
        for first in range(0, found.size, _TOTALS_CHUNK):
            at = found[first : first + _TOTALS_CHUNK]
            columns = {
                "kind": np.full(at.size, REWORD_ITEM, np.int8),
                "position": at,
                "value": stats.numbers_run[at],
                "score": stats.reworded[at],
            }
            yield _batch(columns, at.size)
        if stats.hits:
            yield self._hits(stats.hits)

    def _hits(self, hits: list[Hit]) -> pa.RecordBatch:
        # Only the snippet leaves the task, not the whole string (a record may be a book).
        snippets = [h.shown or snippet_of(h.text) for h in hits]
        return _batch(
            {
                **self._placed(REWORD_HIT, hits),
                **_snippet_columns(snippets),
                "span": [s.span for s in snippets],
                "value": [h.numbers_run for h in hits],
                "score": [h.reworded for h in hits],
            },
            len(hits),
        )


def _snippet_columns(snippets: Sequence[Snippet]) -> dict[str, list[Any]]:
    return {
        "before": [s.before for s in snippets],
        "run": [s.run for s in snippets],
        "after": [s.after for s in snippets],
        "start": [s.start for s in snippets],
    }


def _partition() -> int:
    context = TaskContext.get()
    return context.partitionId() if context is not None else 0


def scan_task(payload: Broadcast[EnginePayload], plan: Broadcast[InputPlan]) -> ArrowMap:
    """The function ``mapInArrow`` runs on every partition of the input frame."""

    def run(input_batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task = PartitionScan(payload.value, plan.value, _partition())
        task.scan(input_batches)
        yield from task.finish()

    return run


def count_task(plan: Broadcast[InputPlan]) -> ArrowMap:
    """Only the ``SPLIT`` rows (no parsing, no scanning): how the driver numbers lines when a
    task failed before it could report its counts."""

    def run(input_batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        partition = _partition()
        splits: dict[tuple[str, int], SplitCounter] = {}
        for batch in input_batches:
            files = batch.column("file").to_pylist()
            blocks = batch.column("block").to_pylist()
            raws = batch.column("raw").to_pylist()
            for path, block, line in zip(files, blocks, raws):
                key = (canonical(path), partition if block is None else block)
                split = splits.get(key)
                if split is None:
                    split = splits[key] = SplitCounter(*key)
                if plan.value.files[key[0]].fmt in ("jsonl", "text"):
                    text, _ = split.line(line)
                    split.records += 0 if is_blank(text) else 1
                else:
                    split.records += 1
        counters = list(splits.values())
        if counters:
            yield _batch(
                {
                    "kind": [SPLIT] * len(counters),
                    "file": [s.file for s in counters],
                    "block": [s.block for s in counters],
                    "lines": [s.lines for s in counters],
                    "records": [s.records for s in counters],
                    "bytes": [s.size for s in counters],
                },
                len(counters),
            )

    return run
