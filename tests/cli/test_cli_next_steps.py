"""A refusal says what to do next, and a scan that cannot find anything says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contam_guard.cli.next_steps import clean_name


@pytest.fixture
def leaky(registered: Any, leak_text: Any) -> Any:
    tokens = registered.question_words(0)
    registered.training("train.jsonl", [leak_text(tokens, 0, len(tokens))])
    registered.training("clean.jsonl", ["nothing from any test set here"])
    return registered


def tail(text: str, lines: int = 5) -> list[str]:
    return text.rstrip("\n").splitlines()[-lines:]


def test_a_failing_scan_ends_with_the_next_steps(leaky: Any, cli: Any) -> None:
    result = cli("scan", "train.jsonl", "--review", "review.md", "--review-html", "review.html")
    assert result.code == 1
    assert tail(result.out) == [
        "What next:",
        "  - read each pair in review.md, review.html",
        "  - a false positive (your own worked example, a public quote)? `contam-guard review train.jsonl` "
        "walks each finding and records your decision in .contam-guard/allowlist.yaml; commit it",
        "  - a real leak? remove it before training: `contam-guard scrub train.jsonl -o train.clean.jsonl "
        "--log removed.jsonl` (or --in-place)",
        "  - compare with the test item itself: add --show-golden "
        "(its golden file golden/bench.jsonl is here)",
    ]


def test_without_a_review_file_it_says_how_to_write_one(leaky: Any, cli: Any) -> None:
    result = cli("scan", "train.jsonl")
    assert "  - see each pair side by side: add --review review.md" in result.out


def test_show_golden_is_offered_only_where_the_golden_file_is(leaky: Any, cli: Any) -> None:
    (leaky.root / "golden/bench.jsonl").unlink()
    result = cli("scan", "train.jsonl")
    assert result.code == 1 and "What next:" in result.out
    assert "--show-golden" not in result.out
    shown = cli("scan", "train.jsonl", "--show-golden")
    assert "--show-golden" not in shown.out.split("What next:")[1]


def test_a_machine_format_on_stdout_keeps_the_next_steps_on_stderr(leaky: Any, cli: Any) -> None:
    result = cli("scan", "train.jsonl", "--format", "json")
    json.loads(result.out)  # stdout is the JSON alone
    assert "What next:" in result.err


@pytest.mark.parametrize(
    "args", [["clean.jsonl"], ["train.jsonl", "--exit-zero"], ["train.jsonl", "--only", "palm"]]
)
def test_no_next_steps_unless_the_scan_fails(leaky: Any, cli: Any, args: list[str]) -> None:
    result = cli("scan", *args)
    assert result.code == 0
    assert "What next:" not in result.output


def test_several_files_scrub_into_a_folder(leaky: Any, cli: Any) -> None:
    Path("more.jsonl").write_bytes(Path("train.jsonl").read_bytes())
    result = cli("scan", "train.jsonl", "more.jsonl")
    assert "`contam-guard scrub more.jsonl train.jsonl -o clean/ --log removed.jsonl`" in result.out


@pytest.mark.parametrize(
    ("name", "clean"),
    [
        ("train.jsonl", "train.clean.jsonl"),
        ("data/t.jsonl.gz", "data/t.clean.jsonl.gz"),
        ("notes", "notes.clean"),
    ],
)
def test_clean_name(name: str, clean: str) -> None:
    assert clean_name(name) == clean


@pytest.mark.parametrize(
    ("args", "notice"),
    [
        (["--only", "gpt3", "--n", "1000"], "no enabled rule can fire: gpt3 needs a run of 1000 words"),
        (
            ["--n", "1000", "--warn-on", "whole"],
            "no failing rule can fire: gpt3 needs a run of 1000 words",
        ),
        (
            [
                *("--disable", "gpt3", "--disable", "whole", "--disable", "palm", "--disable", "llama2"),
                *("--disable", "gpt4"),
                *("--disable", "numbers", "--disable", "reworded"),
            ],
            "every rule is disabled",
        ),
        (["--only", "llama2", "--fail-on", "llama2"], None),
        ([], None),
    ],
    ids=[
        "only gpt3, n beyond every item",
        "n beyond every item",
        "every rule disabled",
        "llama2 fails",
        "defaults",
    ],
)
def test_a_scan_that_cannot_fire_says_so(leaky: Any, cli: Any, args: list[str], notice: str | None) -> None:
    result = cli("scan", "train.jsonl", *args)
    if notice is None:
        assert "can fire" not in result.err and "disabled" not in result.err
    else:
        assert notice in result.err
        assert "longest registered item has" in result.err or "disabled" in notice
