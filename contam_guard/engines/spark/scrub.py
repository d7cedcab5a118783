"""Scrub on Spark: GPT-3's removal filter over a DataFrame, with the local scrub's own steps.

The passes (``contam_guard.core.scrub`` describes the filter and its rounds):

1. Count: each record's distinct colliding golden n-grams become (record, key) rows; Spark
   counts distinct records per key (``groupBy(key).agg(countDistinct(record))``) and the
   counts, manifest-sized, come to the driver. N-grams in more than ``max_doc_freq`` records
   are left alone; the records holding one of the others are the round's records (bounded by
   ``max_doc_freq`` per n-gram).
2. Rounds: the active n-grams and the touched records' states (offsets, no text) are broadcast;
   the tasks run the local scrub's round step on those records and send back their new states
   and how the cut changed each n-gram's count. As locally, rounds repeat until no golden
   n-gram occurs in 1..``max_doc_freq`` records.
3. Pieces: the final kept spans are broadcast and one pass writes the scrubbed rows.

The log is built on the driver by the local scrub's ``log_entries``, from the same states.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as sf
from pyspark.sql import types as st

from contam_guard.core.config import Config
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.scanner import Scanner
from contam_guard.core.scrub import ScrubOptions
from contam_guard.core.scrub.count import Job
from contam_guard.core.scrub.golden import GoldenNgrams
from contam_guard.core.scrub.rounds import RecordState, loop_rounds
from contam_guard.core.scrub.write import log_entries
from contam_guard.core.spec.hashing import HashKey
from contam_guard.engines.spark import scrub_state
from contam_guard.engines.spark.engine import DEFAULT_SOURCE, to_arrow
from contam_guard.engines.spark.failures import Resolver, TaskError, input_errors
from contam_guard.engines.spark.numbering import RECORD, numbered
from contam_guard.engines.spark.payload import payload_for
from contam_guard.engines.spark.scrub_tasks import (
    COUNT,
    HITS_SCHEMA,
    ITEM_ID,
    PIECE_TYPE,
    ROUND_SCHEMA,
    STATE,
    TEXT,
    Kept,
    RoundSpec,
    changed_error,
    hits_task,
    pieces_task,
    round_task,
)
from contam_guard.errors import InputError
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers import ReadOptions

LOG_SCHEMA = st.StructType(
    [
        st.StructField("source", st.StringType(), False),
        st.StructField("record", st.LongType(), False),
        st.StructField("entry", st.StringType(), False),
    ]
)


def _resolver(source: str) -> Resolver:
    def resolve(error: TaskError) -> InputError:
        if "changed" in error.problem:
            return changed_error(source, error.record)
        where = "" if error.record is None else f"row {error.record}: "
        return InputError(source, f"{where}{error.problem}", hint=error.hint)

    return resolve


class _Scrub:
    """The driver's state across the passes of one ``scrub_dataframe``."""

    def __init__(
        self, records: DataFrame, manifest: Manifest, options: ScrubOptions, key: HashKey | None, source: str
    ) -> None:
        self.records = records
        self.spark = records.sparkSession
        self.options = options
        self.source = source
        self.golden = GoldenNgrams.build(ManifestIndex.from_manifest(manifest), options.settings.n)
        config = Config()
        config = config.model_copy(
            update={"scan": config.scan.model_copy(update={"batch_chars": options.batch_chars})}
        )
        engine = payload_for(Scanner(manifest, config, key, root=Path.cwd()))
        self.payload = self.spark.sparkContext.broadcast(engine)
        self.settings = replace(options, read=ReadOptions()).rounds()
        self.states: dict[tuple[int, int], RecordState] = {}

    def count(self) -> tuple[np.ndarray, list[int]]:
        """Distinct records per golden n-gram, and the records holding a rare one."""
        hits = self.records.mapInArrow(
            hits_task(self.payload, self.options.settings.n, self.source), HITS_SCHEMA
        )
        hits = hits.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            per_key = to_arrow(hits.groupBy("key").agg(sf.countDistinct("record").alias("records")))
            counts = np.zeros(self.golden.size, dtype=np.int64)
            counts[np.asarray(per_key.column("key").to_numpy(), dtype=np.int64)] = per_key.column(
                "records"
            ).to_numpy()
            limit = self.options.settings.max_doc_freq
            rare = [int(k) for k in np.flatnonzero((counts > 0) & (counts <= limit))]
            if not rare:
                return counts, []
            keys = self.spark.createDataFrame([(k,) for k in rare], "key long")
            held = hits.join(sf.broadcast(keys), "key").select("record").distinct()
            return counts, sorted(int(r) for r in to_arrow(held).column("record").to_pylist())
        finally:
            hits.unpersist()

    def round(self, number: int, active: np.ndarray, locate: bool) -> tuple[np.ndarray, np.ndarray, bool]:
        """One round (``core.scrub.rounds.RoundStep``); updates the states, returns (records entering
        the touched set, piece counts) per n-gram and whether anything was cut."""
        removals = sum(len(s.removed) for s in self.states.values())
        touched = {record: scrub_state.dump(s) for (_, record), s in self.states.items()}
        spec = RoundSpec(number, active, locate, touched, self.settings, self.source, self.options.settings.n)
        spec_bc = self.spark.sparkContext.broadcast(spec)
        frame = self.records
        if not locate:  # only the touched records need to reach Python
            wanted = self.spark.createDataFrame([(r,) for r in touched], f"{RECORD} long")
            frame = frame.join(sf.broadcast(wanted), RECORD, "left_semi")
        out = frame.mapInArrow(round_task(self.payload, spec_bc), ROUND_SCHEMA)
        out = out.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            states = to_arrow(out.filter(sf.col("kind") == STATE).select("state"))
            sums = to_arrow(
                out.filter(sf.col("kind") == COUNT)
                .groupBy("key")
                .agg(sf.sum("in_touched").alias("in_touched"), sf.sum("pieces").alias("pieces"))
            )
        finally:
            out.unpersist()
            spec_bc.unpersist()
        for text in states.column("state").to_pylist():
            state = scrub_state.load(text)
            self.states[(0, state.record)] = state
        in_touched = np.zeros(self.golden.size, dtype=np.int64)
        pieces = np.zeros(self.golden.size, dtype=np.int64)
        keys = np.asarray(sums.column("key").to_numpy(), dtype=np.int64)
        in_touched[keys] = sums.column("in_touched").to_numpy()
        pieces[keys] = sums.column("pieces").to_numpy()
        changed = sum(len(s.removed) for s in self.states.values()) > removals
        return in_touched, pieces, changed

    def run(self) -> None:
        """Count, then rounds until nothing collides (``core.scrub.rounds.run_rounds``'s loop)."""
        counts, candidates = self.count()
        self.states = {(0, r): RecordState(0, r, 0) for r in candidates}
        loop_rounds(counts, self.options.settings.max_doc_freq, self.round)

    def log(self) -> DataFrame:
        jobs = [Job(Path(self.source), self.source, "text", None)]
        rows = []
        for entry in log_entries(jobs, self.states, self.golden):
            entry["line"] = None  # a DataFrame has no lines
            rows.append((self.source, int(str(entry["record"])), json.dumps(entry)))
        return self.spark.createDataFrame(rows, LOG_SCHEMA)

    def kept(self) -> Kept:
        return {
            record: (list(state.kept), None if state.item_id is None else str(state.item_id))
            for (_, record), state in self.states.items()
        }


def scrub_dataframe(
    df: DataFrame,
    manifest: Manifest,
    *,
    text_col: str = "text",
    record_col: str | None = None,
    id_col: str | None = None,
    source: str | None = None,
    key: HashKey | None = None,
    options: ScrubOptions | None = None,
) -> tuple[DataFrame, DataFrame]:
    """Scrub a DataFrame of records: (scrubbed rows, log).

    Scrubbed rows: ``df``'s columns, an untouched row as it is; a touched row once per kept
    piece, ``text_col`` holding the piece and ``contam_guard_piece`` (``source_record``, ``id``,
    ``start``, ``end``: the record's number, ``id_col``'s value, the piece's characters) saying
    where it came from, as the local scrub writes JSONL pieces; a dropped row not at all.
    The string column is one string field, so mode ``auto`` cuts pieces (``options.mode``).

    Log: one row per touched record, ``entry`` being the local scrub's log line for it (no
    ``line``: a DataFrame has none). Records are numbered by ``record_col`` or by position (see
    ``numbering.py``); the DataFrame is read several times (count, each round, the pieces), so
    it must read the same way each time: files, or ``df.cache()``.
    """
    options = options or ScrubOptions()
    name = source or DEFAULT_SOURCE
    for column in (text_col, record_col, id_col):
        if column is not None and column not in df.columns:
            raise InputError(name, f"column {column!r} not found; columns: {', '.join(df.columns)}")
    if not isinstance(df.schema[text_col].dataType, st.StringType):
        raise InputError(name, f"text column {text_col!r} is not a string column")
    all_rows = numbered(df, record_col)
    item = sf.col(id_col).cast("string") if id_col else sf.lit(None).cast("string")
    records = all_rows.select(RECORD, sf.col(text_col).alias(TEXT), item.alias(ITEM_ID))
    work = _Scrub(records, manifest, options, key, name)
    try:
        with input_errors(_resolver(name)):
            work.run()
        kept = work.spark.sparkContext.broadcast(work.kept())
    finally:
        work.payload.unpersist()
    fields = [f for f in all_rows.schema.fields if f.name != RECORD]
    schema = st.StructType([*fields, st.StructField("contam_guard_piece", PIECE_TYPE)])
    scrubbed = all_rows.mapInArrow(pieces_task(kept, text_col), schema)
    return scrubbed, work.log()
