"""The rewording rules' pass on Spark, the driver's side: the tasks' results merged.

The tasks ran the local pass on their records (``worker.py``, kinds ``REWORD_ITEM`` and
``REWORD_HIT``); here the per-item maxima are aggregated by Spark (the largest numbers run and
reworded score of each item over every task) and the hits are given their file's record and
line numbers (``splits.py``) and kept best per (item, source, record), as one local pass keeps
them (``reword.scan_pass.keep``). The result is the ``RewordStats`` the local pass would have
built, so ``reword.step.add_pairs`` and the rules use it unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as sf

from contam_guard.engine.scanner import Snippet
from contam_guard.reword.index import RewordIndex
from contam_guard.reword.scan_pass import Hit, RewordStats, keep
from contam_guard.spark.inputs import InputPlan
from contam_guard.spark.splits import Offsets
from contam_guard.spark.worker import REWORD_ITEM

Collect = Callable[[DataFrame], pa.Table]


def reword_stats(
    out: DataFrame, hits: pa.Table, plan: InputPlan, offsets: Offsets, index: RewordIndex, collect: Collect
) -> RewordStats:
    """The pass's numbers over every task: ``out`` the tasks' output, ``hits`` its
    ``REWORD_HIT`` rows (collected with the pairs), ``collect`` how a small frame is collected."""
    stats = RewordStats.empty(index)
    merged = (
        out.filter(sf.col("kind") == REWORD_ITEM)
        .groupBy("position")
        .agg(sf.max("value").alias("value"), sf.max("score").alias("score"))
    )
    table = collect(merged)
    item = np.asarray(table.column("position").to_numpy(), dtype=np.int64)
    stats.numbers_run[item] = np.asarray(table.column("value").fill_null(0).to_numpy(), dtype=np.int64)
    stats.reworded[item] = np.asarray(table.column("score").fill_null(0.0).to_numpy(), dtype=np.float64)
    best: dict[tuple[int, str, int], Hit] = {}
    for row in hits.to_pylist():
        keep(best, _hit(row, plan, offsets))
    stats.hits = sorted(best.values(), key=lambda h: (h.item, h.source, h.record))
    return stats


def _hit(row: dict[str, Any], plan: InputPlan, offsets: Offsets) -> Hit:
    """A task's hit with its file's numbers (a split-local record and line offset by the splits
    before it; a record column's numbers are the file's already)."""
    file = plan.files[row["file"]]
    before = offsets.before(row["file"], row["block"])
    line = row["line"]
    shown = Snippet(row["before"], row["run"], row["after"], row["start"], row["span"])
    return Hit(
        item=row["item"],
        source=file.display,
        record=row["record"] if file.absolute else before.records + row["record"],
        line=None if line is None else before.lines + line,
        field=row["field"],
        text=row["run"],  # all a task sends of the string: what the pair shows
        numbers_run=row["value"],
        reworded=row["score"],
        allowed_inline=bool(row["allow"]),
        shown=shown,
    )
