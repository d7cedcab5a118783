"""Hostile round 2, short items: a 9-12-word test question (ARC, TriviaQA, MMLU style) copied
verbatim into a chat message, which only warned (PaLM, Llama 2, GPT-4) while the GPT-3 rule's N
was 13, and a passing pre-commit hook's warnings are never shown.

Now GPT-3's N is each set's own (``n: auto``: its 5th-percentile item length, 8..13) and a whole
item of 5 words or more found verbatim in one string fails (the ``whole`` rule) whatever N is.
The project's golden set ``g`` holds a 43-word item and an 11-word one (auto N: 11); rows add a
set of 9-12-word items and one of a 4-word item, which no run rule can measure (``sets`` says so).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.security.hostile import SHORT, Row, cli, copy_project, make_project, put, run_row

QUIZ = [
    {"id": "t-9", "question": "Which river flows through the old city of Quillmere"},  # 9 words
    {"id": "t-10", "question": "What colour were the sails of the Marrowdale ferry boats"},  # 10
    {"id": "t-12", "question": "In which year did the glassworks at Penhallow Bridge open its gates"},  # 12
]
TINY = [{"id": "x-4", "question": "Name the tallest volcano"}]  # 4 words


def chat(text: str) -> str:
    """One chat-format training record with ``text`` inside the user's message."""
    messages = [
        {"role": "user", "content": f"Quick one for my homework: {text}? Thanks a lot!"},
        {"role": "assistant", "content": "Happy to help."},
    ]
    return json.dumps({"messages": messages}) + "\n"


def register(root: Path, name: str, items: list[dict[str, str]]) -> None:
    put(root, f"{name}.jsonl", "".join(json.dumps(item) + "\n" for item in items))
    done = cli(root, "register", name, f"{name}.jsonl", "--field", "question", "--id-field", "id")
    assert done.returncode == 0, done.stderr


Build = Callable[[Path], list[str]]


def scan_chat(text: str, *options: str, sets: tuple[tuple[str, list[dict[str, str]]], ...] = ()) -> Build:
    """``scan`` of a chat message holding ``text``, with ``sets`` registered first."""

    def build(root: Path) -> list[str]:
        for name, items in sets:
            register(root, name, items)
        put(root, "chat.jsonl", chat(text))
        return ["scan", "chat.jsonl", *options]

    return build


def sets_with(name: str, items: list[dict[str, str]]) -> Build:
    def build(root: Path) -> list[str]:
        register(root, name, items)
        return ["sets"]

    return build


def no_failure(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert "FAIL" not in done.stdout, done.stdout


def staged(text: str) -> Build:
    """The chat file staged in a real git repository: what the pre-commit hook scans."""

    def build(root: Path) -> list[str]:
        put(root, "chat.jsonl", chat(text))
        for command in (["init", "-q"], ["add", "chat.jsonl"]):
            subprocess.run(["git", *command], cwd=root, check=True, capture_output=True)
        return ["scan", "--staged"]

    return build


CHANGED_MIDDLE = SHORT.replace("release", "give off")
CHANGED_END = SHORT.replace("photosynthesis", "respiration")

ROWS = [
    Row(
        "11-word item copied into a chat message",
        scan_chat(SHORT),
        code=1,
        was=0,
        says=("FAIL gpt3, WARN", "shared run of 11 words >= N = 11"),
    ),
    Row(
        "11-word item in a chat message, staged (the pre-commit hook's scan)",
        staged(SHORT),
        code=1,
        was=0,
        says=("FAIL gpt3, WARN",),
    ),
    Row(
        "11-word item in a chat message with N pinned at 13: the whole item still fails",
        scan_chat(SHORT, "--n", "13"),
        code=1,
        was=0,
        says=("FAIL whole, WARN", "the whole item (11 words) found verbatim in one string"),
    ),
    Row(
        "9-word quiz item copied into a chat message (auto N for the quiz set: 9)",
        scan_chat(QUIZ[0]["question"], sets=(("quiz", QUIZ),)),
        code=1,
        was=0,
        says=("quiz:question item t-9", "FAIL gpt3, WARN", "shared run of 9 words >= N = 9"),
    ),
    Row(
        "12-word quiz item copied into a chat message, N pinned at 13",
        scan_chat(QUIZ[2]["question"], "--n", "13", sets=(("quiz", QUIZ),)),
        code=1,
        was=0,
        says=("quiz:question item t-12", "the whole item (12 words) found verbatim in one string"),
    ),
    Row(
        "11-word item with one word changed in the middle: a warning at most",
        scan_chat(CHANGED_MIDDLE),
        code=0,
        was=0,
        says=("no failing findings",),
        check=no_failure,
    ),
    Row(
        "11-word item with its last word changed: a 10-word run only warns",
        scan_chat(CHANGED_END),
        code=0,
        was=0,
        says=("WARN palm llama2",),
        check=no_failure,
    ),
    Row(
        "4-word item: sets says no failing rule can measure it",
        sets_with("tiny", TINY),
        code=0,
        was=0,
        says=(
            "tiny:question: 1 item(s) too short for every failing rule (gpt3, whole): a copy of one cannot "
            "fail a scan",
            "whole needs an item of 5 words",
            "runs are measured through 5-grams, so no run rule measures an item under 5 words",
        ),
    ),
    Row(
        "4-word item copied into a chat message: not measurable (sets says so)",
        scan_chat(TINY[0]["question"], sets=(("tiny", TINY),)),
        code=0,
        was=0,
        check=no_failure,
    ),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("round2-short") / "template")


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(row: Row, template: Path, tmp_path: Path) -> None:
    run_row(row, copy_project(template, tmp_path / "project"))


def test_sets_counts_what_each_rule_cannot_measure(template: Path, tmp_path: Path) -> None:
    """``sets`` per view: items too short for gpt3 (with the view's N), for whole (under 5 words),
    palm (under 8), llama2 (runs of 10) and gpt4 (50 letters and digits). Before: no whole
    column, gpt3's N shown only for a set registered with its own."""
    root = copy_project(template, tmp_path / "project")
    register(root, "quiz", QUIZ)
    register(root, "tiny", TINY)
    done = cli(root, "sets")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("┃", "│"))]
    header = [cell.strip() for cell in lines[0].strip("┃").split("┃")]
    rows = {
        row["set"]: row
        for row in (dict(zip(header, (c.strip() for c in line.strip("│").split("│")))) for line in lines[1:])
    }
    columns = ("too short: gpt3", "whole", "palm", "llama2", "gpt4")
    counts = {name: [row[c] for c in columns] for name, row in rows.items()}
    assert counts == {
        "g": ["0 (N=11)", "0", "0", "0", "0"],
        # t-9: no 10-word run; t-9 and t-10: under 50 letters and digits (43 and 47)
        "quiz": ["0 (N=9)", "0", "0", "1", "2"],
        "tiny": ["1 (N=8)", "1", "1", "1", "1"],
    }


def test_a_whole_finding_is_reviewed_like_a_gpt3_one(template: Path, tmp_path: Path) -> None:
    """``review`` answered ``n`` on a whole finding writes an allowlist entry naming the rule,
    and the next scan passes. Before: allowlist entries could name only gpt3, palm, llama2 and
    gpt4, so the same review of a rewording rule's finding exited 3 (a ValidationError)."""
    root = copy_project(template, tmp_path / "project")
    put(root, "chat.jsonl", chat(SHORT))
    failing = cli(root, "scan", "chat.jsonl", "--n", "13")
    assert failing.returncode == 1 and "FAIL whole" in failing.stdout
    reviewed = cli(root, "review", "chat.jsonl", "--n", "13", stdin=b"n\nour own quiz, quoted on purpose\n")
    assert reviewed.returncode == 0, reviewed.stdout + reviewed.stderr
    allowlist = (root / ".contam-guard" / "allowlist.yaml").read_text(encoding="utf-8")
    assert "rule: whole" in allowlist and "our own quiz, quoted on purpose" in allowlist
    passing = cli(root, "scan", "chat.jsonl", "--n", "13")
    assert passing.returncode == 0, passing.stdout
    assert "ALLOWED whole" in passing.stdout
    only_reworded = ("--only", "reworded", "--fail-on", "reworded")
    rewording = cli(root, "review", "chat.jsonl", *only_reworded, stdin=b"n\nours\n")
    assert rewording.returncode == 0, rewording.stdout + rewording.stderr
    assert "rule: reworded" in (root / ".contam-guard" / "allowlist.yaml").read_text(encoding="utf-8")
