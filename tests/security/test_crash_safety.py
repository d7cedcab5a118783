"""Killed at any moment, or out of disk: every file is the old complete version or the new one."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contam_guard.manifest import store


def golden_rows(count: int, seed: str) -> str:
    return "".join(
        json.dumps(
            {
                "id": f"{seed}{i}",
                "question": f"{seed} item {i} asks how many marbles remain when {i} "
                f"are given away from a jar of {i * 7 + 3} marbles shared by {i % 9 + 2} friends",
            }
        )
        + "\n"
        for i in range(count)
    )


def run(root: Path, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        **kwargs,
    )  # type: ignore[call-overload]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    assert run(tmp_path, "init").returncode == 0
    (tmp_path / "small.jsonl").write_text(golden_rows(20, "s"))
    assert run(tmp_path, "register", "s", "small.jsonl", "--field", "question").returncode == 0
    (tmp_path / "big.jsonl").write_text(golden_rows(60_000, "b"))
    return tmp_path


def kill_after(root: Path, delay: float, *args: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()


@pytest.mark.parametrize("delay", [0.3, 1.0, 2.0, 3.5])
def test_register_killed_leaves_old_or_new_manifest(project: Path, delay: float) -> None:
    manifest = project / ".contam-guard" / "manifest.json"
    old = manifest.read_bytes()
    kill_after(project, delay, "register", "b", "big.jsonl", "--field", "question")
    now = manifest.read_bytes()
    loaded = store.load(manifest)  # never half-written: it parses and its digest holds
    assert now == old or set(loaded.sets) == {"s", "b"}
    assert run(project, "verify").returncode == 0


@pytest.mark.parametrize("delay", [0.5, 1.5, 3.0])
def test_scan_killed_leaves_no_partial_outputs(project: Path, delay: float) -> None:
    (project / "train.jsonl").write_text(
        "".join(
            json.dumps({"text": f"doc {i} about marbles and jars, nothing else at all {i}"}) + "\n"
            for i in range(200_000)
        )
    )
    before = (project / "train.jsonl").read_bytes()
    kill_after(
        project,
        delay,
        "scan",
        "train.jsonl",
        "--review",
        "r.md",
        "--review-json",
        "r.json",
        "--items-csv",
        "i.csv",
        "--exit-zero",
    )
    if (project / "r.json").exists():
        json.loads((project / "r.json").read_text())  # complete, or not there at all
    for name in ("r.md", "i.csv"):
        path = project / name
        assert not path.exists() or path.read_text().endswith("\n")
    assert (project / "train.jsonl").read_bytes() == before  # the input is untouched


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))


def test_disk_full_is_a_clear_error_and_changes_nothing(project: Path) -> None:
    manifest = project / ".contam-guard" / "manifest.json"
    old = manifest.read_bytes()
    done = run(project, "register", "b", "big.jsonl", "--field", "question", preexec_fn=_limit_file_size)
    assert done.returncode == 2, done.stderr
    assert "manifest.json" in done.stderr and "Traceback" not in done.stderr
    assert manifest.read_bytes() == old
    leftovers = [p.name for p in manifest.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []  # the failed temporary file is removed
    assert os.access(manifest, os.R_OK)
