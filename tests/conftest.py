"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from contam_guard.cli import main
from tests.helpers import Result, Runner

# CI runs the same examples every time (``.ci/run`` exports CI=1; GitHub Actions sets CI too): a
# red build is the commit's, never a new random draw's. Failures print the blob that replays
# them; each one found is then kept as an explicit ``@example``. Locally, Hypothesis draws new
# examples on every run and keeps failures in its database, to keep finding new ones.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
