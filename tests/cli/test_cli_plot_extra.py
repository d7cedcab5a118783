"""matplotlib is the optional ``[plot]`` extra: ``--plot`` without it is a clear usage error, found
before the scan; every other command (and ``sweep`` without ``--plot``) runs without it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Runs the command line with matplotlib unimportable, as where the extra is not installed.
WITHOUT = "import sys; sys.modules['matplotlib'] = None; from contam_guard.cli import run; run()"
WITH = "from contam_guard.cli import run; run()"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", tmp_path)
    shutil.copy(EXAMPLES / "data" / "train.jsonl", tmp_path)
    for args in (["init"], ["register", "arith-mini", "arith-mini.jsonl", "--field", "question"]):
        assert run(tmp_path, WITH, *args).returncode == 0
    return tmp_path


def run(root: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.mark.parametrize("command", [["sweep", "train.jsonl"], ["dupes", "arith-mini"]])
def test_plot_without_matplotlib_names_the_extra(project: Path, command: list[str]) -> None:
    done = run(project, WITHOUT, *command, "--plot", "curve.png")
    assert done.returncode == 2, done.stderr
    assert "--plot needs matplotlib" in done.stderr
    assert "pip install 'contam-guard[plot]'" in done.stderr
    assert "Traceback" not in done.stderr and not (project / "curve.png").exists()
    assert "Share of test items" not in done.stdout  # refused before the scan, not after it


def test_everything_else_runs_without_matplotlib(project: Path) -> None:
    assert run(project, WITHOUT, "scan", "train.jsonl").returncode == 1  # the planted leaks
    done = run(project, WITHOUT, "sweep", "train.jsonl", "--csv", "sweep.csv")
    assert done.returncode == 0, done.stderr
    assert (project / "sweep.csv").exists()


def test_plot_with_matplotlib_writes_the_png(project: Path) -> None:
    """The positive control: the same command with matplotlib present draws the curve."""
    done = run(project, WITH, "sweep", "train.jsonl", "--plot", "curve.png")
    assert done.returncode == 0, done.stderr
    assert (project / "curve.png").read_bytes().startswith(b"\x89PNG")
