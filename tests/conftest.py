"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contam_guard.cli import main
from tests.helpers import Result, Runner


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Runner:
    """Run ``contam-guard ARGS`` in this process; returns exit code, stdout and stderr."""

    def run(*args: str | Path) -> Result:
        capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            main([os.fspath(a) for a in args])
        captured = capsys.readouterr()
        code = info.value.code
        return Result(
            code if isinstance(code, int) else 0 if code is None else 99, captured.out, captured.err
        )

    return run
