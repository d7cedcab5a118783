"""The Spark engine's driver-side parts that need no Spark session: split numbering, errors
carried out of tasks, record locations, and the scan command's refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from contam_guard.engines.pipeline import ScanRequest
from contam_guard.errors import ConfigError, InputError
from contam_guard.io.readers import ReadOptions

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")

from contam_guard.cli.commands import spark_scan
from contam_guard.engines.spark.failures import TaskError, TaskInputError, find, input_errors
from contam_guard.engines.spark.inputs import InputFile, InputPlan, canonical, location
from contam_guard.engines.spark.splits import Offsets, SplitCount, resolve


def test_spark_splits_number_lines_records_and_bytes_from_the_top_of_each_file() -> None:
    offsets = Offsets(
        [
            SplitCount("b.jsonl", 0, lines=4, records=3, size=90),
            SplitCount("a.jsonl", 200, lines=5, records=5, size=120),
            SplitCount("a.jsonl", 0, lines=10, records=8, size=200),
            SplitCount("a.jsonl", 320, lines=2, records=2, size=50),
        ]
    )
    assert offsets.before("a.jsonl", 0) == offsets.before("b.jsonl", 0)
    at = offsets.before("a.jsonl", 320)
    assert (at.lines, at.records, at.size) == (15, 13, 320)


def test_spark_task_errors_come_back_as_the_readers_input_error() -> None:
    plan = InputPlan({"/d/a.jsonl": InputFile("/d/a.jsonl", "a.jsonl", "jsonl", 0)})
    offsets = Offsets([SplitCount("/d/a.jsonl", 0, 10, 9, 300), SplitCount("/d/a.jsonl", 300, 5, 5, 100)])
    error = TaskError("/d/a.jsonl", 300, "invalid JSON: Expecting value at column 9", line=3, hint="fix it")
    carried = RuntimeError(f"Traceback ...\n{TaskInputError(error)}\n  at org.apache.spark ...")
    assert find(carried) == error
    with pytest.raises(InputError) as raised, input_errors(lambda e: resolve(e, plan, offsets)):
        raise carried
    assert str(raised.value) == "a.jsonl:13: invalid JSON: Expecting value at column 9\n  hint: fix it"

    bad_byte = TaskError("/d/a.jsonl", 300, "", line=2, offset=40, decode=("e9", 5, "invalid byte", "utf-8"))
    message = str(resolve(bad_byte, plan, offsets))
    assert message.startswith("a.jsonl:12: cannot decode byte b'\\xe9' at byte offset 345 as utf-8")


def test_spark_paths_keep_their_urls_and_local_files_one_spelling() -> None:
    assert location(Path("s3a://bucket/train.jsonl")) == "s3a://bucket/train.jsonl"
    assert location("hdfs://nn:8020/a b.jsonl") == "hdfs://nn:8020/a b.jsonl"
    assert canonical("file:/data/a%20b.jsonl") == canonical("/data/a b.jsonl") == "/data/a b.jsonl"


@pytest.mark.parametrize(
    ("change", "what"),
    [({"jobs": 2}, "--jobs"), ({"skip_unreadable": True}, "--skip-unreadable")],
)
def test_spark_scan_command_refuses_what_only_the_local_engine_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict[str, object], what: str
) -> None:
    monkeypatch.chdir(tmp_path)
    request = ScanRequest(paths=[tmp_path], read=ReadOptions(), **change)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=what):
        spark_scan.check(request)
