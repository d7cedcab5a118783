"""scan --jobs, --skip-unreadable and --redact-pii through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contam_guard.cli import main

QUESTION = (
    "A beekeeper collects 36 jars of honey each week and sells them in boxes of 4, "
    "how many boxes does she fill"
)


def run(*args: str) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return int(exit_info.value.code or 0)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("golden.jsonl").write_text(json.dumps({"id": "b1", "question": QUESTION}) + "\n")
    assert run("init") == 0
    assert run("register", "bees", "golden.jsonl", "--field", "question", "--id-field", "id") == 0
    return tmp_path


def test_jobs_gives_the_same_review_as_one_process(project: Path) -> None:
    rows = [{"text": f"row {i} about weather"} for i in range(30_000)]
    rows[21_000] = {"text": "contact me at ann@example.org: " + QUESTION}
    Path("train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run("scan", "train.jsonl", "--review-json", "one.json") == 1
    assert run("scan", "train.jsonl", "--review-json", "two.json", "--jobs", "2") == 1
    assert Path("one.json").read_text() == Path("two.json").read_text()
    assert '"line": 21001' in Path("one.json").read_text()


def test_skip_unreadable_notes_the_file_and_goes_on(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("bad.jsonl").write_text('{"text": "fine"}\n{"text": oops}\n')
    Path("good.jsonl").write_text(json.dumps({"text": QUESTION}) + "\n")
    assert run("scan", "bad.jsonl", "good.jsonl") == 2  # the default: never pass what was not read
    capsys.readouterr()
    assert run("scan", "bad.jsonl", "good.jsonl", "--skip-unreadable") == 1
    output = capsys.readouterr()
    assert "bad.jsonl:2" in output.out + output.err and "skip-unreadable" in output.out + output.err


def test_redact_pii_masks_the_training_side_snippet(project: Path) -> None:
    Path("train.jsonl").write_text(
        json.dumps({"text": "mail ann@example.org or call 555-123-4567. " + QUESTION}) + "\n"
    )
    assert run("scan", "train.jsonl", "--review", "plain.md") == 1
    assert run("scan", "train.jsonl", "--review", "masked.md", "--redact-pii") == 1
    assert "ann@example.org" in Path("plain.md").read_text()
    masked = Path("masked.md").read_text()
    assert "ann@example.org" not in masked and "555-123-4567" not in masked
    assert "[EMAIL]" in masked and "[PHONE]" in masked
