"""Run the shell commands a Markdown page shows, as shown: its plain fenced blocks (a fence with no
language; ```text blocks are output), one bash session per page so that ``cd`` carries over, each
command's exit code checked against its ``# exit N`` comment (0 without one)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import REPO

EXIT = re.compile(r"#\s*exit (\d+)")
COMMENT = re.compile(r"\s+#\s.*$")
MARK = "::cg-docs-exit"


@dataclass(frozen=True)
class Command:
    line: str
    expected: int


def blocks(page: Path, fence: str = "") -> list[str]:
    """The page's fenced blocks whose opening fence names ``fence`` ("" for none)."""
    out: list[str] = []
    current: list[str] | None = None
    opened = ""
    for line in page.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("```") and current is None:
            current, opened = [], line[3:].strip()
        elif line.startswith("```"):
            if opened == fence:
                out.append("".join(current or []))
            current = None
        elif current is not None:
            current.append(line)
    return out


def commands(block: str, swaps: dict[str, str]) -> list[Command]:
    text = block.replace("\\\n", " ")
    for old, new in swaps.items():
        text = text.replace(old, new)
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        found = EXIT.search(line)
        out.append(Command(COMMENT.sub("", line).strip(), int(found.group(1)) if found else 0))
    return out


def environment(home: Path) -> dict[str, str]:
    """contam-guard on PATH (this checkout's, through PYTHONPATH), git with an identity, no key."""
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    script = Path(sys.executable).with_name("contam-guard")
    assert script.exists() or shutil.which("contam-guard"), "contam-guard is not installed"
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(REPO),
        HOME=str(home),
        GIT_AUTHOR_NAME="Docs",
        GIT_AUTHOR_EMAIL="docs@example.org",
        GIT_COMMITTER_NAME="Docs",
        GIT_COMMITTER_EMAIL="docs@example.org",
        GIT_CONFIG_NOSYSTEM="1",
        NO_COLOR="1",
    )
    return env


def run(commands_: list[Command], cwd: Path, home: Path) -> list[tuple[Command, int, str]]:
    """Each command in one bash session; its exit code and what it printed."""
    script = "".join(f"{c.line}\necho '{MARK}' $?\n" for c in commands_)
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env=environment(home),
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
    )
    parts = done.stdout.split(MARK)
    results = []
    for command, part, after in zip(commands_, parts, parts[1:]):
        results.append((command, int(after.split(None, 1)[0]), part))
    assert len(results) == len(commands_), done.stdout[-2000:] + done.stderr[-2000:]
    return results


def check(results: list[tuple[Command, int, str]]) -> None:
    wrong = [
        f"{c.line!r}: exit {code}, expected {c.expected}\n{out[-1500:]}"
        for c, code, out in results
        if code != c.expected
    ]
    assert not wrong, "\n".join(wrong)
