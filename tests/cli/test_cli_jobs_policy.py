"""``--jobs`` goes parallel only where it can pay: one file that is read whole (here gzip-compressed
JSONL), or less input than about 3 s of one process's work, is scanned in one process, with a
notice saying so, and finds what one process finds. Before: a pool of workers was started, one
of which read the file while the other waited; on 39 MB with every rule ``--jobs 2`` took 1.2x
one process's time. (tests/conftest.py sets CONTAM_GUARD_JOBS_MIN_SECONDS=0 for the other tests.)"""

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


def test_a_small_input_is_scanned_in_one_process(registered: Project, cg_proc: Run) -> None:
    question = registered.question_words(2)
    rows = [{"text": FILLER}, {"text": leak(question, 0, len(question))}] * 50
    (registered.root / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (registered.root / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:2]))
    rule = {"CONTAM_GUARD_JOBS_MIN_SECONDS": ""}  # the default: about 3 s of one-process work
    one = cg_proc("scan", "a.jsonl", "b.jsonl", "--review-json", "one.json", cwd=registered.root, env=rule)
    two = cg_proc(
        "scan",
        "a.jsonl",
        "b.jsonl",
        "--review-json",
        "two.json",
        "--jobs",
        "2",
        cwd=registered.root,
        env=rule,
    )
    assert "notice: --jobs 2: 0.0 MB of input, under about 45 MB with these rules" in two.err, two.err
    assert _review(registered, one, "one.json") == _review(registered, two, "two.json")
    # 0 asks for the workers whatever the size; a value that is not seconds is a usage error.
    workers = cg_proc(
        "scan",
        "a.jsonl",
        "b.jsonl",
        "--jobs",
        "2",
        cwd=registered.root,
        env={**rule, "CONTAM_GUARD_JOBS_MIN_SECONDS": "0"},
    )
    assert workers.code == 1 and "one process" not in workers.err
    bad = cg_proc(
        "scan", "a.jsonl", "--jobs", "2", cwd=registered.root, env={"CONTAM_GUARD_JOBS_MIN_SECONDS": "-1"}
    )
    assert bad.code == 2 and "CONTAM_GUARD_JOBS_MIN_SECONDS=-1: not a number of seconds" in bad.err, bad.err
