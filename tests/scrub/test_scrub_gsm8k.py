"""Scrub on GSM8K: train scrubbed against the registered test questions, both modes.

Reads ../shared/data/gsm8k (never copied into the project); skips with a reason elsewhere.
Three test questions share 13+ words with four train questions (known from the scan: items 581,
602 twice, 632). Every one of those train questions is under 200 characters outside its windows,
so pieces mode keeps nothing of them either; on question + answer documents it keeps pieces.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GSM8K = ROOT.parent / "shared" / "data" / "gsm8k"
pytestmark = [
    pytest.mark.gsm8k,
    pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}"),
]


@pytest.fixture
def gsm8k(cli: Any, tmp_path: Path) -> Path:
    assert cli("init").code == 0
    assert cli("register", "gsm8k", GSM8K / "test.jsonl", "--field", "question").code == 0
    return tmp_path


def log_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize(
    ("mode", "removed", "reasons"),
    [("pieces", 899, {"window": 4, "short piece": 1}), ("drop", 899, {"drop mode": 4})],
)
def test_train_questions_against_test(
    gsm8k: Path, cli: Any, mode: str, removed: int, reasons: dict[str, int]
) -> None:
    args = ["--field", "question", "--mode", mode, "-o", "out.jsonl", "--log", "log.jsonl"]
    result = cli("scrub", GSM8K / "train.jsonl", *args)
    assert result.code == 0, result.output
    log = log_of(Path("log.jsonl"))
    assert [e["record"] for e in log] == [20, 406, 1314, 5162]
    items = [sorted({m["item"] for r in e["removed"] for m in r["matches"]}) for e in log]
    assert items == [["632"], ["581"], ["602"], ["602"]]
    summary = result.out.strip().splitlines()[-1]
    assert "7,473 records read" in summary and "4 touched, 4 dropped, 0 pieces written" in summary
    assert f"{removed:,} characters removed" in summary
    counted: dict[str, int] = {}
    for entry in log:
        for reason in {r["reason"] for r in entry["removed"]}:
            counted[reason] = counted.get(reason, 0) + 1
    assert counted == reasons
    assert {r["round"] for e in log for r in e["removed"]} == {1}  # no second round on GSM8K
    assert cli("scan", "out.jsonl", "--field", "question", "--only", "gpt3", "--n", "13").code == 0


def test_question_and_answer_documents_with_pasted_test_questions(gsm8k: Path, cli: Any) -> None:
    if str(ROOT) not in sys.path:  # benchmarks/ is a folder of the repo, not an installed package
        sys.path.insert(0, str(ROOT))
    corpus = importlib.import_module("benchmarks.corpus").build_corpus(Path("qa.jsonl"), 1)
    planted = {p.line: p for p in corpus.plants}  # test questions 5, 50, 500 pasted as lines
    assert cli("scrub", "qa.jsonl", "-o", "out.jsonl", "--log", "log.jsonl").code == 0
    log = log_of(Path("log.jsonl"))
    assert [e["record"] for e in log] == sorted([20, 406, 1314, 5162, *planted])
    for entry in log:
        if entry["record"] in planted:
            plant = planted[entry["record"]]
            window = next(r for r in entry["removed"] if r["reason"] == "window")
            assert [m["item"] for m in window["matches"]] == [str(plant.test_index)]
            # The pasted question (minus its final "?") is exactly the colliding span.
            assert window["ngrams"] == [[plant.offset, plant.offset + len(plant.text.rstrip("?"))]]
    pieces = [
        json.loads(line)
        for line in Path("out.jsonl").read_text().splitlines()
        if "contam_guard_piece" in line
    ]
    assert [(p["contam_guard_piece"]["source_record"], p["id"]) for p in pieces] == [
        (406, "0-406"),
        (966, "0-966"),
        (3442, "0-3442"),
        (3731, "0-3731"),
    ]
    assert cli("scan", "out.jsonl", "--only", "gpt3", "--n", "13").code == 0
