"""``scan --index DIR``: the reviews say how many training records of a search index hold each
pair's shared run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def test_the_review_counts_the_training_records_holding_each_run(
    registered: Any, leak_text: Any, tmp_path: Path
) -> None:
    tokens = registered.items[2]["question"].split()
    leak = leak_text(tokens, 0, len(tokens))
    train = registered.training("train.jsonl", ["a clean record about tidal charts", leak])
    # The index: the scanned file, and a corpus holding the same leak in 3 more records, and in
    # one record only half of it (which does not hold the whole shared run).
    corpus = registered.training("corpus.jsonl", [leak, "tidal charts", leak, leak, " ".join(tokens[:10])])
    index = tmp_path / "idx"
    assert registered.cli("index", train, corpus, "--index", index).code == 0
    review, review_json = tmp_path / "r.md", tmp_path / "r.json"
    result = registered.cli("scan", train, "--index", index, "--review", review, "--review-json", review_json)
    assert result.code == 1, result.output
    data = json.loads(review_json.read_text(encoding="utf-8"))
    counts = {p["training_records"] for f in data["findings"] for p in f["pairs"]}
    assert counts == {4}
    assert "this span is in 4 training record(s) of the search index" in review.read_text(encoding="utf-8")
    without = registered.cli("scan", train, "--review-json", review_json)
    assert without.code == 1
    data = json.loads(review_json.read_text(encoding="utf-8"))
    assert all("training_records" not in p for f in data["findings"] for p in f["pairs"])


def test_a_missing_index_is_exit_2(registered: Any, leak_text: Any, tmp_path: Path) -> None:
    train = registered.training("train.jsonl", ["a clean record about tidal charts"])
    result = registered.cli("scan", train, "--index", tmp_path / "nope")
    assert result.code == 2 and "no search index here" in result.err
