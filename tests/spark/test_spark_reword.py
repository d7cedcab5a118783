"""The rewording rules (numbers, reworded) on Spark: their pass runs in the scan's own
tasks, and gives what the local pass gives.

The training file holds, among unrelated records and across several splits, a copy of a golden
item with its numbers changed, hand-reworded copies (one in a string longer than a snippet, one
in a record's second field) and a plain copy.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from contam_guard.core.config import Rules
from contam_guard.core.verdicts import Report
from contam_guard.engines import local as local_engine
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from contam_guard.report.tables import items_csv, pairs_csv

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")

from contam_guard.engines.spark import scan_dataframe_report, scan_files_report
from tests.helpers import NUMBERS_CHANGED, REWORDED_FERRY, REWORDED_LAMPS
from tests.helpers import REWORD_GOLDEN as GOLDEN

from .conftest import LOCAL, local_reference, on_masters
from .conftest import cli as run_cli

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FILLER = "Notes from the allotment society, week {k}: the compost heap was turned and the shed painted."


def training_rows() -> list[dict[str, str]]:
    """About 9 KB: with 4 KiB splits the copies fall in different tasks."""
    rows: list[dict[str, str]] = [{"text": FILLER.format(k=k)} for k in range(90)]
    rows[7] = {"text": NUMBERS_CHANGED}
    rows[31] = {"text": REWORDED_LAMPS + " " + FILLER.format(k=31)}  # over 200 characters
    rows[52] = {"prompt": FILLER.format(k=52), "completion": REWORDED_FERRY}
    rows[77] = {"text": GOLDEN[0]}  # a plain copy: GPT-3's pair gets the rewording numbers too
    return rows


@pytest.fixture(scope="module")
def reworded_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the four-item set registered (its derived views too) and the training file."""
    root = tmp_path_factory.mktemp("reword")
    golden = root / "golden.jsonl"
    rows = [{"id": f"q{k}", "question": q} for k, q in enumerate(GOLDEN)]
    golden.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    lines = "".join(json.dumps(row) + "\n" for row in training_rows())
    (root / "train.jsonl").write_text(lines, encoding="utf-8")
    assert run_cli("init", root) == 0
    manifest = root / ".contam-guard" / "manifest.json"
    options = ("--field", "question", "--id-field", "id", "--manifest", manifest)
    assert run_cli("register", "qs", golden, *options) == 0
    return root


@pytest.fixture
def small_splits(spark: SparkSession) -> Iterator[None]:
    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    yield
    spark.conf.set("spark.sql.files.maxPartitionBytes", before or "134217728")


def manifest_of(root: Path) -> Manifest:
    return store.load(root / ".contam-guard" / "manifest.json")


def reword_findings(report: Report) -> set[tuple[str, str, str, int]]:
    """(rule, item, source, record) of every numbers and reworded finding's pairs."""
    return {
        (f.rule, f.item_id, p.source, p.record)
        for f in report.findings
        if f.rule in ("numbers", "reworded")
        for p in f.pairs
    }


EXPECTED = {
    ("numbers", "q1", "train.jsonl", 7),
    ("reworded", "q1", "train.jsonl", 7),
    ("reworded", "q0", "train.jsonl", 31),
    ("reworded", "q2", "train.jsonl", 52),
    ("numbers", "q0", "train.jsonl", 77),
    ("reworded", "q0", "train.jsonl", 77),
}
"""What the local pass finds in ``training_rows`` (checked against it in each test)."""


def test_spark_command_writes_the_local_rewording_numbers_without_reading_on_the_driver(
    spark: SparkSession,
    reworded_project: Path,
    tmp_path: Path,
    small_splits: None,
    monkeypatch: pytest.MonkeyPatch,
    cli: Callable[..., int],
) -> None:
    monkeypatch.chdir(reworded_project)
    driver_reads: list[object] = []
    read_into = local_engine.read_into

    def counted(*args: Any, **kwargs: Any) -> None:
        driver_reads.append(args)
        read_into(*args, **kwargs)

    # The local engine reads the files through this name; the Spark tasks read them instead.
    monkeypatch.setattr(local_engine, "read_into", counted)
    outputs = ("--items-csv", "--pairs-csv", "--review-json")
    local = [tmp_path / f"local{k}" for k in range(3)]
    on_spark = [tmp_path / f"spark{k}" for k in range(3)]
    assert cli("scan", "train.jsonl", *[x for pair in zip(outputs, local) for x in pair]) == 1
    assert len(driver_reads) == 1  # the patch is where the local engine reads
    master = spark.sparkContext.master
    args = [x for pair in zip(outputs, on_spark) for x in pair]
    assert cli("scan", "train.jsonl", *args, "--engine", "spark", "--master", master) == 1
    assert len(driver_reads) == 1  # the driver read nothing: every rule ran in the tasks

    for ours, theirs in zip(on_spark, local):
        assert ours.read_bytes() == theirs.read_bytes()
    items = {row["item_id"]: row for row in csv.DictReader(local[0].read_text().splitlines())}
    assert int(items["q1"]["numbers_run"]) >= 13 and float(items["q2"]["reworded_score"]) >= 0.32
    review = json.loads(local[2].read_text())
    pairs = [(f, p) for f in review["findings"] for p in f["pairs"]]
    found = {(f["rule"], f["item_id"], p["source"], p["record"]) for f, p in pairs}
    assert {f for f in found if f[0] in ("numbers", "reworded")} == EXPECTED
    cut = [p for _, p in pairs if p["record"] == 31]
    # A string past the snippet: its start shown (its allowlist key, the finding's span, is of the
    # whole string, and the same in both reviews).
    assert cut and all(p["span"] == {"start": 0, "end": 200} for p in cut)


def test_spark_files_report_has_the_rewording_findings(
    spark: SparkSession, reworded_project: Path, small_splits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(reworded_project)
    manifest = manifest_of(reworded_project)

    on_spark = scan_files_report(spark, ["train.jsonl"], None, manifest)

    local = local_reference(manifest, [Source(Path("train.jsonl"), "train.jsonl")], ReadOptions())
    assert reword_findings(on_spark) == reword_findings(local) == EXPECTED
    assert items_csv(on_spark) == items_csv(local)
    assert pairs_csv(on_spark) == pairs_csv(local)
    assert [(f.rule, f.item_id, f.detail, f.pairs) for f in on_spark.findings] == [
        (f.rule, f.item_id, f.detail, f.pairs) for f in local.findings
    ]


@on_masters(LOCAL)
def test_spark_dataframe_report_has_the_rewording_findings(
    spark: SparkSession, reworded_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(reworded_project)
    manifest = manifest_of(reworded_project)
    texts = [row.get("text") or row["completion"] for row in training_rows()]  # one column
    Path("texts.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    df = spark.createDataFrame(spark.sparkContext.parallelize([(t,) for t in texts], 3), "text string")

    on_spark = scan_dataframe_report(df, manifest, source="texts.jsonl")

    local = local_reference(manifest, [Source(Path("texts.jsonl"), "texts.jsonl")], ReadOptions())
    expected = {(rule, item, "texts.jsonl", record) for rule, item, _, record in EXPECTED}
    assert reword_findings(on_spark) == reword_findings(local) == expected
    assert items_csv(on_spark) == items_csv(local)
    pairs = [(p.item, p.record, p.numbers_run, p.reworded, p.snippet) for p in on_spark.result.pairs]
    assert pairs == [(p.item, p.record, p.numbers_run, p.reworded, p.snippet) for p in local.result.pairs]

    # With both rules off the tasks run no pass, and nothing of theirs is reported.
    off = Rules.model_validate({"numbers": {"enabled": False}, "reworded": {"enabled": False}})
    quiet = scan_dataframe_report(df, manifest, source="texts.jsonl", rules=off)
    assert quiet.result.reword is None and not reword_findings(quiet)
    assert {f.rule for f in quiet.findings} == {f.rule for f in on_spark.findings} - {"numbers", "reworded"}


@on_masters(LOCAL)
def test_spark_command_says_a_set_was_registered_before_the_rules(
    spark: SparkSession,
    reworded_project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The notice the local pass gives for a set without the derived views, given by the Spark
    path too (where the tasks ran the pass)."""
    monkeypatch.chdir(reworded_project)
    manifest = manifest_of(reworded_project)
    golden = manifest.sets["qs"]
    old = golden.model_copy(update={"views": {"question": golden.views["question"]}})
    path = tmp_path / "old.json"
    store.save(path, manifest.model_copy(update={"sets": {"qs": old}}))
    capsys.readouterr()
    master = spark.sparkContext.master
    assert master is not None  # a running context has one
    assert run_cli("scan", "train.jsonl", "--manifest", path) == 1
    local = capsys.readouterr()
    assert run_cli("scan", "train.jsonl", "--manifest", path, "--engine", "spark", "--master", master) == 1
    on_spark = capsys.readouterr()
    notice = "qs:question was registered before the numbers and reworded rules"
    assert notice in local.err and notice in on_spark.err
    assert "WARN reworded" not in on_spark.out and "FAIL gpt3" in on_spark.out
