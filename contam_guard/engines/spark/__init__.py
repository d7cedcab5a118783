"""contam-guard on Apache Spark: scan (and scrub) DataFrames and files past one machine.

The engine is the local one, run inside Spark tasks; nothing about normalisation, hashing,
matching or the rules is implemented twice:

- the manifest (hashes only) is broadcast once as its canonical JSON text; each Python worker
  builds the ``ManifestIndex`` from it once and reuses it for every task (``payload.py``);
- each partition is parsed with the local readers' rules and scanned in batches by the local
  engine's own batch step (``worker.py``), in one ``mapInArrow`` pass; when the numbers or
  reworded rule is on, the same pass runs the rewording rules' local pass on the same records
  (``rewording.py`` merges what the tasks found);
- what comes back to the driver is manifest-sized (per-item totals, aggregated by Spark) or
  contamination-sized (notable pairs), never corpus-sized; the rules then run on the driver
  through ``contam_guard.core.verdicts.evaluate`` (``engine.py``);
- scrub counts colliding n-grams per record with a Spark aggregation and runs the local scrub's
  own round step in the tasks (``scrub.py``).

Install with ``pip install 'contam-guard[spark]'`` (on the driver and on every executor).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

try:
    import pyspark  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("contam_guard.engines.spark needs PySpark: pip install 'contam-guard[spark]'") from exc

from pyspark.sql import DataFrame, SparkSession

from contam_guard.core.verdicts import Report
from contam_guard.engines.spark.engine import scan_dataframe_report, scan_files_report
from contam_guard.engines.spark.frames import findings_frame, items_frame, pairs_frame, report_frames
from contam_guard.engines.spark.scrub import scrub_dataframe
from contam_guard.engines.spark.session import session

P = ParamSpec("P")
Frames = tuple[DataFrame, DataFrame, DataFrame]


def _as_frames(make_report: Callable[P, Report]) -> Callable[P, Frames]:
    """``make_report`` returning its report as (findings, items, pairs) DataFrames instead."""

    @functools.wraps(make_report)
    def frames(*args: P.args, **kwargs: P.kwargs) -> Frames:
        return report_frames(SparkSession.active(), make_report(*args, **kwargs))

    frames.__doc__ = (
        f"``{make_report.__name__}``, as (findings, items, pairs) DataFrames: see it for the "
        "arguments, and ``findings_frame``, ``items_frame``, ``pairs_frame`` for the results."
    )
    return frames


scan_dataframe = _as_frames(scan_dataframe_report)
"""Scan a DataFrame of records: (findings, items, pairs) DataFrames."""
scan_files = _as_frames(scan_files_report)
"""Scan JSONL, text and Parquet files with Spark: (findings, items, pairs) DataFrames."""


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
