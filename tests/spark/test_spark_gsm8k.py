"""GSM8K train (question) scanned against GSM8K test (question) on Spark and locally: the items
CSV byte for byte, the pairs CSV and every finding. Skips when ../shared/data/gsm8k is absent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from contam_guard.io.manifest import store
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from contam_guard.report.tables import items_csv, pairs_csv

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")

from contam_guard.engines.spark import scan_files_report

from .conftest import LOCAL, local_reference, on_masters

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.gsm8k


@pytest.fixture
def megabyte_splits(spark: SparkSession) -> Iterator[None]:
    """Splits of 1 MB: train.jsonl (4 MB) is read by several tasks."""
    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(1 << 20))
    yield
    spark.conf.set("spark.sql.files.maxPartitionBytes", before or "134217728")


@on_masters(LOCAL)  # 4 MB: the cluster runs the same code on the bundled example (test_spark_scan)
def test_spark_gsm8k_items_csv_is_byte_identical(
    spark: SparkSession,
    gsm8k: Path,
    tmp_path: Path,
    megabyte_splits: None,
    monkeypatch: pytest.MonkeyPatch,
    cli: Callable[..., int],
) -> None:
    manifest_path = tmp_path / ".contam-guard" / "manifest.json"
    assert cli("init", tmp_path) == 0
    test = gsm8k / "test.jsonl"
    assert cli("register", "gsm8k", test, "--field", "question", "--manifest", manifest_path) == 0
    manifest = store.load(manifest_path)
    monkeypatch.chdir(gsm8k)

    on_spark = scan_files_report(spark, ["train.jsonl"], "question", manifest)

    read = ReadOptions(fields=("question",))
    local = local_reference(manifest, [Source(Path("train.jsonl"), "train.jsonl")], read)
    assert items_csv(on_spark) == items_csv(local)
    assert pairs_csv(on_spark) == pairs_csv(local)
    assert [(f.rule, f.item_id, f.detail, f.pairs) for f in on_spark.findings] == [
        (f.rule, f.item_id, f.detail, f.pairs) for f in local.findings
    ]
    flagged = {f.test_index: f.pairs[0].longest_run for f in on_spark.findings if f.rule == "gpt3"}
    assert flagged == {581: 15, 602: 19, 632: 25}  # the seed article's three items
    assert on_spark.result.records == 7473
