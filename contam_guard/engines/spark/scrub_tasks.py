"""The scrub's tasks: counting colliding n-grams, one round of cuts, and writing the pieces.

A round runs the local scrub's own batch step (``core.scrub.rounds._Round``'s ``take``: collisions
with ``GoldenNgrams.find``, windows and pieces with ``core.scrub.cuts.cut``, the counts of what the
cut leaves) on the touched records of a partition; only their states (offsets, no text) and
the n-gram counts travel back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray
from pyspark import Broadcast
from pyspark.sql import types as st

from contam_guard.core.scrub.count import Job
from contam_guard.core.scrub.lines import Parsed
from contam_guard.core.scrub.rounds import RecordState, RoundSettings, Taken
from contam_guard.core.scrub.rounds import _Round as Round  # the local scrub's round, batch by batch
from contam_guard.engines.spark import scrub_state
from contam_guard.engines.spark.failures import TaskError, TaskInputError
from contam_guard.engines.spark.numbering import RECORD
from contam_guard.engines.spark.payload import EnginePayload, golden_of
from contam_guard.errors import InputError
from contam_guard.io.batching import batches

ArrowMap = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]
TEXT = "__contam_guard_text"
ITEM_ID = "__contam_guard_id"
PIECE_FIELD = "contam_guard_piece"

HITS_SCHEMA = st.StructType([st.StructField("record", st.LongType()), st.StructField("key", st.LongType())])
_HITS_ARROW = pa.schema([pa.field("record", pa.int64()), pa.field("key", pa.int64())])

STATE, COUNT = 0, 1
ROUND_SCHEMA = st.StructType(
    [
        st.StructField("kind", st.ByteType()),
        st.StructField("record", st.LongType()),
        st.StructField("state", st.StringType()),
        st.StructField("key", st.LongType()),
        st.StructField("in_touched", st.LongType()),
        st.StructField("pieces", st.LongType()),
    ]
)
_ROUND_ARROW = pa.schema(
    [
        pa.field("kind", pa.int8()),
        pa.field("record", pa.int64()),
        pa.field("state", pa.string()),
        pa.field("key", pa.int64()),
        pa.field("in_touched", pa.int64()),
        pa.field("pieces", pa.int64()),
    ]
)
PIECE_TYPE = st.StructType(
    [
        st.StructField("source_record", st.LongType()),
        st.StructField("id", st.StringType()),
        st.StructField("start", st.LongType()),
        st.StructField("end", st.LongType()),
    ]
)
_PIECE_ARROW = pa.struct(
    [
        pa.field("source_record", pa.int64()),
        pa.field("id", pa.string()),
        pa.field("start", pa.int64()),
        pa.field("end", pa.int64()),
    ]
)


@dataclass(frozen=True)
class RoundSpec:
    """What one round's tasks need (broadcast): the n-grams to cut, the touched records' states."""

    number: int
    active: NDArray[np.bool_]
    locate: bool
    """Also look through untouched records (an n-gram that was common has become rare)."""
    states: dict[int, str]
    settings: RoundSettings
    source: str
    n: int


def _texts(batch: pa.RecordBatch, source: str) -> tuple[list[int], list[str]]:
    records: list[int] = batch.column(RECORD).to_pylist()
    texts: list[str | None] = batch.column(TEXT).to_pylist()
    for record, text in zip(records, texts):
        if record is None or text is None:
            what = "the record column" if record is None else "the text column"
            raise TaskInputError(TaskError("", None, f"{what} is null", record=record))
    return records, [t for t in texts if t is not None]


def _text_size(pair: tuple[int, str]) -> int:
    return len(pair[1])


def hits_task(payload: Broadcast[EnginePayload], n: int, source: str) -> ArrowMap:
    """Each record's distinct colliding golden n-grams, one (record, key) row each."""

    def run(input_batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        golden = golden_of(payload.value, n)
        for batch in input_batches:
            records, texts = _texts(batch, source)
            # The local scrub's batches (``io.batching``), as (record, text) pairs.
            for chunk in batches(list(zip(records, texts)), payload.value.batch_chars, _text_size):
                hits = golden.find([text for _, text in chunk], payload.value.key)
                if not len(hits):
                    continue
                docs = len(chunk)
                pairs = np.unique(hits.key * docs + hits.doc)
                key, doc = np.divmod(pairs, docs)
                record = np.asarray([r for r, _ in chunk], dtype=np.int64)[doc]
                yield pa.RecordBatch.from_arrays([pa.array(record), pa.array(key)], schema=_HITS_ARROW)

    return run


def round_task(payload: Broadcast[EnginePayload], spec: Broadcast[RoundSpec]) -> ArrowMap:
    """One round of the filter over a partition's records (touched ones; all when locating)."""

    def run(input_batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        round_spec, engine = spec.value, payload.value
        golden = golden_of(engine, round_spec.n)
        located: dict[tuple[int, int], RecordState] = {}
        step = Round(
            round_spec.number,
            round_spec.active,
            round_spec.locate,
            golden,
            engine.key,
            round_spec.settings,
            located,
            np.zeros(golden.size, dtype=np.int64),
        )
        job = Job(Path(round_spec.source), round_spec.source, "text", None)
        touched: list[RecordState] = []

        def taken() -> Iterator[Taken]:
            for batch in input_batches:
                records, texts = _texts(batch, round_spec.source)
                ids: list[str | None] = batch.column(ITEM_ID).to_pylist()
                for record, text, item_id in zip(records, texts, ids):
                    dumped = round_spec.states.get(record)
                    if dumped is None and not round_spec.locate:
                        continue
                    state = None if dumped is None else scrub_state.load(dumped)
                    if state is not None:
                        if state.length not in (-1, len(text)):
                            raise TaskInputError(TaskError("", None, _CHANGED, record=record))
                        touched.append(state)
                    yield Taken(state, record, 0, Parsed((text,), b"", None, None, item_id))

        step.take(job, 0, taken())
        states = touched + list(located.values())
        if states:
            yield _round_batch(
                {
                    "kind": [STATE] * len(states),
                    "record": [s.record for s in states],
                    "state": [scrub_state.dump(s) for s in states],
                }
            )
        keys = np.flatnonzero((step.in_touched != 0) | (step.piece_counts != 0))
        if keys.size:
            yield _round_batch(
                {
                    "kind": np.full(keys.size, COUNT, dtype=np.int8),
                    "key": keys,
                    "in_touched": step.in_touched[keys],
                    "pieces": step.piece_counts[keys],
                }
            )

    return run


_CHANGED = "the DataFrame changed between the scrub's passes (a record's text has another length)"
CHANGED_HINT = "cache the DataFrame (df.cache()) or pass record_col, so each pass reads the same records"


def _round_batch(columns: dict[str, object]) -> pa.RecordBatch:
    rows = len(next(iter(columns.values())))  # type: ignore[arg-type]
    arrays = [
        pa.array(columns[f.name], type=f.type) if f.name in columns else pa.nulls(rows, type=f.type)
        for f in _ROUND_ARROW
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=_ROUND_ARROW)


Kept = dict[int, tuple[list[tuple[int, int]], str | None]]
"""Each touched record's kept pieces and its id."""


def pieces_task(final: Broadcast[Kept], text_col: str) -> ArrowMap:
    """The scrubbed rows: untouched rows as they are, a touched row once per kept piece (its text
    the piece, ``contam_guard_piece`` saying where it came from), a dropped row not at all."""

    def run(input_batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        kept = final.value
        for batch in input_batches:
            records: list[int] = batch.column(RECORD).to_pylist()
            texts = batch.column(text_col)
            take: list[int] = []
            new_text: list[str | None] = []
            pieces: list[dict[str, object] | None] = []
            for i, record in enumerate(records):
                touched = kept.get(record)
                if touched is None:
                    take.append(i)
                    new_text.append(None)
                    pieces.append(None)
                    continue
                spans, item_id = touched
                text = texts[i].as_py()
                for start, end in spans:
                    take.append(i)
                    new_text.append(text[start:end])
                    pieces.append({"source_record": record, "id": item_id, "start": start, "end": end})
            out = batch.take(pa.array(take, type=pa.int64()))
            original = out.column(text_col)
            replaced = pa.array(new_text, type=original.type)
            text_array = pc.if_else(replaced.is_null(), original, replaced)
            names = [name for name in out.schema.names if name not in (RECORD, TEXT, ITEM_ID)]
            arrays = [text_array if name == text_col else out.column(name) for name in names]
            yield pa.RecordBatch.from_arrays(
                [*arrays, pa.array(pieces, type=_PIECE_ARROW)], names=[*names, PIECE_FIELD]
            )

    return run


def changed_error(source: str, record: int | None) -> InputError:
    where = "" if record is None else f"row {record}: "
    return InputError(source, f"{where}{_CHANGED}", hint=CHANGED_HINT)
