"""``scrub --in-place``: the log is on disk before the input is replaced, and a symlinked input
is scrubbed where it points.

The log's order is tested by fault injection, not by timing: the scrub runs in a child process
whose ``os.replace`` ends the process (``os._exit``, no cleanup, as a kill would) just before it
renames a chosen file into place. Whichever rename is cut, the input is either the old one, or
the new one with its log. Before the fix the input was replaced first: cut before the log's
rename, the input was scrubbed and its removals recorded nowhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the fixture's type only: pytest loads the conftest itself
    from tests.scrub.conftest import Kit

CUT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from contam_guard import cli

    target = Path(os.environ["CUT_BEFORE_REPLACING"]).resolve()
    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst).resolve() == target:
            os._exit(137)  # killed right before this rename: no cleanup, no flush
        return real_replace(src, dst, *args, **kwargs)

    os.replace = replace
    sys.argv[0] = "contam-guard"
    cli.run()
    """
)


def scrub_cut_before(root: Path, cut: Path | None, *args: str) -> int:
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    env["CUT_BEFORE_REPLACING"] = str(cut or root / "nothing-is-cut")
    done = subprocess.run(
        [sys.executable, "-c", CUT, "scrub", *args],
        cwd=root,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    return done.returncode


@pytest.fixture
def train(project: Path, kit: Kit) -> Path:
    rows = [{"id": n, "text": kit.leaky(n % 2, 3, 20) if n % 3 == 0 else kit.filler} for n in range(30)]
    return kit.write_jsonl(project / "train.jsonl", rows)


def log_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cut_before_the_input_is_replaced_leaves_the_old_input_and_the_log(
    project: Path, train: Path
) -> None:
    old = train.read_bytes()
    code = scrub_cut_before(project, train, "train.jsonl", "--in-place", "--log", "removed.jsonl")
    assert code == 137
    assert train.read_bytes() == old
    assert len(log_lines(project / "removed.jsonl")) == 10  # complete: every touched record


def test_cut_before_the_log_is_replaced_leaves_the_old_input(project: Path, train: Path) -> None:
    old = train.read_bytes()
    code = scrub_cut_before(
        project, project / "removed.jsonl", "train.jsonl", "--in-place", "--log", "removed.jsonl"
    )
    assert code == 137
    assert train.read_bytes() == old  # on main: already scrubbed, with no log at all
    assert not (project / "removed.jsonl").exists()


def test_uncut_gives_the_new_input_and_its_log(project: Path, train: Path) -> None:
    old = train.read_bytes()
    assert scrub_cut_before(project, None, "train.jsonl", "--in-place", "--log", "removed.jsonl") == 0
    assert train.read_bytes() != old
    assert len(log_lines(project / "removed.jsonl")) == 10


def test_in_place_writes_through_a_symlink(project: Path, train: Path, cli: Any) -> None:
    """A dataset cache, git-annex or DVC link: the target is scrubbed, the link stays a link."""
    cache = project / "cache"
    cache.mkdir()
    blob = cache / "blob-1234"
    train.rename(blob)
    os.symlink(blob, train)
    old = blob.read_bytes()
    result = cli("scrub", "train.jsonl", "--in-place", "--log", "removed.jsonl")
    assert result.code == 0, result.output
    assert train.is_symlink() and Path(os.readlink(train)) == blob
    assert blob.read_bytes() != old and len(blob.read_text().splitlines()) == 20
    assert sorted(p.name for p in cache.iterdir()) == ["blob-1234"]  # no temporary left beside it
    scrubbed = blob.read_bytes()
    again = cli("scrub", "train.jsonl", "--in-place")  # through the link again: nothing left to remove
    assert again.code == 0 and blob.read_bytes() == scrubbed and train.is_symlink()


def test_in_place_refuses_a_read_only_target(project: Path, train: Path, cli: Any) -> None:
    """A locked git-annex file or a protected DVC object (mode 0444) is not replaced behind its
    owner's back, even by root (os.replace only needs the folder to be writable)."""
    blob = project / "blob"
    train.rename(blob)
    os.symlink(blob, train)
    blob.chmod(0o444)
    old = blob.read_bytes()
    result = cli("scrub", "train.jsonl", "--in-place")
    assert result.code == 2, result.output
    assert "read-only" in result.err and "git annex unlock" in result.err
    assert blob.read_bytes() == old and train.is_symlink()
