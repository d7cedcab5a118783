"""What every table of the hostile rounds shares: a registered project, the real CLI in a
subprocess, and a row type that records the exit code before and after its fix.

Each table (``tests/security/test_round*_*.py``) builds its input in a fresh copy of a project
whose golden set holds one long and one short test item, runs ``python -m contam_guard`` with a
timeout (a hang fails the row instead of the suite), and checks the exit code, phrases of the
output and that no traceback reached the user. ``was`` is the code the row gave before its fix:
the closing notes list both, and ``python -m tests.security.hostile`` prints every table.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

LONG = (
    "A lamplighter in the harbour town of Brisket Cove lights thirty-two copper lamps every evening "
    "and each lamp burns four hours while the tide comes in. How many lamp-hours burn in the town "
    "each evening before the fishing boats return to the quay?"
)
"""A golden test item as long as a GSM8K question (original text, from no benchmark)."""
SHORT = "Which gas do green plants release into the air during photosynthesis"
"""A short golden item (11 words, ARC/TriviaQA style)."""
GOLDEN = [{"id": "g-long", "question": LONG}, {"id": "g-short", "question": SHORT}]
CLEAN = "the allotment society notes that the compost heap wants turning before the first frost"
KEY = "0123456789abcdef0123456789abcdef-round2"
MANIFEST_DIR = Path(".contam-guard")


def cli(
    root: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """``contam-guard ARGS`` as a real process in ``root``."""
    environment = dict(os.environ)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        check=False,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=timeout,
        env=environment,
        input=None if stdin is None else stdin.decode("latin-1"),
    )


def make_project(root: Path, *, keyed: bool = False) -> Path:
    """A project with ``GOLDEN`` registered as set ``g`` (field ``question``, ids from ``id``)."""
    root.mkdir(parents=True, exist_ok=True)
    env = {"CONTAM_GUARD_KEY": KEY} if keyed else None
    (root / "golden.jsonl").write_text("".join(json.dumps(g) + "\n" for g in GOLDEN))
    done = cli(root, "init", *(["--keyed"] if keyed else []), env=env)
    assert done.returncode == 0, done.stderr
    done = cli(root, "register", "g", "golden.jsonl", "--field", "question", "--id-field", "id", env=env)
    assert done.returncode == 0, done.stderr
    return root


def copy_project(template: Path, root: Path) -> Path:
    shutil.copytree(template, root, symlinks=True)
    return root


@dataclass(frozen=True)
class Row:
    """One hostile input: ``build`` writes it into the project and returns the CLI arguments."""

    name: str
    build: Callable[[Path], list[str]]
    code: int
    """The exit code now (0 clean, 1 findings, 2 bad input; the documented contract)."""
    was: int | str
    """What the row gave before its fix: an exit code, or "hang" / "traceback" / "damage"."""
    says: tuple[str, ...] = ()
    """Phrases the output (stdout + stderr) must contain."""
    keyed: bool = False
    env: dict[str, str] = field(default_factory=dict)
    check: Callable[[Path, subprocess.CompletedProcess[str]], None] | None = None
    """More checks after the run (a file left untouched, a manifest still loadable, ...)."""


def run_row(row: Row, root: Path) -> subprocess.CompletedProcess[str]:
    """Build and run ``row`` in ``root`` (a fresh project copy) and check what it must give."""
    args = row.build(root)
    env = dict(row.env)
    if row.keyed:
        env.setdefault("CONTAM_GUARD_KEY", KEY)
    done = cli(root, *args, env=env)
    output = done.stdout + done.stderr
    assert "Traceback" not in output and "internal error" not in output, output
    assert done.returncode == row.code, f"exit {done.returncode}, expected {row.code}:\n{output}"
    for phrase in row.says:
        assert phrase in output, f"{phrase!r} not in:\n{output}"
    if row.check is not None:
        row.check(root, done)
    return done


def put(root: Path, name: str | Path, data: bytes | str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return path


def table(module: str) -> list[Row]:
    """The ``ROWS`` of ``tests.security.<module>``."""
    return list(importlib.import_module(f"tests.security.{module}").ROWS)


if __name__ == "__main__":  # the table of every round, for a closing note
    here = Path(__file__).parent
    for path in sorted(here.glob("test_round*_*.py")):
        print(f"## {path.stem}")
        for row in table(path.stem):
            print(f"- {row.name}: was {row.was}, now {row.code}")
