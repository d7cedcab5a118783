"""contam-guard on Apache Spark: scan (and scrub) DataFrames and files past one machine.

The engine is the local one, run inside Spark tasks; nothing about normalisation, hashing,
matching or the rules is implemented twice:

- the manifest (hashes only) is broadcast once as its canonical JSON text; each Python worker
  builds the ``ManifestIndex`` from it once and reuses it for every task (``payload.py``);
- each partition is parsed with the local readers' rules and scanned in batches by the local
  engine's own batch step (``worker.py``), in one ``mapInArrow`` pass;
- what comes back to the driver is manifest-sized (per-item totals, aggregated by Spark) or
  contamination-sized (notable pairs), never corpus-sized; the rules then run on the driver
  through ``contam_guard.findings.evaluate`` (``scan.py``);
- scrub counts colliding n-grams per record with a Spark aggregation and runs the local scrub's
  own round step in the tasks (``scrub.py``).

Install with ``pip install 'contam-guard[spark]'`` (on the driver and on every executor).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

try:
    import pyspark  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("contam_guard.spark needs PySpark: pip install 'contam-guard[spark]'") from exc

from pyspark.sql import DataFrame, SparkSession

from contam_guard.config import Rules
from contam_guard.manifest.model import Manifest
from contam_guard.spark.frames import findings_frame, items_frame, pairs_frame, report_frames
from contam_guard.spark.scan import DEFAULT_BATCH_CHARS, scan_dataframe_report, scan_files_report
from contam_guard.spark.scrub import scrub_dataframe
from contam_guard.spark.session import session
from contam_guard.text.hashing import HashKey


def scan_dataframe(
    df: DataFrame,
    manifest: Manifest,
    *,
    text_col: str = "text",
    record_col: str | None = None,
    source: str | None = None,
    key: HashKey | None = None,
    rules: Rules | None = None,
    batch_chars: int = DEFAULT_BATCH_CHARS,
) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Scan a DataFrame of records against ``manifest``: (findings, items, pairs) DataFrames.

    See ``scan_dataframe_report`` for the arguments; ``findings_frame``, ``items_frame`` and
    ``pairs_frame`` for the three results.
    """
    report = scan_dataframe_report(
        df,
        manifest,
        text_col=text_col,
        record_col=record_col,
        source=source,
        key=key,
        rules=rules,
        batch_chars=batch_chars,
    )
    return report_frames(df.sparkSession, report)


def scan_files(
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
) -> tuple[DataFrame, DataFrame, DataFrame]:
    """Scan JSONL, text and Parquet files with Spark: (findings, items, pairs) DataFrames.

    See ``scan_files_report``.
    """
    report = scan_files_report(
        spark,
        paths,
        fields,
        manifest,
        key=key,
        rules=rules,
        encoding=encoding,
        errors=errors,
        batch_chars=batch_chars,
    )
    return report_frames(spark, report)


__all__ = [
    "findings_frame",
    "items_frame",
    "pairs_frame",
    "report_frames",
    "scan_dataframe",
    "scan_dataframe_report",
    "scan_files",
    "scan_files_report",
    "scrub_dataframe",
    "session",
]
