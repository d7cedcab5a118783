"""The Spark engine against the local engine on the same data: the same records, lines,
numbers, findings and CSV outputs, and the same errors for malformed input."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contam_guard.cli.commands import scan as scan_cmd
from contam_guard.core.config import load_config
from contam_guard.core.verdicts import Report
from contam_guard.engines.pipeline import ScanRequest
from contam_guard.errors import InputError
from contam_guard.io.keys import key_for, unlocked
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from contam_guard.report.outputs import Outputs
from contam_guard.report.tables import ITEM_COLUMNS, items_csv, pairs_csv

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")

from contam_guard.cli.commands import spark_scan
from contam_guard.engines.spark import items_frame, scan_dataframe, scan_dataframe_report, scan_files_report

from .conftest import CLUSTER, LOCAL, local_reference

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def manifest_of(project: Path) -> Manifest:
    return store.load(project / ".contam-guard" / "manifest.json")


def local_report(manifest: Manifest, names: list[str], field: str | None) -> Report:
    """The local engine (and the rewording rules' local pass) on files named relative to the
    current folder."""
    read = ReadOptions(fields=() if field is None else (field,))
    return local_reference(manifest, [Source(Path(n), n) for n in names], read)


def findings(report: Report, *, lines: bool = True) -> list[tuple[Any, ...]]:
    """Everything a finding says: rule, set, view, item, detail, and each pair's numbers and snippet."""
    return [
        (
            f.rule,
            f.status,
            f.target.set_name,
            f.target.view,
            f.item_id,
            f.test_index,
            f.detail,
            tuple(
                (
                    p.source,
                    p.record,
                    p.line if lines else None,
                    p.field,
                    p.longest_run,
                    p.ngrams8_found,
                    p.covered_l10,
                    p.window_hits,
                    p.snippet,
                    p.allowed_inline,
                    p.numbers_run,
                    p.reworded,
                )
                for p in f.pairs
            ),
        )
        for f in report.findings
    ]


def assert_same(spark_report: Report, local: Report) -> None:
    assert findings(spark_report) == findings(local)
    assert items_csv(spark_report) == items_csv(local)
    assert pairs_csv(spark_report) == pairs_csv(local)
    counts = (spark_report.result.records, spark_report.result.chars)
    assert counts == (local.result.records, local.result.chars)
    assert spark_report.result.files == local.result.files


@pytest.fixture
def small_splits(spark: SparkSession) -> Any:
    """Splits of 4 KiB: a file is read by several tasks, so numbering crosses splits."""
    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "4096")
    yield
    spark.conf.set("spark.sql.files.maxPartitionBytes", before or "134217728")


def test_spark_scan_files_matches_local(
    spark: SparkSession,
    project: Path,
    examples: Path,
    tmp_path: Path,
    small_splits: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(examples / "data" / "train.jsonl", "train.jsonl")
    Path("chat.jsonl.gz").write_bytes(gzip.compress((examples / "data" / "chat.jsonl").read_bytes()))
    texts = [row["text"] for row in rows_of(examples / "data" / "train.jsonl")]
    # Blank lines, CRLF endings and a byte-order mark: numbered as the local reader numbers them.
    Path("notes.txt").write_bytes(b"\xef\xbb\xbf\n" + b"\r\n\n".join(t.encode() for t in texts) + b"\n")
    names = ["train.jsonl", "chat.jsonl.gz", "notes.txt"]
    manifest = manifest_of(project)

    spark_report = scan_files_report(spark, names, None, manifest)

    local = local_report(manifest, names, None)
    assert_same(spark_report, local)
    assert {p.source for f in local.findings for p in f.pairs} == set(names)
    assert any(p.line and p.line > 20 for f in local.findings for p in f.pairs)


def test_spark_scan_dataframe_matches_local(
    spark: SparkSession, project: Path, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(examples / "data")
    manifest = manifest_of(project)
    rows = rows_of(Path("train.jsonl"))
    data = [(r["id"], r["text"], i + 100) for i, r in enumerate(rows)]
    # Three partitions, in order: numbered by position as the file numbers its records.
    df = spark.createDataFrame(spark.sparkContext.parallelize(data, 3), "id string, text string, n long")
    local = local_report(manifest, ["train.jsonl"], "text")

    by_position = scan_dataframe_report(df, manifest, source="train.jsonl")
    assert findings(by_position) == findings(local, lines=False)
    assert items_csv(by_position) == items_csv(local)

    # Numbered by a column.
    findings_df, items_df, pairs_df = scan_dataframe(df, manifest, record_col="n", source="train.jsonl")
    got = findings_df.collect()
    assert [(r.rule, r.set, r.view, r.item_id, r.test_index, r.detail) for r in got] == [
        (f.rule, f.target.set_name, f.target.view, f.item_id, f.test_index, f.detail) for f in local.findings
    ]
    expected = [[p.record + 100 for p in f.pairs] for f in local.findings]
    assert [[p.record for p in r.pairs] for r in got] == expected
    local_items = [line.split(",") for line in items_csv(local).splitlines()]
    assert items_df.columns == ITEM_COLUMNS == local_items[0]
    assert [[str(v) for v in r] for r in items_df.collect()] == local_items[1:]
    assert items_frame(spark, local).collect() == items_df.collect()
    assert pairs_df.count() == len(local.result.pairs)
    leak = pairs_df.orderBy("longest_run", ascending=False).first()
    assert leak is not None and leak.snippet and leak.run_end - leak.run_start == len(leak.snippet)


def test_spark_scan_parquet_matches_local(
    spark: SparkSession, project: Path, examples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    train = rows_of(examples / "data" / "train.jsonl")
    train[3]["contam_guard"] = "allow"
    pq.write_table(pa.Table.from_pylist(train), "train.parquet", row_group_size=7)
    chat = rows_of(examples / "data" / "chat.jsonl")
    pq.write_table(pa.Table.from_pylist(chat), "chat.parquet", row_group_size=2)
    manifest = manifest_of(project)

    plain = scan_files_report(spark, ["train.parquet"], None, manifest)
    assert_same(plain, local_report(manifest, ["train.parquet"], None))
    nested = scan_files_report(spark, ["chat.parquet"], "messages[].content", manifest)
    assert_same(nested, local_report(manifest, ["chat.parquet"], "messages[].content"))


MALFORMED = {
    "bad JSON": b'{"text": "cut short\n',
    "bad byte": b'{"text": "caf\xe9"}\n',
    "no field": b'{"body": "the text is elsewhere"}\n',
}


# Every case locally; on the cluster one: the error crosses the executor's process boundary the
# same way whatever the case, and a bad byte carries the most (its decode details).
@pytest.mark.parametrize(
    ("spark", "case"),
    [(LOCAL, case) for case in sorted(MALFORMED)] + [(CLUSTER, "bad byte")],
    indirect=["spark"],
)
def test_spark_malformed_line_fails_naming_file_and_line(
    spark: SparkSession,
    project: Path,
    tmp_path: Path,
    small_splits: None,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
) -> None:
    spark.conf.set("spark.sql.files.maxPartitionBytes", "12288")  # the bad line is in the third split
    monkeypatch.chdir(tmp_path)
    good = [json.dumps({"text": f"record {i}, nothing much " * 4}).encode() + b"\n" for i in range(300)]
    Path("data.jsonl").write_bytes(b"".join(good[:250]) + b"\n" + MALFORMED[case] + b"".join(good[250:]))
    manifest = manifest_of(project)
    with pytest.raises(InputError) as local:
        local_report(manifest, ["data.jsonl"], "text")
    assert local.value.line == 252

    with pytest.raises(InputError) as on_spark:
        scan_files_report(spark, ["data.jsonl"], "text", manifest)
    assert str(on_spark.value) == str(local.value)
    assert str(on_spark.value).startswith("data.jsonl:252: ")


def test_spark_scan_command_writes_what_scan_writes(
    spark: SparkSession,
    project: Path,
    examples: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli: Callable[..., int],
) -> None:
    monkeypatch.chdir(project)
    # dirs_exist_ok: the module's project is shared by both masters' runs of this test when no
    # other module runs between them (pytest then keeps the module fixture).
    shutil.copytree(examples / "data", "data", dirs_exist_ok=True)
    assert cli("scan", "data", "--items-csv", tmp_path / "local.csv", "--review", tmp_path / "local.md") == 1

    outputs = Outputs(files={"items_csv": tmp_path / "spark.csv", "review": tmp_path / "spark.md"})
    request = ScanRequest(paths=[Path("data")], read=ReadOptions())
    code = scan_cmd.run(load_config(), request, outputs, spark_scan.spark_engine("local[2]"))

    assert code == 1
    assert (tmp_path / "spark.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
    assert (tmp_path / "spark.md").read_text() == (tmp_path / "local.md").read_text()
    assert not spark.sparkContext._jsc.sc().isStopped()  # the caller's session is left running


def test_spark_scan_keyed_manifest_matches_local(
    spark: SparkSession,
    examples: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli: Callable[..., int],
) -> None:
    """The key reaches the executors with the manifest: the keyed hashes match as locally."""
    monkeypatch.setenv("CONTAM_GUARD_KEY", "k3y-" + "0123456789abcdef" * 2 + "wxyz")
    monkeypatch.chdir(tmp_path)
    assert cli("init", "--keyed") == 0
    shutil.copy(examples / "golden" / "arith-mini.jsonl", "gold.jsonl")
    assert cli("register", "arith-mini", "gold.jsonl", "--field", "question", "--id-field", "id") == 0
    manifest = unlocked(manifest_of(tmp_path), "CONTAM_GUARD_KEY")  # format 2: its files are sealed
    key = key_for(manifest, "CONTAM_GUARD_KEY")
    assert key is not None
    shutil.copy(examples / "data" / "train.jsonl", "train.jsonl")

    on_spark = scan_files_report(spark, ["train.jsonl"], None, manifest, key=key)

    local = local_reference(manifest, [Source(Path("train.jsonl"), "train.jsonl")], ReadOptions(), key=key)
    assert_same(on_spark, local)
    assert local.failing


def test_spark_reads_items_split_across_strings_as_local(
    spark: SparkSession,
    project: Path,
    examples: Path,
    tmp_path: Path,
    small_splits: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A test question cut into pieces of 10 words or fewer, as a list field, as sibling fields
    and as a Parquet list column: Spark reads a record's strings as one document, as the local
    engine does, and fails with a run naming the fields it spans."""
    monkeypatch.chdir(tmp_path)
    golden = rows_of(examples / "golden" / "arith-mini.jsonl")
    cut = []
    for row in golden[:4]:
        words = row["question"].split()
        cut.append([" ".join(words[k : k + 10]) for k in range(0, len(words), 10)])
    Path("list.jsonl").write_text("".join(json.dumps({"sentences": p}) + "\n" for p in cut), encoding="utf-8")
    siblings = [{f"s{k}": piece for k, piece in enumerate(p)} for p in cut]
    Path("siblings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in siblings), encoding="utf-8")
    pq.write_table(pa.table({"sentences": pa.array(cut, pa.list_(pa.string()))}), "list.parquet")
    names = ["list.jsonl", "siblings.jsonl", "list.parquet"]
    manifest = manifest_of(project)

    spark_report = scan_files_report(spark, names, None, manifest)

    local = local_report(manifest, names, None)
    assert_same(spark_report, local)
    spans = {(p.source, p.field) for f in local.findings if f.rule == "gpt3" for p in f.pairs}
    assert ("list.jsonl", f"sentences[0]..sentences[{len(cut[0]) - 1}]") in spans
    assert ("siblings.jsonl", f"s0..s{len(cut[0]) - 1}") in spans
    assert any(source == "list.parquet" for source, _ in spans)
    assert spark_report.return_code == 1
