"""Every field is read: a whole leaked test item in a record's second (or deeper) field fails the
check, whatever the record's shape, the file format and the way the check runs.

The table: record shapes people train on, each with the leak in a field that is not the first,
written as JSONL, a JSON array, CSV and Parquet (where the shape fits the format), and the same
shapes without the leak. Every file is checked one by one with ``scan`` (exit 1 with the leak,
naming the field, exit 0 without), and all of them together through ``scan --staged``,
``scan --diff BASE..HEAD`` and the GitHub Action's entry script, each of which must name every
leaky file and none of the clean ones.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .conftest import GOLDEN, Repo
from .test_ci_action import run_action

LEAK = GOLDEN[1]["question"]
CLEAN = "the allotment society notes that the compost heap wants turning before the first frost"

Maker = Callable[[str], Any]


@dataclass(frozen=True)
class Shape:
    """A record shape: ``make(text)`` builds a record with ``text`` in the field at ``field``."""

    name: str
    make: Maker
    field: str
    flat: bool = False
    """Every value a string at the top level: the shape fits a CSV row too."""
    raw_jsonl: Callable[[str], str] | None = None
    """For shapes only raw JSON can write (a repeated key): the line itself."""


def _tool_call(text: str) -> dict[str, Any]:
    arguments = json.dumps({"query": text})
    return {
        "messages": [
            {"role": "user", "content": "look this up"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "f", "arguments": arguments}}],
            },
        ]
    }


SHAPES = [
    Shape("prompt-completion", lambda t: {"prompt": "Solve.", "completion": t}, "completion", flat=True),
    Shape(
        "dolly",
        lambda t: {"instruction": "Answer it.", "context": "From a worksheet.", "response": t},
        "response",
        flat=True,
    ),
    Shape(
        "question-answer-rationale",
        lambda t: {"question": "What now?", "answer": "42", "rationale": t},
        "rationale",
        flat=True,
    ),
    Shape(
        "dpo", lambda t: {"prompt": "Reply.", "chosen": "A fine reply.", "rejected": t}, "rejected", flat=True
    ),
    Shape("input-target", lambda t: {"input": "Translate this.", "target": t}, "target", flat=True),
    Shape(
        "chat-and-response",
        lambda t: {"messages": [{"role": "user", "content": "Hello there."}], "response": t},
        "response",
    ),
    Shape(
        "chat-third-turn",
        lambda t: {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi."},
                {"role": "assistant", "content": t},
            ]
        },
        "messages[2].content",
    ),
    Shape("tool-call-arguments", _tool_call, "messages[1].tool_calls[0].function.arguments"),
    Shape("nested-body", lambda t: {"id": "d-1", "data": {"title": "Notes", "body": t}}, "data.body"),
    Shape("list-of-strings", lambda t: {"paragraphs": ["An intro.", t]}, "paragraphs[1]"),
    Shape(
        "repeated-key",
        lambda t: {"text": t},
        "text",
        raw_jsonl=lambda t: '{"text": ' + json.dumps(t) + ', "text": "a clean last value"}',
    ),
]
FORMATS = ["jsonl", "json", "csv", "parquet"]


def fits(shape: Shape, fmt: str) -> bool:
    if shape.raw_jsonl is not None:
        return fmt in ("jsonl", "json")  # a table cannot repeat a column name... except CSV, below
    return fmt != "csv" or shape.flat


def write(root: Path, shape: Shape, fmt: str, text: str, name: str) -> str:
    """A file of two records: a clean one, then ``shape`` holding ``text``."""
    first, second = shape.make(CLEAN), shape.make(text)
    rel = f"data/{name}.{fmt}"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        line = shape.raw_jsonl(text) if shape.raw_jsonl else json.dumps(second)
        path.write_text(json.dumps(first) + "\n" + line + "\n", encoding="utf-8")
    elif fmt == "json":
        element = shape.raw_jsonl(text) if shape.raw_jsonl else json.dumps(second)
        path.write_text("[" + json.dumps(first) + ",\n" + element + "]\n", encoding="utf-8")
    elif fmt == "csv":
        columns = list(first)
        rows = [",".join(json.dumps(record[c]) for c in columns) for record in (first, second)]
        path.write_text(",".join(columns) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    else:
        pq.write_table(pa.Table.from_pylist([first, second]), path)
    return rel


CASES = [(shape, fmt) for shape in SHAPES for fmt in FORMATS if fits(shape, fmt)]
assert len(CASES) >= 10 * 3


def _failing_files(review: dict[str, Any]) -> dict[str, set[str]]:
    """Training file -> the fields of its failing findings, from a JSON review."""
    found: dict[str, set[str]] = {}
    for finding in review["findings"]:
        if finding["action"] == "fail" and not finding["allowed"]:
            for pair in finding["pairs"]:
                found.setdefault(pair["source"], set()).add(pair["field"])
    return found


@pytest.fixture
def files(repo: Repo) -> tuple[Repo, dict[str, str], list[str]]:
    """Every case written twice into the work tree, uncommitted: (repo, leaky file -> field,
    clean files). A CSV whose header repeats a column (``text,text``) is one more leaky case."""
    leaky: dict[str, str] = {}
    clean: list[str] = []
    for shape, fmt in CASES:
        leaky[write(repo.root, shape, fmt, LEAK, f"{shape.name}-leak")] = shape.field
        clean.append(
            write(repo.root, shape, fmt, "nothing to see in this record at all", f"{shape.name}-clean")
        )
    repo.write("data/text-text-leak.csv", f'text,text\n"{CLEAN}","{CLEAN}"\n"a clean first cell","{LEAK}"\n')
    leaky["data/text-text-leak.csv"] = "text"
    return repo, leaky, clean


def test_each_file_alone(files: tuple[Repo, dict[str, str], list[str]], tmp_path: Path) -> None:
    repo, leaky, clean = files
    for rel, field in leaky.items():
        review = tmp_path / "review.json"
        done = repo.cg("scan", rel, "--review-json", review)
        assert done.code == 1, (rel, done.output)
        assert _failing_files(json.loads(review.read_text())) == {rel: {field}}, rel
        assert f"field {field}" in done.out, (rel, done.out)
    for rel in clean:
        done = repo.cg("scan", rel)
        assert done.code == 0, (rel, done.output)


def test_staged_diff_and_the_action_name_every_leaky_file(
    files: tuple[Repo, dict[str, str], list[str]], tmp_path: Path
) -> None:
    repo, leaky, _clean = files
    # The files all leak one item: list every record (the default lists 20 per item).
    config = repo.root / ".contam-guard" / "contam-guard.yaml"
    config.write_text(config.read_text().replace("max_pairs_per_item: 20", "max_pairs_per_item: 0"))
    base = repo.head()
    repo.git("add", "-A")

    staged = tmp_path / "staged.json"
    done = repo.cg("scan", "--staged", "--review-json", staged)
    assert done.code == 1, done.output
    assert _failing_files(json.loads(staged.read_text())) == {rel: {f} for rel, f in leaky.items()}

    repo.commit("add training data")
    diff = tmp_path / "diff.json"
    done = repo.cg("scan", "--diff", f"{base}..HEAD", "--review-json", diff)
    assert done.code == 1, done.output
    assert _failing_files(json.loads(diff.read_text())) == {rel: {f} for rel, f in leaky.items()}

    (tmp_path / "action").mkdir()
    proc, _, outputs = run_action(repo, tmp_path / "action", CG_PR_BASE_SHA=base)
    assert proc.returncode == 1, proc.stderr
    review = json.loads(Path(outputs["review-file"]).with_suffix(".json").read_text())
    assert _failing_files(review) == {rel: {f} for rel, f in leaky.items()}
    # GitHub shows 10 error annotations per step: 10 files get one, the rest are counted.
    annotated = {
        line.split("file=", 1)[1].split(",", 1)[0] for line in proc.stdout.splitlines() if "file=" in line
    }
    assert len(annotated) == 10 and annotated <= set(leaky)
    assert "not annotated" in proc.stdout


def test_the_same_files_clean_pass_every_front_end(repo: Repo, tmp_path: Path) -> None:
    for shape, fmt in CASES:
        write(repo.root, shape, fmt, "nothing to see in this record at all", shape.name)
    base = repo.head()
    repo.git("add", "-A")
    assert repo.cg("scan", "--staged").code == 0
    repo.commit("add clean training data")
    assert repo.cg("scan", "--diff", f"{base}..HEAD").code == 0
    (tmp_path / "action").mkdir()
    proc, _, _ = run_action(repo, tmp_path / "action", CG_PR_BASE_SHA=base)
    assert proc.returncode == 0, proc.stderr


def test_the_action_reads_only_the_fields_it_is_given(
    files: tuple[Repo, dict[str, str], list[str]], tmp_path: Path
) -> None:
    """The ``fields`` input (one per line) is ``--field``, repeated: the leak outside the named
    fields is not read (the user's choice), the one inside is."""
    repo, _, _ = files
    base = repo.head()
    repo.commit("add training data")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    proc, _, _ = run_action(
        repo, tmp_path / "a", CG_PR_BASE_SHA=base, CG_PATHS="data/dpo-leak.jsonl", CG_FIELDS="prompt\nchosen"
    )
    assert proc.returncode == 0, proc.stderr
    proc, _, _ = run_action(
        repo,
        tmp_path / "b",
        CG_PR_BASE_SHA=base,
        CG_PATHS="data/dpo-leak.jsonl",
        CG_FIELDS="prompt\n rejected ",
    )
    assert proc.returncode == 1, proc.stderr
