"""``--jobs`` goes parallel only where it can pay: one file that is read whole (here gzip-compressed
JSONL) is scanned in one process, with a notice saying so, and finds what one process finds.
Before: a pool of workers was started, one of which read the file while the other waited."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable

from tests.cli.conftest import FILLER, Project, leak
from tests.helpers import Result

Run = Callable[..., Result]


def _review(project: Project, result: Result, name: str) -> str:
    assert result.code == 1, result.output
    return (project.root / name).read_text(encoding="utf-8")


def test_one_compressed_file_is_scanned_in_one_process(registered: Project, cg_proc: Run) -> None:
    question = registered.question_words(0)
    rows = [{"text": FILLER}, {"text": leak(question, 0, len(question))}, {"text": FILLER}]
    data = registered.root / "train.jsonl.gz"
    data.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    one = cg_proc("scan", data.name, "--review-json", "one.json", cwd=registered.root)
    two = cg_proc("scan", data.name, "--review-json", "two.json", "--jobs", "2", cwd=registered.root)
    assert "notice: --jobs 2: one file that is read whole" in two.err
    assert "scanned in one process" in two.err
    assert "--jobs" not in one.err
    assert _review(registered, one, "one.json") == _review(registered, two, "two.json")


def test_two_files_still_go_parallel(registered: Project, cg_proc: Run) -> None:
    question = registered.question_words(1)
    for name in ("a.jsonl.gz", "b.jsonl.gz"):
        text = json.dumps({"text": leak(question, 0, len(question))}) + "\n"
        (registered.root / name).write_bytes(gzip.compress(text.encode()))
    result = cg_proc("scan", "a.jsonl.gz", "b.jsonl.gz", "--jobs", "2", cwd=registered.root)
    assert result.code == 1, result.output
    assert "one process" not in result.err
    assert "a.jsonl.gz" in result.out and "b.jsonl.gz" in result.out
