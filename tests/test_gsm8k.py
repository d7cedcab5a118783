"""The seed article's known answers on GSM8K (question text; test registered, train scanned).

Reads ../shared/data/gsm8k (never copied into the project); skips with a reason elsewhere.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from contam_guard.cli import main
from contam_guard.core.config import Rules
from contam_guard.core.dupes import self_match
from contam_guard.core.scanner import Scanner
from contam_guard.core.verdicts import evaluate
from contam_guard.engines.local import scan_sources
from contam_guard.io.manifest import store
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from contam_guard.report.analysis import RULE_COLUMNS, SweepRow, sweep

GSM8K = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "gsm8k"
pytestmark = [
    pytest.mark.gsm8k,
    pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}"),
]


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    return int(exit_info.value.code or 0)


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, str]]:
    root = tmp_path_factory.mktemp("gsm8k")
    assert run(["init", str(root)]) == 0
    common = ["--manifest", str(root / ".contam-guard" / "manifest.json")]
    assert run(["register", "gsm8k", str(GSM8K / "test.jsonl"), "--field", "question", *common]) == 0
    out = root / "items.csv"
    code = run(["scan", str(GSM8K / "train.jsonl"), "--field", "question", "--items-csv", str(out), *common])
    assert code == 1  # the GPT-3 rule fails by default, and three items share 13+ words
    with out.open() as handle:
        return {int(row["test_index"]): row for row in csv.DictReader(handle)}


def col(items: dict[int, dict[str, str]], name: str) -> np.ndarray:
    return np.array([int(items[i][name]) for i in sorted(items)])


def test_gpt3_flags_exactly_the_three_known_items(items: dict[int, dict[str, str]]) -> None:
    assert len(items) == 1319
    flagged = {i: int(r["longest_run"]) for i, r in items.items() if int(r["longest_run"]) >= 13}
    assert flagged == {581: 15, 602: 19, 632: 25}


def test_any_hit_at_n_row_matches_the_article(items: dict[int, dict[str, str]]) -> None:
    longest = col(items, "longest_run")
    shares = [round(100 * float(np.mean(longest >= n)), 1) for n in (5, 6, 8, 10, 13, 20, 30, 50)]
    assert shares == [67.9, 34.8, 5.8, 0.7, 0.2, 0.1, 0.0, 0.0]


def test_palm_llama2_and_gpt4_rows_match_the_article(items: dict[int, dict[str, str]]) -> None:
    words, found8, n8 = col(items, "words"), col(items, "ngrams8_found"), col(items, "ngrams8")
    covered = col(items, "tokens_covered_L10")
    m, h = col(items, "sub50_windows"), col(items, "sub50_hits")
    palm = found8 / np.maximum(n8, 1) >= 0.7
    assert palm.sum() == 0
    assert (covered / words >= 0.8).sum() == 0
    assert round(100 * float(np.mean(covered / words >= 0.2)), 1) == 0.7
    miss = (m - h) * (m - h - 1) * (m - h - 2) / (m * (m - 1) * (m - 2))
    assert round(float(np.sum(1 - miss)), 1) == 1.9
    assert round(100 * float(np.mean(h > 0)), 1) == 0.3


def test_item_counts_match_the_article(items: dict[int, dict[str, str]]) -> None:
    assert (items[0]["words"], items[0]["ngrams8"], items[0]["sub50_windows"]) == ("52", "45", "172")
    assert (items[632]["sub50_windows"], items[632]["sub50_hits"]) == ("185", "52")


@pytest.fixture(scope="module")
def manifest_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gsm8k-dupes")
    assert run(["init", str(root)]) == 0
    path = root / ".contam-guard" / "manifest.json"
    assert (
        run(["register", "gsm8k", str(GSM8K / "test.jsonl"), "--field", "question", "--manifest", str(path)])
        == 0
    )
    return path


def _percent(row: SweepRow) -> tuple[list[float], list[float]]:
    return (
        [round(100 * v, 1) for v in row.any_hit.values()],
        [round(100 * row.rules[c], 1) for c in RULE_COLUMNS],
    )


def test_sweep_train_row_matches_the_article(manifest_path: Path) -> None:
    scanner = Scanner.open(manifest_path)
    acc = scan_sources(scanner, [Source(GSM8K / "train.jsonl", "train")], ReadOptions(fields=("question",)))
    (row,) = sweep(scanner.finish(acc).result, Rules())
    any_hit, rules = _percent(row)
    assert any_hit == [67.9, 34.8, 5.8, 0.7, 0.2, 0.1, 0.0, 0.0]
    # the article's six, then this tool's rewording rules: numbers, reworded
    assert rules[:6] == [0.2, 0.0, 0.0, 0.7, 0.1, 0.3]
    assert rules[6:] == [0.5, 3.4]


def test_dupes_finds_the_two_pairs_asked_both_ways(manifest_path: Path) -> None:
    golden = store.load(manifest_path).sets["gsm8k"]
    result = self_match("gsm8k", golden, "question")
    report = evaluate(result, Rules(), exit_zero=True)
    flagged = {
        (f.test_index, f.pairs[0].record, f.pairs[0].longest_run) for f in report.findings if f.rule == "gpt3"
    }
    assert flagged == {(418, 558, 18), (558, 418, 18), (488, 761, 14), (761, 488, 14)}
    (row,) = sweep(result, Rules())
    any_hit, rules = _percent(row)
    assert any_hit == [41.1, 16.0, 2.7, 0.8, 0.3, 0.0, 0.0, 0.0]
    assert rules == [0.3, 0.0, 0.0, 0.6, 0.2, 0.6, 0.0, 0.0]  # numbers, reworded: no pass here
