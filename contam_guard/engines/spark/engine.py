"""Scanning on Spark: the driver's side.

One ``mapInArrow`` pass feeds every partition to the scanner's accumulator (``worker.py``).
Each task sends back its accumulator's state (per-item totals, sparse; at most ``max_pairs``
listed pairs per item and the count of the others: manifest- or contamination-sized, never
corpus-sized) and its split counts. The driver renumbers each state's records and lines from
split-local to file numbers (``splits.py``), merges the states as ``--jobs`` merges its workers',
and ``Scanner.finish`` makes the report: the same verdicts, allowlist, cap and redaction as the
local engine.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.config import MAX_PAIRS_PER_ITEM, Config, Rules
from contam_guard.core.match.pairs import PairStore
from contam_guard.core.scanner import Scanner
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.state import ScanState
from contam_guard.core.verdicts import Report
from contam_guard.engines.spark.failures import input_errors
from contam_guard.engines.spark.inputs import (
    InputPlan,
    SparkSource,
    dataframe_frame,
    file_frame,
    plan_files,
    sources_for,
)
from contam_guard.engines.spark.payload import payload_for
from contam_guard.engines.spark.splits import Offsets, SplitCount, resolve
from contam_guard.engines.spark.worker import OUTPUT_SCHEMA, SPLIT, STATE, count_task, scan_task
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers.base import ReadOptions

DEFAULT_SOURCE = "dataframe"

_ARROW_TYPES = {
    "tinyint": pa.int8(),
    "bigint": pa.int64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "double": pa.float64(),
    "binary": pa.binary(),
}


def to_arrow(frame: DataFrame) -> pa.Table:
    """Collect a (small) DataFrame as an Arrow table: ``toArrow`` where Spark has it (4.0+)."""
    if hasattr(frame, "toArrow"):
        table: pa.Table = frame.toArrow()
        return table
    rows = frame.collect()  # Spark 3.5
    return pa.table(
        {
            f.name: pa.array([row[f.name] for row in rows], type=_ARROW_TYPES[f.dataType.simpleString()])
            for f in frame.schema.fields
        }
    )


def _split_counts(table: pa.Table) -> list[SplitCount]:
    columns = table.select(["file", "block", "lines", "records", "bytes", "chars"]).to_pydict()
    return [
        SplitCount(f, b, lines, records, size, chars or 0)
        for f, b, lines, records, size, chars in zip(*columns.values())
    ]


def _count_splits(frame: DataFrame, plan: InputPlan) -> list[SplitCount]:
    spark = frame.sparkSession
    plan_bc = spark.sparkContext.broadcast(plan)
    try:
        return _split_counts(to_arrow(frame.mapInArrow(count_task(plan_bc), OUTPUT_SCHEMA)))
    finally:
        plan_bc.unpersist()


def _renumbered(
    state: ScanState, names: list[tuple[str, int]], plan: InputPlan, offsets: Offsets
) -> ScanState:
    """A task's state with its splits' names and numbers turned into its files' (the local
    engine's: a display name, the file's record and line numbers)."""

    def place(pair_source: str) -> tuple[str, bool, int, int]:
        key, block = names[int(pair_source)]
        file = plan.files[key]
        before = offsets.before(key, block)
        return file.display, file.absolute, before.records, before.lines

    store = PairStore(state.store.limit)
    for key in plan.ordered():
        store.file(key.display)
    for pair in state.store.pairs():
        display, absolute, records, lines = place(pair.source)
        store.add(
            replace(
                pair,
                source=display,
                record=pair.record if absolute else records + pair.record,
                line=None if pair.line is None else lines + pair.line,
            )
        )
    store.merge((), state.store.unlisted())
    census = state.census
    fields: dict[str, set[str]] = {}
    for split, seen in census.fields.items():
        fields.setdefault(place(split)[0], set()).update(seen)
    return replace(state, store=store, census=replace(census, fields=fields, files=[], skipped=[]))


def scan_frame(scanner: Scanner, frame: DataFrame, plan: InputPlan) -> Accumulator:
    """Feed an input frame (``inputs.py``) to ``scanner`` in Spark's tasks: the merged
    accumulator, as one local process would have filled it.

    Raises the local readers' ``InputError`` (naming file:line) when a record is malformed.
    """
    spark = frame.sparkSession
    context = spark.sparkContext
    payload = context.broadcast(payload_for(scanner))
    plan_bc = context.broadcast(plan)
    try:
        with input_errors(lambda error: resolve(error, plan, Offsets(_count_splits(frame, plan)))):
            gathered = to_arrow(frame.mapInArrow(scan_task(payload, plan_bc), OUTPUT_SCHEMA))
    finally:
        payload.unpersist()
        plan_bc.unpersist()
    kinds = gathered.column("kind")
    splits = _split_counts(gathered.filter(pc.equal(kinds, SPLIT)))
    offsets = Offsets(splits)
    acc = scanner.accumulator()
    census = acc.state.census
    census.asked = plan.read.fields
    for file in plan.ordered():
        acc.note_input(file.display)
    for cell in gathered.filter(pc.equal(kinds, STATE)).column("state").to_pylist():
        state, names = pickle.loads(cell)  # our own tasks' output, never untrusted input
        part = _renumbered(state, names, plan, offsets)
        acc.state.merge_found(part)
        for name, seen in part.census.fields.items():
            census.fields.setdefault(name, set()).update(seen)
    census.files = [f.display for f in plan.ordered()]
    census.skipped = list(plan.notices)
    census.records = sum(s.records for s in splits)
    census.chars = sum(s.chars for s in splits)
    return acc


def _scanner(
    manifest: Manifest | Scanner, key: HashKey | None, rules: Rules | None, batch_chars: int | None
) -> Scanner:
    """``manifest`` itself when it is a scanner; else one over it (no project: no allowlist)."""
    if isinstance(manifest, Scanner):
        return manifest if rules is None else manifest.with_rules(rules)
    config = Config(rules=rules or Rules())
    if batch_chars is not None:
        config = config.model_copy(
            update={"scan": config.scan.model_copy(update={"batch_chars": batch_chars})}
        )
    return Scanner(manifest, config, key, root=Path.cwd(), max_pairs=MAX_PAIRS_PER_ITEM)


def scan_dataframe_report(
    df: DataFrame,
    manifest: Manifest | Scanner,
    *,
    text_col: str = "text",
    record_col: str | None = None,
    source: str | None = None,
    key: HashKey | None = None,
    rules: Rules | None = None,
    batch_chars: int | None = None,
) -> Report:
    """Scan a DataFrame of records: the local engine's ``Report`` (``manifest``: a ``Scanner``,
    which brings its settings, key and allowlist; or a manifest with ``key`` and ``rules``).

    Records are named ``source`` (default ``"dataframe"``) and numbered by ``record_col`` (an
    integer column) or by their position in the DataFrame (partition order, as
    ``RDD.zipWithIndex`` numbers them; the DataFrame is read once, so the numbering is that of
    this read). A ``contam_guard`` column equal to ``"allow"`` marks a record as allowed.
    """
    frame, plan = dataframe_frame(
        df, text_col=text_col, record_col=record_col, source=source or DEFAULT_SOURCE
    )
    scanner = _scanner(manifest, key, rules, batch_chars)
    return scanner.finish(scan_frame(scanner, frame, plan))  # type: ignore[no-any-return]


def scan_sources(
    spark: SparkSession, sources: Sequence[SparkSource], read: ReadOptions, scanner: Scanner
) -> Accumulator:
    """Scan files already listed (``inputs.sources_for``, or the command line's own walk)."""
    frame, plan = file_frame(spark, plan_files(sources, read))
    return scan_frame(scanner, frame, plan)


def _field_tuple(fields: str | Sequence[str] | None) -> tuple[str, ...]:
    """``fields`` as a tuple: one path, several, or none (every string)."""
    return (fields,) if isinstance(fields, str) else tuple(fields or ())


def scan_files_report(
    spark: SparkSession,
    paths: Sequence[str | Path],
    fields: str | Sequence[str] | None,
    manifest: Manifest | Scanner,
    *,
    key: HashKey | None = None,
    rules: Rules | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    batch_chars: int | None = None,
) -> Report:
    """Scan JSONL, text and Parquet files with Spark: the local engine's ``Report``.

    Local folders are walked like ``contam-guard scan`` walks them; URLs (``hdfs://``,
    ``s3a://``) go to Spark as they are. ``fields``: the paths to read (one or several), or None
    for every string of every record, as ``contam-guard scan --field``. Records are named as the
    local engine names them: the file's display name, the 0-based record number and the 1-based
    line.
    """
    read = ReadOptions(fields=_field_tuple(fields), encoding=encoding, errors=errors)
    scanner = _scanner(manifest, key, rules, batch_chars)
    return scanner.finish(scan_sources(spark, sources_for(paths), read, scanner))  # type: ignore[no-any-return]
