"""The rewording rules on the development set (tests/data/rewordings) and GSM8K's train split,
through the command line, with every output: the rates README's "What the rules catch" gives.

Reads ../shared/data/gsm8k (never copied into the project); skips with a reason elsewhere.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from contam_guard.cli import main
from contam_guard.core.rules.reworded import Settings
from tests.helpers import GSM8K, load_manifest

REPO = Path(__file__).resolve().parents[2]
THRESHOLD = Settings().threshold
DEV = REPO / "tests" / "data" / "rewordings"
KEY = "a-fixed-test-secret-for-the-rewording-rules-0123456789"
pytestmark = [
    pytest.mark.gsm8k,
    pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}"),
]


def run(*args: str) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return int(exit_info.value.code or 0)


@contextmanager
def inside(folder: Path, key: str | None) -> Iterator[None]:
    """Run in ``folder`` with ``CONTAM_GUARD_KEY`` set to ``key`` (or unset)."""
    before, old_key = Path.cwd(), os.environ.pop("CONTAM_GUARD_KEY", None)
    os.chdir(folder)
    if key is not None:
        os.environ["CONTAM_GUARD_KEY"] = key
    try:
        yield
    finally:
        os.chdir(before)
        os.environ.pop("CONTAM_GUARD_KEY", None)
        if old_key is not None:
            os.environ["CONTAM_GUARD_KEY"] = old_key


@dataclass(frozen=True)
class Scanned:
    root: Path
    code: int

    def review(self, name: str = "review.json") -> dict[str, object]:
        return dict(json.loads((self.root / name).read_text(encoding="utf-8")))

    def caught(self, rule: str, name: str) -> float:
        """The share of ``name``'s copies with a finding of ``rule`` on their own test item, in a
        scan of that file alone (a per-item rule's finding lists every notable pair of the item
        over everything scanned, so a joint scan would credit one file with the other's hits)."""
        rows = [json.loads(line) for line in (DEV / name).read_text(encoding="utf-8").splitlines()]
        found = {
            (f["test_index"], p["source"], p["record"])
            for f in self.review(f"{name}.json")["findings"]  # type: ignore[attr-defined]
            if f["rule"] == rule
            for p in f["pairs"]
        }
        return sum((row["test_index"], name, k) in found for k, row in enumerate(rows)) / len(rows)


def scanned(root: Path, key: str | None) -> Scanned:
    with inside(root, key):
        assert run("init", *(["--keyed"] if key else [])) == 0
        (root / "golden.jsonl").write_bytes((GSM8K / "test.jsonl").read_bytes())
        assert run("register", "gsm8k", "golden.jsonl", "--field", "question") == 0
        for name in ("number_changed.jsonl", "reworded.jsonl"):
            (root / name).write_bytes((DEV / name).read_bytes())
            assert run("scan", name, "--review-json", f"{name}.json") in (0, 1)
        code = run(
            "scan", "number_changed.jsonl", "reworded.jsonl",
            "--review-json", "review.json", "--review", "review.md", "--review-html", "review.html",
            "--items-csv", "items.csv", "--pairs-csv", "pairs.csv", "--sarif", "out.sarif",
        )  # fmt: skip
    return Scanned(root, code)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Scanned:
    return scanned(tmp_path_factory.mktemp("rewordings"), None)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Scanned:
    return scanned(tmp_path_factory.mktemp("rewordings-keyed"), KEY)


def test_numbers_catches_every_number_changed_copy(plain: Scanned) -> None:
    assert plain.caught("numbers", "number_changed.jsonl") >= 0.99
    assert plain.caught("gpt3", "number_changed.jsonl") < 0.99  # what the rule adds


def test_reworded_catches_most_rewordings(plain: Scanned) -> None:
    assert plain.caught("reworded", "reworded.jsonl") >= 0.70
    for rule in ("gpt3", "palm", "llama2", "gpt4", "numbers"):  # what the n-gram rules see of them
        assert plain.caught(rule, "reworded.jsonl") <= 0.02, rule


def test_keyed_manifest_finds_the_same_and_stores_other_hashes(plain: Scanned, keyed: Scanned) -> None:
    for rule in ("numbers", "reworded"):
        for name in ("number_changed.jsonl", "reworded.jsonl"):
            assert keyed.caught(rule, name) == plain.caught(rule, name), (rule, name)
    views = {}
    for name, scanned in (("plain", plain), ("keyed", keyed)):
        with inside(scanned.root, KEY if scanned is keyed else None):  # format 2 seals a keyed set
            views[name] = load_manifest(scanned.root / ".contam-guard" / "manifest.json").sets["gsm8k"].views
    for view, hashes in (("question~numbers-v1", "gram_hashes"), ("question~words-v2", "window_hashes")):
        plain_view, keyed_view = views["plain"][view], views["keyed"][view]
        plain_hashes, keyed_hashes = getattr(plain_view, hashes), getattr(keyed_view, hashes)
        assert plain_hashes.size == keyed_hashes.size > 0
        assert not np.array_equal(np.sort(plain_hashes), np.sort(keyed_hashes))
        assert (plain_view.word_counts == keyed_view.word_counts).all()


def test_a_keyed_manifest_without_its_key_is_refused(keyed: Scanned) -> None:
    with inside(keyed.root, "another-secret-of-at-least-thirty-two-characters!"):
        assert run("scan", "reworded.jsonl") == 2


def test_the_rules_in_the_items_and_pairs_csv(plain: Scanned) -> None:
    with (plain.root / "items.csv").open(encoding="utf-8") as handle:
        items = {int(row["test_index"]): row for row in csv.DictReader(handle)}
    rows = [json.loads(line) for line in (DEV / "reworded.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(items) == 1319
    # words-v2 at 0.32: 94 of the 100 hand rewordings (words-v1 at 0.38 found 75)
    assert sum(float(items[row["test_index"]]["reworded_score"]) >= THRESHOLD for row in rows) >= 90
    assert all(int(items[row["test_index"]]["numbers_run"]) >= 13 for row in rows)  # number-changed copies
    with (plain.root / "pairs.csv").open(encoding="utf-8") as handle:
        pairs = list(csv.DictReader(handle))
    reworded = [
        p for p in pairs if p["source"] == "reworded.jsonl" and float(p["reworded_score"]) >= THRESHOLD
    ]
    assert len(reworded) >= 70
    # most are pairs only this rule found: no shared run of 8 words, no shared window (each
    # carries its exact longest run all the same: a run of 5 to 7 words is not 0)
    only = [p for p in reworded if int(p["longest_run"]) < 8 and p["sub50_hits"] == "0"]
    assert len(only) >= 60
    assert any(5 <= int(p["longest_run"]) < 8 for p in only)


def test_the_rules_in_the_reviews_and_sarif(plain: Scanned) -> None:
    assert plain.code == 1  # GPT-3 still fails on number-changed copies that keep a run of 13
    review = plain.review()
    rules = {f["rule"] for f in review["findings"]}  # type: ignore[attr-defined]
    assert {"numbers", "reworded"} <= rules
    pair = next(f for f in review["findings"] if f["rule"] == "reworded")["pairs"][0]  # type: ignore[attr-defined]
    assert pair["reworded_score"] >= THRESHOLD
    markdown = (plain.root / "review.md").read_text(encoding="utf-8")
    assert "**reworded** WARN" in markdown or "**reworded** warn" in markdown.lower()
    assert "reworded score 0." in markdown and "masked run" in markdown
    assert "reworded score 0." in (plain.root / "review.html").read_text(encoding="utf-8")
    sarif = json.loads((plain.root / "out.sarif").read_text(encoding="utf-8"))
    run_ = sarif["runs"][0]
    assert {"numbers", "reworded"} <= {r["id"] for r in run_["tool"]["driver"]["rules"]}
    results = [r for r in run_["results"] if r["ruleId"] == "reworded"]
    assert results and all(r["level"] == "warning" for r in results)


def test_golden_text_stays_out_of_the_manifest(plain: Scanned) -> None:
    text = (plain.root / ".contam-guard" / "manifest.json").read_text(encoding="utf-8")
    assert "Janet" not in text and "ducks" not in text


@pytest.mark.slow
def test_few_training_questions_are_flagged(tmp_path: Path) -> None:
    """GSM8K's 7,473 training questions (other problems) against its test set: at most 1%."""
    with inside(tmp_path, None):
        assert run("init") == 0
        assert run("register", "gsm8k", str(GSM8K / "test.jsonl"), "--field", "question") == 0
        code = run(
            "scan", str(GSM8K / "train.jsonl"), "--field", "question", "--only", "numbers",
            "--only", "reworded", "--review-json", "train.json", "--exit-zero",
        )  # fmt: skip
        assert code == 0
        findings = json.loads(Path("train.json").read_text(encoding="utf-8"))["findings"]
    for rule in ("numbers", "reworded"):
        records = {p["record"] for f in findings if f["rule"] == rule for p in f["pairs"]}
        assert 0 < len(records) <= 0.01 * 7473, rule
