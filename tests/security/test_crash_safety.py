"""Killed at any step of a write, or out of disk: every file is the old complete version or the new one.

The kills are fault injections (``CONTAM_GUARD_FAULT``, ``contam_guard.io.atomic``): SIGKILL before
and after the fsync of the temporary file and before and after its rename, for the manifest and
for each output of a scan. Each test checks that the kill landed there: before the rename the
temporary file holds the complete new content and the destination is the old one (or absent);
after it the destination is complete.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contam_guard.io.manifest import store


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


def run(root: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        **kwargs,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    assert run(tmp_path, "init").returncode == 0
    (tmp_path / "small.jsonl").write_text(golden_rows(20, "s"))
    assert run(tmp_path, "register", "s", "small.jsonl", "--field", "question").returncode == 0
    return tmp_path


STEPS = ["before-fsync", "after-fsync", "before-replace", "after-replace"]


def killed_at(root: Path, fault: str, *args: str) -> None:
    """Run ``contam-guard ARGS`` with ``contam_guard.io.atomic``'s fault injection set to ``fault``
    (STEP@FILE NAME): it must die of SIGKILL, which only the fault sends, so the kill landed at
    that step of that file's write."""
    env = {**os.environ, "CONTAM_GUARD_FAULT": fault}
    env.pop("CONTAM_GUARD_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        env=env,
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, (fault, done.stderr[-2000:])


def temporaries(path: Path) -> list[Path]:
    """The hidden temporary files an atomic write of ``path`` leaves when killed."""
    return sorted(path.parent.glob(f".{path.name}.*.tmp"))


@pytest.mark.parametrize("step", STEPS)
def test_register_killed_leaves_old_or_new_manifest(project: Path, step: str) -> None:
    manifest = project / ".contam-guard" / "manifest.json"
    old = manifest.read_bytes()
    (project / "medium.jsonl").write_text(golden_rows(500, "m"))
    killed_at(project, f"{step}@manifest.json", "register", "m", "medium.jsonl", "--field", "question")
    if step == "after-replace":
        assert set(store.load(manifest).sets) == {"s", "m"}  # complete, its digest holds
        assert temporaries(manifest) == []
    else:  # the new manifest was written in full, and not yet put in place
        assert manifest.read_bytes() == old
        [temporary] = temporaries(manifest)
        assert set(store.load(temporary).sets) == {"s", "m"}
    assert run(project, "verify").returncode == 0


OUTPUTS = ["r.md", "r.json", "i.csv"]
SCAN = ("scan", "train.jsonl", "--review", "r.md", "--review-json", "r.json", "--items-csv", "i.csv")


@pytest.fixture
def scanned(project: Path) -> dict[str, bytes]:
    """A training file with a leak, and the outputs of an uninterrupted scan of it."""
    rows = [
        json.dumps({"text": f"doc {i} about marbles and jars, nothing else at all {i}"}) for i in range(3000)
    ]
    rows[1500] = golden_rows(20, "s").splitlines()[7].replace('"question"', '"text"')
    (project / "train.jsonl").write_text("\n".join(rows) + "\n")
    assert run(project, *SCAN).returncode == 1  # the leak is found: the outputs are not empty
    return {name: (project / name).read_bytes() for name in ["train.jsonl", *OUTPUTS]}


@pytest.mark.parametrize("target", OUTPUTS)
def test_scan_killed_leaves_no_partial_outputs(project: Path, scanned: dict[str, bytes], target: str) -> None:
    for step in STEPS:
        for name in OUTPUTS:
            (project / name).unlink(missing_ok=True)
        killed_at(project, f"{step}@{target}", *SCAN)
        path = project / target
        if step == "after-replace":
            assert path.read_bytes() == scanned[target], step
        else:  # written in full, not yet in place
            assert not path.exists(), step
            [temporary] = temporaries(path)
            assert temporary.read_bytes() == scanned[target], step
            temporary.unlink()
        for name in OUTPUTS:  # the others: complete, or not there at all
            assert not (project / name).exists() or (project / name).read_bytes() == scanned[name], name
        assert (project / "train.jsonl").read_bytes() == scanned["train.jsonl"]  # the input is untouched


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))


def test_disk_full_is_a_clear_error_and_changes_nothing(project: Path) -> None:
    manifest = project / ".contam-guard" / "manifest.json"
    old = manifest.read_bytes()
    (project / "big.jsonl").write_text(golden_rows(60_000, "b"))  # its manifest outgrows the limit
    done = run(project, "register", "b", "big.jsonl", "--field", "question", preexec_fn=_limit_file_size)
    assert done.returncode == 2, done.stderr
    # Format 2: the set's files are written before the index; the one that failed is named.
    assert ".contam-guard/sets/b/" in done.stderr and "could not write" in done.stderr
    assert "nothing was changed" in done.stderr and "Traceback" not in done.stderr
    assert manifest.read_bytes() == old
    leftovers = [p.name for p in manifest.parent.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []  # the failed temporary file is removed
    assert not any(p.is_file() for p in (manifest.parent / "sets" / "b").rglob("*"))
    assert os.access(manifest, os.R_OK)
    assert run(project, "verify").returncode == 0
