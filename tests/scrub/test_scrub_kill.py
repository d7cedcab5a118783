"""A scrub killed with SIGKILL at any step of its writes leaves the input intact and no partial output.

The scrub runs in a child process on a ~6 MB input. It is killed at each step of each write (its
log, its output, or the input itself with ``--in-place``), by the fault injection of
``contam_guard.core.scrub.commit`` (``CONTAM_GUARD_FAULT``): before and after the fsync of the
temporary file, before and after its rename over the destination. Every file is written in full
before any is renamed, and the log is renamed first: a kill while the files are written leaves
neither. Each kill is checked to have landed exactly there: the child died of SIGKILL, and before
the rename the hidden temporary file beside the destination already holds the complete content
while the destination does not exist; after it, the destination is complete. After every kill the
input hashes as before (or, with ``--in-place`` after the rename, is the complete scrubbed file),
and every output is absent or complete (equal to that of an uninterrupted run). SIGKILL gives no
chance to clean up, so the hidden temporary file (``.out.jsonl.<random>.tmp``) can remain; it is
never at a path the user named.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

STEPS = ["before-fsync", "after-fsync", "before-replace", "after-replace"]


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


def start(root: Path, *args: str, fault: str | None = None) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("CONTAM_GUARD_KEY", "CONTAM_GUARD_FAULT")}
    if fault is not None:
        env["CONTAM_GUARD_FAULT"] = fault
    return subprocess.Popen(
        [sys.executable, "-m", "contam_guard", "scrub", *args],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def temporaries(root: Path, name: str) -> list[Path]:
    return sorted(root.glob(f".{name}.*.tmp"))


@pytest.fixture
def scrubbed(project: Path, kit: Any) -> tuple[Path, bytes, bytes]:
    """The input, and the output and log of an uninterrupted scrub of it."""
    source = project / "big.jsonl"
    build_input(source, kit)
    full = subprocess.run(
        [sys.executable, "-m", "contam_guard", "scrub", "big.jsonl", "-o", "full.jsonl", "--log", "full.log"],
        cwd=project,
        capture_output=True,
        check=False,
        timeout=300,
    )
    assert full.returncode == 0, full.stderr
    expected, expected_log = (project / "full.jsonl").read_bytes(), (project / "full.log").read_bytes()
    assert expected != source.read_bytes() and expected_log  # something was cut
    return source, expected, expected_log


@pytest.mark.parametrize("target", ["output", "log"])
def test_a_kill_at_each_write_step_leaves_old_or_complete_files(
    project: Path, scrubbed: tuple[Path, bytes, bytes], target: str
) -> None:
    source, expected, expected_log = scrubbed
    before = sha(source)
    for step in STEPS:
        out, log = f"out-{step}.jsonl", f"out-{step}.log"
        name = out if target == "output" else log
        proc = start(project, "big.jsonl", "-o", out, "--log", log, fault=f"{step}@{name}")
        assert proc.wait(timeout=300) == -signal.SIGKILL, step  # killed, by the fault at this step
        assert sha(source) == before, step
        complete = expected if target == "output" else expected_log
        if step == "after-replace":
            assert (project / name).read_bytes() == complete, step
            assert temporaries(project, name) == [], step
        else:  # the whole content was written, and the rename had not happened
            assert not (project / name).exists(), step
            [temporary] = temporaries(project, name)
            assert temporary.read_bytes() == complete, step
            temporary.unlink()
        if target == "output" and step in ("before-replace", "after-replace"):
            assert (project / log).read_bytes() == expected_log, step  # renamed first
        else:  # no log while the output is not complete, and no output before its log
            assert not (project / (log if target == "output" else out)).exists(), step


def test_in_place_is_the_original_or_the_complete_scrubbed_file(
    project: Path, scrubbed: tuple[Path, bytes, bytes]
) -> None:
    source, expected, _ = scrubbed
    original = source.read_bytes()
    for step in STEPS:
        proc = start(project, "big.jsonl", "--in-place", fault=f"{step}@big.jsonl")
        assert proc.wait(timeout=300) == -signal.SIGKILL, step
        assert source.read_bytes() == (expected if step == "after-replace" else original), step
        if step != "after-replace":
            [temporary] = temporaries(project, "big.jsonl")
            assert temporary.read_bytes() == expected, step  # complete, and not yet in place
            temporary.unlink()
        source.write_bytes(original)
