"""``contam-guard impact`` end to end, on the items CSV of a real scan (and the scan's flag columns)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_jsonl


@pytest.fixture
def scanned(registered: Any, leak_text: Any, tmp_path: Path) -> Path:
    """A scan of training data holding lx-03's question verbatim (gpt3 fails on it) and lx-05's
    verbatim in a record marked allowed; its items CSV at items.csv."""
    copy = registered.question_words(2)
    allowed = registered.question_words(4)
    write_jsonl(
        tmp_path / "train.jsonl",
        [
            {"text": leak_text(copy, 0, len(copy))},
            {"text": leak_text(allowed, 0, len(allowed)), "contam_guard": "allow"},
        ],
    )
    result = registered.cli("scan", "train.jsonl", "--items-csv", "items.csv")
    assert result.code == 1, result.output
    return tmp_path / "items.csv"


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return {row["item_id"]: row for row in csv.DictReader(handle)}


def test_items_csv_flags_each_rule(scanned: Path, registered: Any) -> None:
    rows = _rows(scanned)
    assert {k: r["flag_gpt3"] for k, r in rows.items()} == {
        "lx-01": "0",
        "lx-02": "0",
        "lx-03": "1",
        "lx-04": "0",
        "lx-05": "allowed",
    }
    assert (
        rows["lx-03"]["flag_llama2"] == "1" and rows["lx-03"]["tokens_covered_L10"] == rows["lx-03"]["words"]
    )
    assert registered.cli("scan", "train.jsonl", "--only", "palm", "--items-csv", "only.csv").code == 0
    only = _rows(Path("only.csv"))
    assert {r["flag_gpt3"] for r in only.values()} == {""}  # not run: empty, not 0
    assert only["lx-03"]["flag_palm"] == "1"


def test_impact_end_to_end(scanned: Path, registered: Any, tmp_path: Path) -> None:
    # lx-03 (flagged) right, the clean four: lx-01 right, the other three wrong (lx-05 is allowed:
    # clean). Full 2/5, clean 1/4, flagged 1/1, clean - full -0.15, relative change -37.5%.
    scores = {"lx-01": 1, "lx-02": 0, "lx-03": 1, "lx-04": 0, "lx-05": 0}
    write_jsonl(tmp_path / "scores.jsonl", [{"item_id": k, "score": v} for k, v in scores.items()])
    result = registered.cli(
        "impact",
        "--scores",
        "scores.jsonl",
        "--items",
        scanned,
        "--rule",
        "gpt3",
        "--bootstrap",
        "2000",
        "--json",
        "impact.json",
        "--markdown",
        "impact.md",
        "--plot",
        "impact.png",
    )
    assert result.code == 0, result.output
    report = json.loads((tmp_path / "impact.json").read_text())
    assert report["format_version"] == 1 and report["rule"] == "gpt3"
    assert report["counts"] == {"scored": 5, "clean": 4, "flagged": 1, "unscored": 0}
    assert (report["full"]["mean"], report["clean"]["mean"], report["flagged"]["mean"]) == (0.4, 0.25, 1.0)
    assert report["clean_minus_full"]["value"] == pytest.approx(-0.15)
    assert report["gpt3_relative_change"]["value"] == pytest.approx(-0.375)
    assert report["clean_minus_full"]["low"] <= -0.15 <= report["clean_minus_full"]["high"] <= 0
    subsets = {s["name"]: s for s in report["llama2"]["subsets"]}
    assert subsets["dirty"]["n"] == 2  # lx-03 and lx-05, each copied whole
    assert subsets["dirty"]["mean"] == 0.5 and report["llama2"]["contaminated"] is False
    markdown = (tmp_path / "impact.md").read_text()
    assert markdown in result.out
    assert "| clean (not flagged by gpt3) | 4 | 25.0% |" in markdown
    assert "**Clean − full: -15.00 points**" in markdown
    assert (tmp_path / "impact.png").read_bytes().startswith(b"\x89PNG")
    # Golden text never reaches a report: only ids and numbers.
    text = markdown + (tmp_path / "impact.json").read_text()
    assert "cartographer" not in text and "parchment" not in text


def test_impact_by_default_splits_by_any_rule(scanned: Path, registered: Any, tmp_path: Path) -> None:
    write_jsonl(tmp_path / "s.jsonl", [{"test_index": n, "score": n % 2} for n in range(5)])
    result = registered.cli("impact", "--scores", "s.jsonl", "--items", scanned, "--json", "i.json")
    assert result.code == 0, result.output
    report = json.loads((tmp_path / "i.json").read_text())
    assert report["rule"] == "any" and report["counts"]["flagged"] == 1  # lx-03; lx-05 is allowed


@pytest.mark.parametrize(
    ("scores", "args", "message"),
    [
        (
            [{"item_id": "lx-01", "score": 1}, {"item_id": "lx-99", "score": 0}],
            [],
            "s.jsonl:2: 1 of 2 scores match no item of set 'bench'",
        ),
        ([{"item_id": "lx-01", "acc": 1}], [], "s.jsonl:1: no metric 'score' (numbers here: acc)"),
        ([{"item_id": "lx-01", "score": 1}], ["--rule", "numbers"], "has no flag_numbers column"),
        ([{"item_id": "lx-01", "score": 1}], ["--json", "items.csv"], "--json would write items.csv"),
        ([{"item_id": "lx-01", "score": 1}], ["--bootstrap", "5"], "--bootstrap 5: use between 100"),
    ],
)
def test_impact_errors_exit_2_with_the_file_and_line(
    scanned: Path,
    registered: Any,
    tmp_path: Path,
    scores: list[dict[str, Any]],
    args: list[str],
    message: str,
) -> None:
    if "--rule" in args:  # an items CSV written before a rule existed: drop the rule's column
        rows = list(csv.reader(io.StringIO(scanned.read_text())))
        keep = [i for i, name in enumerate(rows[0]) if name != "flag_numbers"]
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows([[row[i] for i in keep] for row in rows])
        scanned.write_text(buffer.getvalue())
    write_jsonl(tmp_path / "s.jsonl", scores)
    before = scanned.read_bytes()
    result = registered.cli("impact", "--scores", "s.jsonl", "--items", "items.csv", *args)
    assert result.code == 2, result.output
    assert message in result.err and "Traceback" not in result.output
    assert scanned.read_bytes() == before


def test_plot_without_matplotlib_names_the_extra(scanned: Path, tmp_path: Path) -> None:
    write_jsonl(tmp_path / "s.jsonl", [{"test_index": n, "score": 1} for n in range(5)])
    code = "import sys; sys.modules['matplotlib'] = None; from contam_guard.cli import run; run()"
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    args = ["impact", "--scores", "s.jsonl", "--items", "items.csv", "--plot", "p.png", "--json", "i.json"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "--plot needs matplotlib" in done.stderr and "pip install 'contam-guard[plot]'" in done.stderr
    assert not (tmp_path / "p.png").exists() and not (tmp_path / "i.json").exists()
