"""A scrub killed with SIGKILL at any point leaves the input intact and no partial output.

The scrub runs in a child process on a ~6 MB input. It is killed at random moments (seeded)
across its whole run, and at two moments inside the writing pass (once it has written a quarter
and three quarters of the output's size, counted by the kernel: ``/proc/PID/io``, so the test
does not depend on how the output is written). After each kill: the input hashes as
before, and the output and the log either do not exist or are complete (equal to those of an
uninterrupted run). SIGKILL gives no chance to clean up, so the hidden temporary file beside the
output (``.out.jsonl.<random>.tmp``) can remain; it is never at a path the user named.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc/PID/io")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_input(path: Path, kit: Any, records: int = 12_000) -> None:
    rng = random.Random(11)
    vocabulary = [f"w{rng.randrange(10**6):06d}" for _ in range(3000)]
    with path.open("w", encoding="utf-8") as out:
        for number in range(records):
            text = " ".join(rng.choices(vocabulary, k=55))
            if number % 120 == 0:  # a 13-word leak every 120 records, each in at most 2 records
                leak = number // 120
                text = kit.leaky(leak % 2, (leak // 2) % 35, 13, text, kit.filler * 2)
            out.write(json.dumps({"id": number, "text": text}) + "\n")


def start(root: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    return subprocess.Popen(
        [sys.executable, "-m", "contam_guard", "scrub", *args],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool], timeout: float = 60.0) -> bool:
    """SIGKILL ``proc`` once ``ready()``; False if it finished first."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if ready():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.002)
    proc.wait()
    return False


def written(proc: subprocess.Popen[bytes]) -> int:
    """Bytes the process has written so far (Linux ``/proc/PID/io``), whatever the file."""
    try:
        text = Path(f"/proc/{proc.pid}/io").read_text()
    except OSError:  # it has just exited
        return -1
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith("wchar:")))


def test_sigkill_leaves_the_input_intact_and_no_partial_output(project: Path, kit: Any) -> None:
    source = project / "big.jsonl"
    build_input(source, kit)
    before = sha(source)

    began = time.monotonic()
    full = subprocess.run(
        [sys.executable, "-m", "contam_guard", "scrub", "big.jsonl", "-o", "full.jsonl", "--log", "full.log"],
        cwd=project,
        capture_output=True,
        check=False,
        timeout=300,
    )
    assert full.returncode == 0, full.stderr
    duration = time.monotonic() - began
    expected = (project / "full.jsonl").read_bytes()
    expected_log = (project / "full.log").read_bytes()
    assert expected != source.read_bytes() and expected_log  # something was cut

    # When to kill: ready(seconds since start, bytes written so far) -> bool. Random moments
    # over the whole run, then two inside the writing pass (a quarter, three quarters written).
    rng = random.Random(20240601)
    schedules: list[tuple[str, Callable[[float, int], bool]]] = [
        (f"{at:.2f} s after start", lambda since, size, at=at: since >= at)
        for at in sorted(rng.uniform(0.1, 1.05) * duration for _ in range(3))
    ]
    for share in (0.25, 0.75):
        schedules.append(
            (f"{share:.0%} written", lambda since, size, share=share: size >= share * len(expected))
        )
    killed_while_writing = 0
    for number, (label, ready) in enumerate(schedules):
        out, log = f"out{number}.jsonl", f"out{number}.log"
        proc = start(project, "big.jsonl", "-o", out, "--log", log)
        t0 = time.monotonic()
        killed = kill_when(
            proc, lambda proc=proc, ready=ready, t0=t0: ready(time.monotonic() - t0, written(proc))
        )
        killed_while_writing += killed and label.endswith("written")
        assert sha(source) == before, label
        for path, complete in ((project / out, expected), (project / log, expected_log)):
            assert not path.exists() or path.read_bytes() == complete, (label, path.name)
        for leftover in project.glob(f".{out}.*.tmp"):
            leftover.unlink()  # SIGKILL's only trace: a hidden temporary file, never the output
    assert killed_while_writing == 2  # the deliberate kills did land inside the writing pass

    # --in-place: the input is either the original or the complete scrubbed file, never a mix.
    proc = start(project, "big.jsonl", "--in-place")
    assert kill_when(proc, lambda: written(proc) >= len(expected) // 2)
    assert sha(source) == before
