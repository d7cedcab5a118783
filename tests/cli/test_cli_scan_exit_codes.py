"""``scan`` exit codes and output files, driven through the real CLI (in process)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from contam_guard.core.rules import RULES
from tests.cli.conftest import LeakText, Project
from tests.helpers import Runner

ITEM_HEADER = (
    "set,item_id,test_index,view,words,ngrams8,sub50_windows,"
    "longest_run,ngrams8_found,tokens_covered_L10,sub50_hits,numbers_run,reworded_score,"
    + ",".join(f"flag_{name}" for name in RULES)
)


@pytest.fixture
def verbatim(registered: Project, leak_text: LeakText) -> Path:
    """Training data with item lx-03's question copied verbatim into record 1 (line 2)."""
    tokens = registered.items[2]["question"].split()
    return registered.training(
        "train.jsonl", ["a clean record about tidal charts", leak_text(tokens, 0, len(tokens)), "another one"]
    )


def outputs(root: Path) -> list[str]:
    return [
        "--review",
        str(root / "r.md"),
        "--review-json",
        str(root / "r.json"),
        "--items-csv",
        str(root / "i.csv"),
    ]


def test_clean_file_exits_0(registered: Project, leak_text: LeakText) -> None:
    clean = registered.training("clean.jsonl", [leak_text([], 0, 0), "the quick brown fox jumps"])
    result = registered.cli("scan", clean)
    assert result.code == 0, result.output
    assert "No findings" in result.out
    assert "Scanned 2 records" in result.out


def test_verbatim_leak_exits_1_and_writes_every_review(
    registered: Project, verbatim: Path, tmp_path: Path
) -> None:
    result = registered.cli("scan", verbatim, *outputs(tmp_path))
    assert result.code == 1, result.output
    assert "FAIL" in result.out and "lx-03" in result.out
    md = (tmp_path / "r.md").read_text()
    assert "**gpt3** fail" in md and "lx-03" in md and "train.jsonl:2" in md
    review = json.loads((tmp_path / "r.json").read_text())
    assert review["format_version"] == 1
    failing = [f for f in review["findings"] if f["action"] == "fail"]
    assert [(f["rule"], f["item_id"], f["test_index"], f["pairs"][0]["line"]) for f in failing] == [
        ("gpt3", "lx-03", 2, 2)
    ]
    rows = list(csv.DictReader(io.StringIO((tmp_path / "i.csv").read_text())))
    assert (tmp_path / "i.csv").read_text().splitlines()[0] == ITEM_HEADER
    assert [(r["item_id"], r["test_index"]) for r in rows] == [
        (i["id"], str(n)) for n, i in enumerate(registered.items)
    ]
    by_id = {r["item_id"]: r for r in rows}
    n_words = len(registered.question_words(2))
    assert by_id["lx-03"]["words"] == by_id["lx-03"]["longest_run"] == str(n_words)
    assert {r["longest_run"] for k, r in by_id.items() if k != "lx-03"} == {"0"}


def test_items_csv_has_one_row_per_item_per_view_indexed_within_each_file(
    project: Project, tmp_path: Path, leak_text: LeakText
) -> None:
    extra = tmp_path / "golden" / "extra.jsonl"
    extra.write_text(
        "".join(
            json.dumps(
                {"id": f"ex-{n}", "question": f"How many wagons crossed bridge {n}?", "answer": str(n)}
            )
            + "\n"
            for n in range(2)
        )
    )
    args = ["register", "bench", "golden/bench.jsonl", "golden/extra.jsonl", "--id-field", "id"]
    assert project.cli(*args, "--field", "question", "--field", "answer").code == 0
    clean = project.training("clean.jsonl", [leak_text([], 0, 0)])
    assert project.cli("scan", clean, "--items-csv", tmp_path / "i.csv").code == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "i.csv").read_text())))
    ids = [i["id"] for i in project.items] + ["ex-0", "ex-1"]
    for view in ("question", "answer"):
        mine = [r for r in rows if r["view"] == view]
        assert [r["item_id"] for r in mine] == ids
        assert [int(r["test_index"]) for r in mine] == [0, 1, 2, 3, 4, 0, 1]
    assert len(rows) == 2 * 7


def test_exit_zero_reports_the_finding_but_exits_0(
    registered: Project, verbatim: Path, tmp_path: Path
) -> None:
    result = registered.cli("scan", verbatim, "--exit-zero", *outputs(tmp_path))
    assert result.code == 0, result.output
    assert "**gpt3** fail" in (tmp_path / "r.md").read_text()
    review = json.loads((tmp_path / "r.json").read_text())
    assert any(f["rule"] == "gpt3" and f["item_id"] == "lx-03" for f in review["findings"])


@pytest.mark.parametrize("content", ["", "\n\n"], ids=["empty", "blank-lines"])
def test_nothing_to_scan_exits_0_and_says_so(registered: Project, tmp_path: Path, content: str) -> None:
    (tmp_path / "empty.jsonl").write_text(content)
    result = registered.cli("scan", "empty.jsonl")
    assert result.code == 0, result.output
    assert "Nothing was scanned" in result.out


def test_unknown_file_type_is_skipped_with_a_notice(
    registered: Project, verbatim: Path, tmp_path: Path
) -> None:
    (tmp_path / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    alone = registered.cli("scan", "diagram.png", "--review", tmp_path / "r.md")
    assert alone.code == 0, alone.output
    assert "skipped" in alone.err and "diagram.png" in alone.err
    assert "skipped" in (tmp_path / "r.md").read_text()
    with_leak = registered.cli("scan", "diagram.png", verbatim)
    assert with_leak.code == 1
    assert "skipped" in with_leak.err


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        (['{"text": "fine"}', '{"text": "broken'], "bad.jsonl:2"),
        (['{"text": "fine"}', "", '{"text": "a" "b"}'], "bad.jsonl:3"),
        (['{"text": "fine"}', "{,}"], "bad.jsonl:2"),
    ],
    ids=["unterminated", "missing-comma", "bad-syntax"],
)
def test_malformed_json_line_exits_2_naming_file_and_line(
    registered: Project, tmp_path: Path, lines: list[str], where: str
) -> None:
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n")
    result = registered.cli("scan", "bad.jsonl", "--review", tmp_path / "r.md")
    assert result.code == 2, result.output
    assert where in result.err
    assert not (tmp_path / "r.md").exists()


def test_missing_path_exits_2(registered: Project, verbatim: Path) -> None:
    result = registered.cli("scan", verbatim, "no/such/file.jsonl")
    assert result.code == 2
    assert "no/such/file.jsonl" in result.err


def test_missing_field_exits_2(registered: Project, verbatim: Path) -> None:
    result = registered.cli("scan", verbatim, "--field", "body")
    assert result.code == 2
    assert "train.jsonl" in result.err


def test_scan_without_a_manifest_exits_2_with_the_fix(cli: Runner, tmp_path: Path) -> None:
    (tmp_path / "train.jsonl").write_text('{"text": "hello there"}\n')
    result = cli("scan", "train.jsonl")
    assert result.code == 2
    assert "manifest" in result.err and "contam-guard init" in result.err


def test_folder_scan_walks_for_data_files(registered: Project, verbatim: Path, tmp_path: Path) -> None:
    folder = tmp_path / "data" / "nested"
    folder.mkdir(parents=True)
    (folder / "copy.jsonl").write_bytes(verbatim.read_bytes())
    (folder / "picture.png").write_bytes(b"\x89PNG")
    result = registered.cli("scan", "data", "--review-json", tmp_path / "r.json")
    assert result.code == 1, result.output
    review = json.loads((tmp_path / "r.json").read_text())
    assert review["summary"]["files"] == ["data/nested/copy.jsonl"]
