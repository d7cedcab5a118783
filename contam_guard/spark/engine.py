"""Scanning on Spark: the driver's side.

One ``mapInArrow`` pass parses and scans every partition with the local engine (``worker.py``).
The driver then gathers what is manifest-sized or contamination-sized, never corpus-sized:

- the per-item totals, aggregated by Spark (``groupBy(kind, position).max(value)``): at most one
  row per test-item word and window;
- the notable pairs (a run of 8+ words or a shared window), with split-local numbers that the
  split counts turn into file records and lines (``splits.py``);
- the split counts themselves;
- when a rewording rule is on (issue 15), the same tasks run its pass on the same records:
  their per-item maxima (aggregated by Spark) and their kept hits (``rewording.py``).

From these it builds the ``ScanResult`` the local engine would have built, and the rules run on
it through ``contam_guard.verdicts.evaluate``: the same code path, the same findings.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from contam_guard.config import MAX_PAIRS_PER_ITEM, Rules
from contam_guard.engine.index import ManifestIndex
from contam_guard.engine.matcher import ItemTotals
from contam_guard.engine.scanner import PairRow, ScanResult, Snippet
from contam_guard.manifest.model import Manifest
from contam_guard.readers.base import ReadOptions
from contam_guard.reword.index import RewordIndex
from contam_guard.reword.step import PassSettings, add_pairs, registered_before
from contam_guard.spark.failures import input_errors
from contam_guard.spark.inputs import (
    InputPlan,
    SparkSource,
    dataframe_frame,
    file_frame,
    plan_files,
    sources_for,
)
from contam_guard.spark.payload import payload_for
from contam_guard.spark.rewording import reword_stats
from contam_guard.spark.splits import Offsets, SplitCount, resolve
from contam_guard.spark.worker import (
    FIELD,
    OUTPUT_SCHEMA,
    PAIR,
    REWORD_HIT,
    RUN,
    SPLIT,
    WINDOW,
    count_task,
    scan_task,
)
from contam_guard.text.hashing import HashKey
from contam_guard.verdicts import Report, evaluate

DEFAULT_BATCH_CHARS = 1 << 20
DEFAULT_SOURCE = "dataframe"


_ARROW_TYPES = {
    "tinyint": pa.int8(),
    "bigint": pa.int64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "double": pa.float64(),
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


def _totals(out: DataFrame, index: ManifestIndex) -> ItemTotals:
    totals = ItemTotals.empty(index)
    merged = (
        out.filter(sf.col("kind").isin(RUN, WINDOW))
        .groupBy("kind", "position")
        .agg(sf.max("value").alias("value"))
    )
    table = to_arrow(merged)
    kind = np.asarray(table.column("kind").to_numpy(), dtype=np.int8)
    position = np.asarray(table.column("position").to_numpy(), dtype=np.int64)
    value = np.asarray(table.column("value").fill_null(0).to_numpy(), dtype=np.int64)
    runs = kind == RUN
    totals.run[position[runs]] = value[runs]
    totals.window_found[position[kind == WINDOW]] = True
    return totals


def _pairs(table: pa.Table, plan: InputPlan, offsets: Offsets) -> list[PairRow]:
    pairs: list[PairRow] = []
    for row in table.to_pylist():
        file = plan.files[row["file"]]
        before = offsets.before(row["file"], row["block"])
        line = row["line"]
        pairs.append(
            PairRow(
                item=row["item"],
                source=file.display,
                record=row["record"] if file.absolute else before.records + row["record"],
                line=None if line is None else before.lines + line,
                field=row["field"],
                **{name: row[name] for name in PairRow.NUMBERS},
                snippet=Snippet(row["before"], row["run"], row["after"], row["start"]),
                allowed_inline=bool(row["allow"]),
            )
        )
    order = {f.display: f.order for f in plan.files.values()}
    pairs.sort(key=lambda p: (order[p.source], p.record, p.item))
    return pairs


def scan_frame(
    frame: DataFrame,
    plan: InputPlan,
    manifest: Manifest,
    *,
    key: HashKey | None = None,
    windows: bool = True,
    batch_chars: int = DEFAULT_BATCH_CHARS,
    reword: PassSettings | None = None,
) -> ScanResult:
    """Scan an input frame (``inputs.py``) and gather the local engine's ``ScanResult``; with
    ``reword``, the rewording rules' pass runs in the same tasks and fills ``result.reword``.

    Raises the local readers' ``InputError`` (naming file:line) when a record is malformed.
    """
    spark = frame.sparkSession
    index = ManifestIndex.from_manifest(manifest)
    context = spark.sparkContext
    payload = context.broadcast(
        payload_for(manifest, key, windows=windows, batch_chars=batch_chars, reword=reword)
    )
    plan_bc = context.broadcast(plan)
    # Cached: the small results (and the rewording rules' maxima) are read off one pass over the data.
    out = frame.mapInArrow(scan_task(payload, plan_bc), OUTPUT_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        with input_errors(lambda error: resolve(error, plan, Offsets(_count_splits(frame, plan)))):
            # The first action runs the scan (and fills the cache); pairs and split counts come
            # back together, the totals through Spark's aggregation.
            gathered = to_arrow(out.filter(sf.col("kind").isin(PAIR, SPLIT, FIELD, REWORD_HIT)))
        totals = _totals(out, index)
        kinds = gathered.column("kind")
        splits = _split_counts(gathered.filter(pc.equal(kinds, SPLIT)))
        pairs = gathered.filter(pc.equal(kinds, PAIR))
        census = gathered.filter(pc.equal(kinds, FIELD)).select(["file", "run"]).to_pylist()
        reworded = None
        if reword is not None:  # the rewording rules' numbers, from the same cached pass
            hits = gathered.filter(pc.equal(kinds, REWORD_HIT))
            words = RewordIndex.build(manifest, index)
            reworded = reword_stats(out, hits, plan, Offsets(splits), words, to_arrow)
    finally:
        out.unpersist()
        payload.unpersist()
        plan_bc.unpersist()
    result = ScanResult(index=index, totals=totals, asked=plan.read.fields)
    for row in census:
        result.fields.setdefault(plan.files[row["file"]].display, set()).add(row["run"])
    result.pairs = _pairs(pairs, plan, Offsets(splits))
    result.files = [f.display for f in plan.ordered()]
    result.skipped = list(plan.notices)
    result.records = sum(s.records for s in splits)
    result.chars = sum(s.chars for s in splits)
    result.reword = reworded
    return result


def _report(result: ScanResult, manifest: Manifest, rules: Rules) -> Report:
    """The rules on ``result``, with the pairs only the rewording rules found (at most the CLI's
    default number per item) and the CLI's notices for sets registered before them."""
    add_pairs(result, MAX_PAIRS_PER_ITEM)
    report = evaluate(result, rules)
    if result.reword is not None:
        report.notices += registered_before(manifest, result.index, result.reword.index, rules)
    return report


def scan_dataframe_report(
    df: DataFrame,
    manifest: Manifest,
    *,
    text_col: str = "text",
    record_col: str | None = None,
    source: str | None = None,
    key: HashKey | None = None,
    rules: Rules | None = None,
    batch_chars: int = DEFAULT_BATCH_CHARS,
) -> Report:
    """Scan a DataFrame of records and apply the rules: the local engine's ``Report``.

    Records are named ``source`` (default ``"dataframe"``) and numbered by ``record_col`` (an
    integer column) or by their position in the DataFrame (partition order, as
    ``RDD.zipWithIndex`` numbers them; the DataFrame is read once, so the numbering is that of
    this read). A ``contam_guard`` column equal to ``"allow"`` marks a record as allowed.
    """
    frame, plan = dataframe_frame(
        df, text_col=text_col, record_col=record_col, source=source or DEFAULT_SOURCE
    )
    rules = rules or Rules()
    reword = PassSettings.of(rules)
    result = scan_frame(
        frame, plan, manifest, key=key, windows=rules.windows, batch_chars=batch_chars, reword=reword
    )
    return _report(result, manifest, rules)


def scan_sources(
    spark: SparkSession,
    sources: Sequence[SparkSource],
    read: ReadOptions,
    manifest: Manifest,
    *,
    key: HashKey | None = None,
    windows: bool = True,
    batch_chars: int = DEFAULT_BATCH_CHARS,
    reword: PassSettings | None = None,
) -> ScanResult:
    """Scan files already listed (``inputs.sources_for``, or the CLI's own walk); ``reword``:
    run the rewording rules' pass too (``scan_frame``)."""
    plan = plan_files(sources, read)
    frame, plan = file_frame(spark, plan)
    return scan_frame(frame, plan, manifest, key=key, windows=windows, batch_chars=batch_chars, reword=reword)


def _field_tuple(fields: str | Sequence[str] | None) -> tuple[str, ...]:
    """``fields`` as a tuple: one path, several, or none (every string)."""
    return (fields,) if isinstance(fields, str) else tuple(fields or ())


def scan_files_report(
    spark: SparkSession,
    paths: Sequence[str | Path],
    fields: str | Sequence[str] | None,
    manifest: Manifest,
    *,
    key: HashKey | None = None,
    rules: Rules | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    batch_chars: int = DEFAULT_BATCH_CHARS,
) -> Report:
    """Scan JSONL, text and Parquet files with Spark and apply the rules.

    Local folders are walked like ``contam-guard scan`` walks them; URLs (``hdfs://``,
    ``s3a://``) go to Spark as they are. ``fields``: the paths to read (one or several), or None
    for every string of every record, as ``contam-guard scan --field``. Records are named as the
    local engine names them: the file's display name, the 0-based record number and the 1-based
    line.
    """
    read = ReadOptions(fields=_field_tuple(fields), encoding=encoding, errors=errors)
    rules = rules or Rules()
    result = scan_sources(
        spark,
        sources_for(paths),
        read,
        manifest,
        key=key,
        windows=rules.windows,
        batch_chars=batch_chars,
        reword=PassSettings.of(rules),
    )
    return _report(result, manifest, rules)
