"""The benchmarks' timer (``benchmarks/measure.run_step``) waits for a run's own orphans and
counts them, and never for a child the benchmark process had before the run (a spawned pool's
resource tracker, which lives as long as the process: waiting for it hung ``--scale-gb``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="orphans are adopted on Linux")


def run(code: str, tmp_path: Path) -> str:
    script = textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_child_from_before_the_run_is_not_waited_for(tmp_path: Path) -> None:
    out = run(
        """
        import subprocess, sys, time
        from pathlib import Path
        from benchmarks.measure import run_step
        older = subprocess.Popen(["sleep", "300"])  # lives past the run, as a resource tracker does
        start = time.perf_counter()
        code, sample = run_step(["true"], Path(sys.argv[1]), None, Path(sys.argv[1]) / "log")
        print(code, round(time.perf_counter() - start))
        older.kill()
        """,
        tmp_path,
    )
    assert out.split() == ["0", "0"]


def test_a_runs_orphans_are_waited_for_and_counted(tmp_path: Path) -> None:
    burn = "import time; t = time.process_time(); exec('while time.process_time() - t < 0.5: pass')"
    out = run(
        f"""
        import sys
        from pathlib import Path
        from benchmarks.measure import run_step
        argv = ["sh", "-c", {f"{sys.executable} -c {burn!r} & exit 0"!r}]
        code, sample = run_step(argv, Path(sys.argv[1]), None, Path(sys.argv[1]) / "log")
        print(code, sample.cpu)
        """,
        tmp_path,
    )
    code, cpu = out.split()
    assert code == "0" and float(cpu) >= 0.4  # the background process's CPU, after sh exited
