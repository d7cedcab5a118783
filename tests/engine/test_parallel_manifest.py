"""``register`` or ``remove`` while ``scan --jobs 2`` runs: the workers use the manifest the parent
loaded, so the scan is exactly the scan of that manifest.

Deterministic: a wrapper runs the other command just as the worker pool is created, after the
parent has loaded the manifest and before any worker has looked at it. Before the fix, workers
loaded the file themselves when its size or time had changed: another index than the parent's,
and the merge failed (exit 3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_jsonl

RACE = textwrap.dedent(
    """
    import os, shlex, subprocess, sys
    from contam_guard import cli
    from contam_guard.engines import parallel

    class Racing(parallel.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            other = [sys.executable, "-m", "contam_guard", *shlex.split(os.environ["RACE"])]
            subprocess.run(other, check=True, capture_output=True)
            super().__init__(*args, **kwargs)

    parallel.ProcessPoolExecutor = Racing
    sys.argv[0] = "contam-guard"
    cli.run()
    """
)

QUESTIONS = [
    "The lighthouse keeper at Orrin Point trimmed forty copper wicks every evening before the fog",
    "A clockmaker in Tessaly Row assembled thirty-six pendulum clocks in March for the guild museum",
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    assert cli("init").code == 0
    write_jsonl(tmp_path / "a.jsonl", [{"id": "a1", "question": QUESTIONS[0]}])
    write_jsonl(tmp_path / "b.jsonl", [{"id": "b1", "question": QUESTIONS[1]}])
    assert cli("register", "a", "a.jsonl", "--field", "question", "--id-field", "id").code == 0
    rows = [{"text": f"filler record {n} {QUESTIONS[n % 2] if n % 50 == 0 else ''}"} for n in range(400)]
    write_jsonl(tmp_path / "one.jsonl", rows[:200])
    write_jsonl(tmp_path / "two.jsonl", rows[200:])
    return tmp_path


def raced(root: Path, other: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    env["RACE"] = other
    args = ["scan", "one.jsonl", "two.jsonl", "--jobs", "2", "--format", "json"]
    return subprocess.run(
        [sys.executable, "-c", RACE, *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("setup", "other", "sets_after"),
    [
        ([], "register b b.jsonl --field question --id-field id", ["a", "b"]),
        (["register", "b", "b.jsonl", "--field", "question", "--id-field", "id"], "remove b", ["a"]),
    ],
    ids=["register during the scan", "remove during the scan"],
)
def test_the_scan_is_that_of_the_manifest_it_loaded(
    project: Path, cli: Any, setup: list[str], other: str, sets_after: list[str]
) -> None:
    if setup:
        assert cli(*setup).code == 0
    expected = cli("scan", "one.jsonl", "two.jsonl", "--format", "json")  # one process, before
    assert expected.code == 1, expected.output
    done = raced(project, other)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout) == json.loads(expected.out)
    manifest = json.loads((project / ".contam-guard" / "manifest.json").read_text())
    assert sorted(manifest["sets"]) == sets_after  # the other command did run meanwhile
