"""A ``Report`` as DataFrames: findings, items (the items CSV's rows) and notable pairs.

All three are small (findings and pairs grow with contamination, items with the manifest) and
built on the driver from the report, so they hold exactly what the local engine's reports hold.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as st

from contam_guard.core.families import COLUMNS
from contam_guard.core.match.index import Target
from contam_guard.core.pairs import Pair
from contam_guard.core.verdicts import Report
from contam_guard.report import tables
from contam_guard.report.tables import ITEM_COLUMNS

_LONG = st.LongType()
_TEXT = st.StringType()


def _number(decimals: int) -> st.DataType:
    return st.DoubleType() if decimals else _LONG


PAIR_FIELDS = [
    st.StructField("source", _TEXT, False),
    st.StructField("record", _LONG, False),
    st.StructField("line", _LONG, True),
    st.StructField("field", _TEXT, False),
    *(st.StructField(c.key, _number(c.decimals), False) for c in COLUMNS),
]
FINDINGS_SCHEMA = st.StructType(
    [
        st.StructField("rule", _TEXT, False),
        st.StructField("action", _TEXT, False),
        st.StructField("status", _TEXT, False),
        st.StructField("set", _TEXT, False),
        st.StructField("view", _TEXT, False),
        st.StructField("item", _LONG, False),
        st.StructField("item_id", _TEXT, False),
        st.StructField("test_index", _LONG, False),
        st.StructField("detail", _TEXT, False),
        st.StructField("pairs", st.ArrayType(st.StructType(PAIR_FIELDS), False), False),
    ]
)
# The rule flag columns are text: 1, 0, allowed, or empty when the rule was not run.
_ITEM_TEXT = ("set", "item_id", "view", *tables.RULE_COLUMNS)
_ITEM_FLOAT = tuple(column.key for column in COLUMNS if column.decimals)
ITEMS_SCHEMA = st.StructType(
    [
        st.StructField(
            name, _TEXT if name in _ITEM_TEXT else st.DoubleType() if name in _ITEM_FLOAT else _LONG, False
        )
        for name in ITEM_COLUMNS
    ]
)
PAIRS_SCHEMA = st.StructType(
    [
        st.StructField("set", _TEXT, False),
        st.StructField("view", _TEXT, False),
        st.StructField("item", _LONG, False),
        st.StructField("item_id", _TEXT, False),
        st.StructField("test_index", _LONG, False),
        *PAIR_FIELDS,
        st.StructField("run_start", _LONG, False),
        st.StructField("run_end", _LONG, False),
        st.StructField("snippet", _TEXT, False),
    ]
)


def _pair_values(pair: Pair) -> tuple[object, ...]:
    return (pair.source, pair.record, pair.line, pair.field, *(c.shown(pair.value(c.name)) for c in COLUMNS))


def _target(report: Report, item: int) -> tuple[Target, int]:
    index = report.result.index
    target = index.targets[int(index.item_target[item])]
    return target, item - target.first_item


def findings_frame(spark: SparkSession, report: Report) -> DataFrame:
    """One row per finding, in the report's order, with its contributing pairs."""
    rows = [
        (
            f.rule,
            f.action,
            f.status,
            f.target.set_name,
            f.target.view,
            f.item,
            f.item_id,
            f.test_index,
            f.detail,
            [_pair_values(p) for p in f.pairs],
        )
        for f in report.findings
    ]
    return spark.createDataFrame(rows, FINDINGS_SCHEMA)


def items_frame(spark: SparkSession, report: Report) -> DataFrame:
    """One row per test item: the columns and order of ``--items-csv``."""
    rows = list(tables.item_rows(report))
    return spark.createDataFrame(rows, ITEMS_SCHEMA)


def pairs_frame(spark: SparkSession, report: Report) -> DataFrame:
    """One row per listed pair, sorted as ``--pairs-csv``; ``run_start``/``run_end`` are the
    shared run's characters in the record's string."""
    rows = []
    for pair in report.result.pairs:
        target, local = _target(report, pair.item)
        start = pair.snippet.start
        rows.append(
            (
                target.set_name,
                target.view,
                pair.item,
                target.ids[local],
                int(target.test_index[local]),
                *_pair_values(pair),
                start,
                start + len(pair.snippet.run),
                pair.snippet.run,
            )
        )
    rows.sort(key=lambda r: (r[0], r[1], r[4], r[5], r[6]))  # set, view, test index, source, record
    return spark.createDataFrame(rows, PAIRS_SCHEMA)


def report_frames(spark: SparkSession, report: Report) -> tuple[DataFrame, DataFrame, DataFrame]:
    """(findings, items, pairs) of ``report``."""
    return findings_frame(spark, report), items_frame(spark, report), pairs_frame(spark, report)
