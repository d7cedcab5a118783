"""Two writers on one manifest: the second fails fast (exit 2) and nothing is lost or torn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from contam_guard.cli import main
from contam_guard.io.manifest import store

MANIFEST = ".contam-guard/manifest.json"


def golden(path: Path, subject: str, items: int = 6) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"{subject}-{n}",
                    "q": f"How many {subject} did the Ravensholt ferry carry on "
                    f"trip {n} if each deck held {n + 4} crates of {subject} and two decks were full?",
                }
            )
            + "\n"
            for n in range(items)
        )
    )
    return path


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "contam_guard", *args]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}


def cg(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(*args), cwd=cwd, env=env(), capture_output=True, text=True, timeout=120, check=False
    )


def run(*args: str) -> int:
    """The CLI in this process (from the current folder); returns the exit code."""
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return info.value.code if isinstance(info.value.code, int) else 0


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    golden(tmp_path / "apples.jsonl", "apples")
    golden(tmp_path / "pears.jsonl", "pears")
    assert run("init") == 0
    assert run("register", "apples", "apples.jsonl", "--field", "q", "--id-field", "id") == 0
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["register", "pears", "pears.jsonl", "--field", "q", "--id-field", "id"],
        ["register", "apples", "pears.jsonl", "--field", "q", "--id-field", "id"],
        ["remove", "apples"],
    ],
    ids=["register-new", "register-changed", "remove"],
)
def test_a_writer_fails_fast_while_another_holds_the_lock(project: Path, args: list[str]) -> None:
    manifest = project / MANIFEST
    before = manifest.read_bytes()
    with store.locked(manifest):
        proc = cg(project, *args)
        assert manifest.read_bytes() == before
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "another contam-guard" in proc.stderr and "manifest.json" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert manifest.read_bytes() == before
    assert run(*args) == 0  # the lock went with its holder: the same command now works
    assert manifest.read_bytes() != before


def test_readers_do_not_need_the_lock(project: Path) -> None:
    (project / "train.jsonl").write_text(json.dumps({"text": "nothing to see"}) + "\n")
    with store.locked(project / MANIFEST):
        for args in (["verify"], ["sets"], ["scan", "train.jsonl"]):
            assert run(*args) == 0, args


def test_concurrent_registrations_lose_no_update(project: Path) -> None:
    """Writers started together: each either lands or exits 2 ("another contam-guard"); every set
    whose writer said 0 is in the final manifest, which verifies. (Large golden files keep each
    writer inside the lock for a while, so that the writers overlap.)"""
    subjects = ["pears", "plums", "figs"]
    for subject in subjects:
        golden(project / f"{subject}.jsonl", subject, items=1500)
    procs = {
        s: subprocess.Popen(
            command("register", s, f"{s}.jsonl", "--field", "q", "--id-field", "id"),
            cwd=project,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for s in subjects
    }
    landed = set()
    for subject, proc in procs.items():
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 2), err
        if proc.returncode == 0:
            landed.add(subject)
        else:
            assert "another contam-guard" in err, err
    assert landed, "at least one writer must get the lock"
    sets = json.loads((project / MANIFEST).read_text())["sets"]
    assert landed <= set(sets)
    assert run("verify") == 0
    assert not list((project / ".contam-guard").glob("*.tmp"))
