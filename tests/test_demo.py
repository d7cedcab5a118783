"""``examples/demo.sh`` (``make demo``) prints each command exactly as it runs it: a recording
stand-in for the binary logs every argument list, and the printed ``$ contam-guard ...`` lines
must parse to exactly those, in order."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
REAL = Path(sys.executable).parent / "contam-guard"
SEPARATOR = "\x1f"


@pytest.mark.skipif(
    shutil.which("bash") is None or not REAL.exists(), reason="needs bash and the installed CLI"
)
@pytest.mark.slow
def test_demo_prints_every_command_exactly_as_it_runs(tmp_path: Path) -> None:
    log = tmp_path / "argv.log"
    shim = tmp_path / "contam-guard"
    shim.write_text(
        "#!/usr/bin/env bash\n"
        f'{{ printf "%s{SEPARATOR}" "$@"; printf "\\n"; }} >> "{log}"\n'
        f'exec "{REAL}" "$@"\n'
    )
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("CONTAM_GUARD_KEY", "NO_COLOR")}
    env |= {"CONTAM_GUARD": str(shim), "DEMO_OUT": str(tmp_path / "out")}
    proc = subprocess.run(
        ["bash", str(PROJECT / "examples" / "demo.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "\x1b[" not in proc.stdout.split("\n$ ")[1]  # no bold off a terminal
    printed = [
        shlex.split(line[len("$ contam-guard") :])
        for line in proc.stdout.splitlines()
        if line.startswith("$ contam-guard ")
    ]
    ran = [line.split(SEPARATOR)[:-1] for line in log.read_text().splitlines()]
    assert printed == ran
    # The leaky scan, with every output the demo promises (the flags once left off the line).
    scan = next(args for args in ran if args[:2] == ["scan", "data/train.jsonl"])
    assert {"--review-html", "--show-golden", "--review", "--review-json", "--items-csv"} <= set(scan)
    assert "exit code: 1" in proc.stdout and (tmp_path / "out" / "review.html").is_file()
    # Every other command the demo shows (cat) is printed as run too.
    assert "$ cat review.md\n# contam-guard review" in proc.stdout
