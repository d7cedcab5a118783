"""``--max-pairs-per-item`` on Spark: the same findings, counts and exit code as a local scan."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

QUESTION = (
    "The glassblower of Vennick Harbour shaped fourteen turquoise lanterns on Monday and twice as many "
    "amber lanterns on Tuesday"
)


def findings(path: Path) -> list[Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["summary"]["max_pairs_per_item"] == 3
    found: list[Any] = data["findings"]
    return found


def test_spark_lists_and_counts_as_a_local_scan(
    spark: SparkSession, cli: Callable[..., int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("golden.jsonl").write_text(json.dumps({"id": "g1", "question": QUESTION}) + "\n")
    words = QUESTION.split()
    rows = [{"text": f"copy {k}: {QUESTION}"} for k in range(12)]
    rows += [{"text": f"part {k}: {' '.join(words[:14])} only"} for k in range(4)]
    Path("train.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert cli("init") == 0
    assert cli("register", "g", "golden.jsonl", "--field", "question", "--id-field", "id") == 0
    cap = ("--max-pairs-per-item", "3")
    assert cli("scan", "train.jsonl", "--review-json", "local.json", *cap) == 1
    assert cli("scan", "train.jsonl", "--review-json", "spark.json", *cap, "--engine", "spark") == 1
    local, remote = findings(Path("local.json")), findings(Path("spark.json"))
    assert remote == local
    gpt3 = [f for f in local if f["rule"] == "gpt3"]
    assert [(len(f["pairs"]), f["records"]) for f in gpt3] == [(1, 1)] * 3 + [(0, 9), (0, 4)]
