"""The scan task: a partition's rows in, its accumulator's state and split counts out.

Each task feeds its rows to the driver's ``Scanner`` (rebuilt once per Python worker from the
broadcast payload: ``payload.scanner_of``) through an ``Accumulator``, exactly as the local
engine does: JSON Lines as blocks of raw lines through the compiled prefilter
(``Accumulator.add_jsonl_block``), other rows as records (``records.RowReader``). Records are
named by their split and numbered split-local; the driver renumbers them (``engine.py``).

What leaves the task (``OUTPUT_SCHEMA``, one ``kind`` per row):

- ``STATE``: the accumulator's state (pickled: the families' per-item totals, sparse; the
  listed pairs, at most ``max_pairs`` per item, and the count of the others; what was read),
  with the (file, split) each of its input names stands for;
- ``SPLIT``: each split's counts (lines, records, bytes, characters), for numbering.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray
from pyspark import Broadcast, TaskContext
from pyspark.sql import types as st

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.match.prefilter import line_format
from contam_guard.engines.spark.failures import TaskError, TaskInputError
from contam_guard.engines.spark.inputs import InputFile, InputPlan, canonical
from contam_guard.engines.spark.payload import EnginePayload, scanner_of
from contam_guard.engines.spark.records import RowReader, SplitCounter, is_blank
from contam_guard.errors import InputError
from contam_guard.io.readers.base import Record
from contam_guard.io.readers.opener import UTF8_BOM

STATE, SPLIT = 0, 1
BLOCK_BYTES = 4 << 20
"""Raw JSONL lines gathered into one block for the prefilter."""
SPLIT_RANK = 1 << 48
"""A split's rank among a scan's inputs: its file's place, then its byte offset in the file."""

_FIELDS: list[tuple[str, pa.DataType, st.DataType]] = [
    ("kind", pa.int8(), st.ByteType()),
    ("file", pa.string(), st.StringType()),
    ("block", pa.int64(), st.LongType()),
    ("lines", pa.int64(), st.LongType()),
    ("records", pa.int64(), st.LongType()),
    ("bytes", pa.int64(), st.LongType()),
    ("chars", pa.int64(), st.LongType()),
    ("state", pa.binary(), st.BinaryType()),
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
    """One task's scan: its splits, the JSONL lines waiting for a block, its accumulator."""

    def __init__(self, payload: EnginePayload, plan: InputPlan, partition: int) -> None:
        self.scanner = scanner_of(payload)
        self.acc: Accumulator = self.scanner.accumulator()
        self.acc.state.census.asked = plan.read.fields
        self.plan = plan
        self.partition = partition
        self.reader = RowReader(plan.read)
        self.splits: list[SplitCounter] = []
        self._split_at: dict[tuple[str, int], int] = {}
        self._keys: dict[str, str] = {}
        self._pending: list[bytes] = []
        self._pending_split = -1
        self._pending_bytes = 0
        self._fast_jsonl = line_format("jsonl", plan.read) is not None and self.scanner.prefilter is not None

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
            number = self._split_at[key] = len(self.splits)
            self.splits.append(SplitCounter(*key))
            self.acc.note_input(str(number), self.plan.files[key[0]].order * SPLIT_RANK + key[1])
        return number

    def scan(self, input_batches: Iterator[pa.RecordBatch]) -> None:
        """Every row: raw JSONL lines in blocks, the rest as records in the scanner's batches.

        A batch is cut into runs of rows of one split (Arrow's compute, no Python per row);
        a run of JSONL lines goes to the compiled prefilter as it is (``_lines``)."""
        records: list[Record] = []
        chars = 0
        for batch in input_batches:
            for start, end, number in self._runs(batch):
                split = self.splits[number]
                file = self.plan.files[split.file]
                if file.fmt == "jsonl" and self._fast_jsonl:
                    self._lines(number, batch.column("raw").slice(start, end - start))
                    continue
                for record in self._records(file, split, number, batch.slice(start, end - start)):
                    records.append(record)
                    chars += record.chars
                    if chars >= self.scanner.batch_chars:
                        self.acc.add_batch(records)
                        records, chars = [], 0
        self.acc.add_batch(records)
        self._flush()

    def _runs(self, batch: pa.RecordBatch) -> Iterator[tuple[int, int, int]]:
        """(start, end, split number) of each run of consecutive rows of one split."""
        rows = batch.num_rows
        if rows == 0:
            return
        files, blocks = batch.column("file"), batch.column("block").fill_null(-1)
        change = np.ones(rows, dtype=bool)
        if rows > 1:
            head, tail = slice(0, rows - 1), slice(1, rows)
            differs = pc.or_(pc.not_equal(files[tail], files[head]), pc.not_equal(blocks[tail], blocks[head]))
            change[1:] = differs.to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(change).tolist()
        for start, end in zip(starts, [*starts[1:], rows]):
            block = blocks[start].as_py()
            yield start, end, self._split(files[start].as_py(), None if block == -1 else block)

    def _records(
        self, file: InputFile, split: SplitCounter, number: int, rows: pa.RecordBatch
    ) -> Iterator[Record]:
        """The records of rows of one split that the prefilter does not read (text, Parquet, a
        DataFrame; JSONL when the prefilter cannot read it)."""
        raws, texts = rows.column("raw").to_pylist(), rows.column("text").to_pylist()
        numbers, allows = rows.column("row").to_pylist(), rows.column("allow").to_pylist()
        for raw, text, row, allow in zip(raws, texts, numbers, allows):
            found: Iterable[Record | None]
            if file.fmt == "text":  # a whole file: its paragraphs
                found = self.reader.text_records(file, split, raw, str(number))
            elif file.fmt == "jsonl":
                found = [self.reader.line_record(file, split, raw, str(number))]
            else:
                found = [self.reader.row_record(file, split, (text, raw, row, bool(allow)), str(number))]
            yield from (record for record in found if record is not None)

    def _lines(self, number: int, raws: pa.Array) -> None:
        """Gather raw JSONL lines of split ``number`` into the pending block, scanned when it
        holds ``BLOCK_BYTES`` (whole lines; a longer line is a block of its own)."""
        if number != self._pending_split:
            self._flush()
            self._pending_split = number
        ends = np.cumsum(pc.binary_length(raws).to_numpy(zero_copy_only=False) + 1, dtype=np.int64)
        start = 0
        while start < len(raws):
            base = int(ends[start - 1]) if start else 0
            fits = int(np.searchsorted(ends, base + BLOCK_BYTES - self._pending_bytes, "right"))
            if fits == start and self._pending:  # the next line does not fit: scan the block first
                self._flush()
                continue
            end = min(max(fits, start + 1), len(raws))
            self._pending.append(raws.slice(start, end - start))
            self._pending_bytes += int(ends[end - 1]) - base
            start = end
            if start < len(raws) or self._pending_bytes >= BLOCK_BYTES:  # full
                self._flush()

    def _flush(self) -> None:
        """Scan the pending block of raw JSONL lines (split-local numbers): counted and joined by
        Arrow's compute, read by the compiled prefilter (``Accumulator.add_jsonl_block``)."""
        if not self._pending:
            return
        number = self._pending_split
        raws = pa.concat_arrays(self._pending)
        self._pending, self._pending_bytes = [], 0
        split = self.splits[number]
        counts = (split.lines, split.records, split.size, split.chars)
        first_line, first_record, first_offset = split.lines + 1, split.records, split.size
        block, blank, size = _joined(raws)
        if split.lines == 0 and split.block == 0 and block.startswith(UTF8_BOM):
            block = block[len(UTF8_BOM) :]  # as SplitCounter.line drops it
            blank[0] = is_blank(block[: block.index(b"\n")])
        split.lines += len(raws)
        split.size += size
        split.records += len(raws) - int(np.count_nonzero(blank))
        before = self.acc.state.census.chars
        try:
            self.acc.add_jsonl_block(
                block,
                source=str(number),
                first_line=first_line,
                first_record=first_record,
                first_offset=first_offset,
                options=self.plan.read,
            )
        except InputError as exc:
            # Read the block again line by line, for the error the driver can place exactly
            # (file line, file byte offset): the row reader's.
            split.lines, split.records, split.size, split.chars = counts
            file = self.plan.files[split.file]
            for raw in raws.to_pylist():
                self.reader.line_record(file, split, raw, str(number))
            raise TaskInputError(TaskError(split.file, split.block, exc.problem, hint=exc.hint)) from None
        split.chars += self.acc.state.census.chars - before

    def finish(self) -> Iterator[pa.RecordBatch]:
        names = [(s.file, s.block) for s in self.splits]
        state = pickle.dumps((self.acc.state, names), protocol=pickle.HIGHEST_PROTOCOL)
        yield _batch({"kind": [STATE], "state": [state]}, 1)
        if self.splits:
            yield _split_rows(self.splits, with_chars=True)


def _joined(raws: pa.Array) -> tuple[bytes, NDArray[np.bool_], int]:
    """Lines (without their ``\\n``) as one block, each ended by ``\\n``; which of them are blank
    (``records.is_blank``: empty or ASCII whitespace only); their bytes with the newlines."""
    ended = pa.concat_arrays([raws, pa.array([b""], type=raws.type)])
    whole = pa.ListArray.from_arrays(pa.array([0, len(ended)], type=pa.int32()), ended)
    block: bytes = pc.binary_join(whole, b"\n")[0].as_py()
    blank = pc.or_(pc.equal(pc.binary_length(raws), 0), pc.ascii_is_space(raws.view(pa.string())))
    return block, blank.to_numpy(zero_copy_only=False).copy(), len(block)


def _split_rows(splits: list[SplitCounter], *, with_chars: bool) -> pa.RecordBatch:
    columns: dict[str, Any] = {
        "kind": [SPLIT] * len(splits),
        "file": [s.file for s in splits],
        "block": [s.block for s in splits],
        "lines": [s.lines for s in splits],
        "records": [s.records for s in splits],
        "bytes": [s.size for s in splits],
    }
    if with_chars:
        columns["chars"] = [s.chars for s in splits]
    return _batch(columns, len(splits))


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
        if splits:
            yield _split_rows(list(splits.values()), with_chars=False)

    return run
