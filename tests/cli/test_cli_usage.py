"""``--version``, usage errors and the internal-error exit code."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest

import contam_guard
from contam_guard import cli
from contam_guard.cli.commands import manage


def test_version_in_a_fresh_process(cg_proc: Any, tmp_path: Path) -> None:
    result = cg_proc("--version", cwd=tmp_path)
    assert result.code == 0, result.output
    assert result.out.strip() == f"contam-guard {contam_guard.__version__}"
    assert contam_guard.__version__ == importlib.metadata.version("contam-guard")


def test_version_in_process(cli: Any) -> None:
    result = cli("--version")
    assert result.code == 0
    assert contam_guard.__version__ in result.out


@pytest.mark.parametrize(
    "argv",
    [
        ["scan", "--bogus", "x.jsonl"],
        ["--bogus"],
        ["frobnicate"],
        ["register"],
        ["register", "name"],
        ["scan"],
        ["scan", "x.jsonl", "--errors", "ignore"],
        ["scan", "x.jsonl", "--n"],
    ],
    ids=[
        "unknown-option",
        "unknown-root-option",
        "unknown-command",
        "no-args",
        "no-files",
        "no-paths",
        "bad-errors",
        "n-without-value",
    ],
)
def test_usage_errors_exit_2(cli: Any, argv: list[str]) -> None:
    result = cli(*argv)
    assert result.code == 2, result.output
    assert "Traceback" not in result.output


def test_usage_error_in_a_fresh_process(cg_proc: Any, tmp_path: Path) -> None:
    result = cg_proc("scan", "--no-such-option", "x.jsonl", cwd=tmp_path)
    assert result.code == 2
    assert "--no-such-option" in result.err
    assert "Traceback" not in result.output


def test_a_bug_exits_3_never_0(registered: Any, monkeypatch: Any) -> None:
    def boom(*args: object, **kwargs: object) -> int:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(manage, "sets", boom)
    result = registered.cli("sets")
    assert result.code == 3
    assert "internal error" in result.err and "bug" in result.err
    assert "Traceback" not in result.output


def test_a_fresh_process_ends_quickly_without_losing_output(
    cg_proc: Any, registered: Any, leak_text: Any, tmp_path: Path
) -> None:
    """The console script ends with ``os._exit`` after flushing: the whole machine-readable
    report still arrives on stdout, and the exit code is the documented one."""
    train = registered.training("train.jsonl", [leak_text(registered.question_words(0), 0, 30)] * 400)
    # every pair listed (no cap), so that the report is large
    result = cg_proc("scan", train, "--format", "json", "--max-pairs-per-item", "0", cwd=registered.root)
    assert result.code == 1, result.output
    report = json.loads(result.out)  # complete: flushed before the fast exit
    assert len({pair["record"] for finding in report["findings"] for pair in finding["pairs"]}) == 400
    assert cg_proc("scan", tmp_path / "missing.jsonl", cwd=registered.root).code == 2


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (3, 3), ("a message", 1)])
def test_exit_status_is_the_one_sys_exit_gives(code: object, status: int) -> None:
    assert cli._exit_status(code) == status
