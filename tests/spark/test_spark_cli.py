"""`contam-guard scan --engine spark` from the command line: the same verdict and items CSV."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from contam_guard.cli import main

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args: str) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return int(exit_info.value.code or 0)


@pytest.mark.slow
def test_engine_spark_on_the_command_line(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", "golden.jsonl")
    shutil.copy(EXAMPLES / "data" / "train.jsonl", "train.jsonl")
    assert run("init") == 0
    assert run("register", "am", "golden.jsonl", "--field", "question", "--id-field", "id") == 0
    assert run("scan", "train.jsonl", "--items-csv", "local.csv") == 1
    assert spark.sparkContext.master is not None  # a running context has one
    assert (
        run(
            "scan",
            "train.jsonl",
            "--items-csv",
            "spark.csv",
            "--engine",
            "spark",
            "--master",
            spark.sparkContext.master,
        )
        == 1
    )
    assert Path("spark.csv").read_bytes() == Path("local.csv").read_bytes()
    assert run("scan", "train.jsonl", "--engine", "flink") == 2
    assert run("scan", "train.jsonl", "--master", "local[2]") == 2  # --master needs --engine spark
