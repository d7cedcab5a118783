"""Hostile rows, rounds 2 and 3: the guard's own files, outputs, scrub and standard input.

``ROWS`` is the table (``tests/security/hostile.py``): each row builds its input in a fresh copy of
a registered project and runs the real CLI. ``was`` is what the row gave on main before these
fixes: "damage" where a file was destroyed (a set file of the manifest replaced by a report, an
input replaced by its own review), "hang" where the command never ended, 3 where it crashed.

- Every output option can point at a file of the manifest (``.contam-guard/sets/**/*.bin``):
  each is refused (exit 2) and ``verify`` still passes after it.
- ``scan data --review-json data/linked/leak.jsonl`` with ``data/linked -> ../real`` replaced the
  very input it had just flagged: outputs are now checked against the list of files the scan
  reads (symlinked folders followed, by device and inode).
- A FIFO or ``/dev/zero`` as a scrub input or ``impact --scores``/``--items``, and a dangling or
  self-looping link for ``scrub --in-place``: a clear exit 2 naming it.

The rows that need more than one CLI call are tests below the table (``review``'s standard input,
scrub on a full file system, owners, modes and hard links); each docstring says before and after.
"""

from __future__ import annotations

import json
import os
import random
import resource
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from contam_guard.core.scrub.commit import check_keepable
from contam_guard.errors import ContamGuardError
from tests.security.hostile import CLEAN, LONG, Row, cli, copy_project, make_project, put, run_row

LEAK = json.dumps({"text": f"{CLEAN} {LONG}"}) + "\n"
OUTPUTS = ["--review", "--review-json", "--review-html", "--items-csv", "--pairs-csv", "--sarif", "--summary"]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("round2-guard") / "project")


def set_file(root: Path) -> Path:
    """A binary file of the registered set (whatever its name on disk)."""
    return sorted((root / ".contam-guard" / "sets").rglob("*.bin"))[0]


def manifest_intact(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    verified = cli(root, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def over_a_set_file(*command: str, new_file: bool = False) -> Callable[[Path], list[str]]:
    """``command`` with its last option pointed at a set file of the manifest (or, ``new_file``,
    at a file not there yet beside them)."""

    def build(root: Path) -> list[str]:
        put(root, "train.jsonl", LEAK)
        put(root, "train.txt", f"{CLEAN} {LONG}\n")
        target = set_file(root).relative_to(root)
        return [*command, str(target.with_name("review.md") if new_file else target)]

    return build


def linked_folder(root: Path) -> list[str]:
    put(root, "real/leak.jsonl", LEAK)
    (root / "data").mkdir()
    os.symlink("../real", root / "data" / "linked")
    return ["scan", "data", "--review-json", "data/linked/leak.jsonl"]


def input_kept(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert (root / "real" / "leak.jsonl").read_text() == LEAK


def fifo(name: str, *command: str) -> Callable[[Path], list[str]]:
    def build(root: Path) -> list[str]:
        os.mkfifo(root / name)
        return list(command)

    return build


def link(name: str, target: str, *command: str) -> Callable[[Path], list[str]]:
    def build(root: Path) -> list[str]:
        os.symlink(target, root / name)
        return list(command)

    return build


def with_items(*command: str, fifo_name: str | None = None) -> Callable[[Path], list[str]]:
    """An items CSV from a real scan, then ``command`` (with a FIFO made first, if named)."""

    def build(root: Path) -> list[str]:
        put(root, "train.jsonl", LEAK)
        done = cli(root, "scan", "train.jsonl", "--items-csv", "items.csv")
        assert done.returncode == 1, done.stderr
        put(root, "scores.jsonl", json.dumps({"item_id": "g-long", "score": 1}) + "\n")
        if fifo_name is not None:
            os.mkfifo(root / fifo_name)
        return list(command)

    return build


def impact_json_over_a_set_file(root: Path) -> list[str]:
    args = with_items("impact", "--scores", "scores.jsonl", "--items", "items.csv")(root)
    return [*args, "--json", str(set_file(root).relative_to(root))]


ROWS = [
    *[
        Row(
            f"22.9 scan {option} over a set file of the manifest",
            over_a_set_file("scan", "train.jsonl", option),
            2,
            "damage",
            says=(option, "the manifest's file", "nothing was done"),
            check=manifest_intact,
        )
        for option in [*OUTPUTS, "--output"]
    ],
    Row(
        "22.9 scan --review into the set folder (a new file)",
        over_a_set_file("scan", "train.jsonl", "--review", new_file=True),
        2,
        1,
        says=("inside contam-guard's folder",),
        check=manifest_intact,
    ),
    Row(
        "22.9 scrub -o over a set file",
        over_a_set_file("scrub", "train.txt", "-o"),
        2,
        "damage",
        says=("--output", "the manifest's file"),
        check=manifest_intact,
    ),
    Row(
        "22.9 scrub --log over a set file",
        over_a_set_file("scrub", "train.txt", "-o", "clean.txt", "--log"),
        2,
        "damage",
        says=("--log", "the manifest's file"),
        check=manifest_intact,
    ),
    Row(
        "22.9 impact --json over a set file",
        impact_json_over_a_set_file,
        2,
        "damage",
        says=("--json", "the manifest's file"),
        check=manifest_intact,
    ),
    Row(
        "22.10 --review-json over an input reached through a symlinked folder",
        linked_folder,
        2,
        "damage",
        says=("--review-json", "the input data/linked/leak.jsonl", "symbolic link"),
        check=input_kept,
    ),
    Row(
        "22.13 scrub a FIFO",
        fifo("pipe.jsonl", "scrub", "pipe.jsonl", "-o", "out.jsonl"),
        2,
        2,
        says=("pipe.jsonl", "not a regular file"),
    ),
    Row(
        "22.13 scrub /dev/zero",
        lambda root: ["scrub", "/dev/zero", "-o", "out.jsonl"],
        2,
        2,
        says=("/dev/zero",),
    ),
    Row(
        "22.13 scrub /dev/zero through a .jsonl link",
        link("zero.jsonl", "/dev/zero", "scrub", "zero.jsonl", "--in-place"),
        2,
        2,
        says=("zero.jsonl", "not a regular file"),
    ),
    Row(
        "22.13 scrub --in-place a dangling link",
        link("gone.jsonl", "nowhere.jsonl", "scrub", "gone.jsonl", "--in-place"),
        2,
        3,
        says=("gone.jsonl", "broken symlink"),
    ),
    Row(
        "22.13 scrub --in-place a self-looping link",
        link("loop.jsonl", "loop.jsonl", "scrub", "loop.jsonl", "--in-place"),
        2,
        3,
        says=("loop.jsonl", "symlink loop"),
    ),
    Row(
        "22.13 impact --scores a FIFO",
        with_items("impact", "--scores", "fifo.jsonl", "--items", "items.csv", fifo_name="fifo.jsonl"),
        2,
        "hang",
        says=("fifo.jsonl", "not a regular file"),
    ),
    Row(
        "22.13 impact --scores /dev/zero",
        with_items("impact", "--scores", "/dev/zero", "--items", "items.csv"),
        2,
        "hang",
        says=("/dev/zero", "not a regular file"),
    ),
    Row(
        "22.13 impact --items a FIFO",
        with_items("impact", "--scores", "scores.jsonl", "--items", "fifo.csv", fifo_name="fifo.csv"),
        2,
        2,
        says=("fifo.csv", "not a regular file"),
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(template: Path, tmp_path: Path, row: Row) -> None:
    run_row(row, copy_project(template, tmp_path / "project"))


# --- review's standard input -------------------------------------------------------------------


def closed(root: Path) -> dict[str, object]:
    return {"stdin": None, "preexec_fn": lambda: os.close(0)}


def dev_zero(root: Path) -> dict[str, object]:
    return {"stdin": open("/dev/zero", "rb")}  # closed by the test once the process ends


def random_bytes(root: Path) -> dict[str, object]:
    put(root, "noise.bin", random.Random(7).randbytes(4000))
    return {"stdin": (root / "noise.bin").open("rb")}


def silent_fifo(root: Path) -> dict[str, object]:
    os.mkfifo(root / "answers")
    # Opened for reading and writing: a writer exists, so reading never sees the end; nothing comes.
    return {"stdin": os.open(root / "answers", os.O_RDWR)}


STDIN = [
    # (case, how stdin is given, was on main, what the output must say)
    ("closed", closed, 3, "standard input: closed"),
    ("/dev/zero", dev_zero, "hang", "longer than 4,096 bytes"),
    ("random bytes", random_bytes, 0, "not UTF-8 text"),
    ("a FIFO nobody writes to", silent_fifo, "hang", "no answer within 1 s"),
]


@pytest.mark.parametrize(("case", "stdin", "was", "says"), STDIN, ids=[c[0] for c in STDIN])
def test_review_standard_input(
    template: Path,
    tmp_path: Path,
    case: str,
    stdin: Callable[[Path], dict[str, object]],
    was: object,
    says: str,
) -> None:
    """``review`` reads its answers from standard input. Before: a closed one crashed (exit 3),
    /dev/zero and a silent FIFO hung, random bytes passed (exit 0: a stray ``y`` or ``n`` in them
    would have written the allowlist). Now each is exit 2 saying what is wrong with it, and the
    allowlist is untouched."""
    root = copy_project(template, tmp_path / "project")
    put(root, "train.jsonl", LEAK)
    given = stdin(root)
    done = subprocess.run(
        [sys.executable, "-m", "contam_guard", "review", "train.jsonl", "--answer-timeout", "1"],
        cwd=root,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=120,
        check=False,
        **given,  # type: ignore[call-overload]
    )
    for handle in given.values():
        if isinstance(handle, int):
            os.close(handle)
        elif hasattr(handle, "close"):
            handle.close()
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert says in output and "Traceback" not in output, output
    assert not (root / ".contam-guard" / "allowlist.yaml").exists()


def test_review_still_takes_piped_answers(template: Path, tmp_path: Path) -> None:
    """The positive control: answers piped in are read as before."""
    root = copy_project(template, tmp_path / "project")
    put(root, "train.jsonl", LEAK)
    done = cli(root, "review", "train.jsonl", stdin=b"n\nour own worked example\n")
    assert done.returncode == 0, done.stderr
    assert "our own worked example" in (root / ".contam-guard" / "allowlist.yaml").read_text()


# --- scrub: a full file system, owners, modes, hard links ---------------------------------------


def big_input(root: Path) -> Path:
    """About 300 KB of clean records and one leak (the log of its removal is a few hundred bytes)."""
    lines = [json.dumps({"text": f"{CLEAN} {n}"}) for n in range(3000)]
    lines.append(json.dumps({"text": f"{CLEAN} {LONG} {CLEAN * 3}"}))
    return put(root, "big.jsonl", "\n".join(lines) + "\n")


def scrub(root: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def lower() -> None:  # ulimit -f: a write past it fails with EFBIG (Python ignores SIGXFSZ)
        assert limit is not None
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "contam_guard", "scrub", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=lower if limit is not None else None,
    )


def test_scrub_on_a_full_file_system_leaves_no_log(template: Path, tmp_path: Path) -> None:
    """``ulimit -f`` below the output's size, above the log's. Before: exit 2, but the log had been
    written first and claimed removals that never happened. Now: exit 2 saying that neither was
    written; the input, no log and no temporary file are left."""
    root = copy_project(template, tmp_path / "project")
    source = big_input(root)
    original = source.read_bytes()
    done = scrub(root, "big.jsonl", "--in-place", "--log", "scrub.log", limit=200 * 1024)
    assert done.returncode == 2, done.stderr
    assert "could not write" in done.stderr and "no output and no log was written" in done.stderr
    assert "Traceback" not in done.stderr
    assert source.read_bytes() == original
    assert not (root / "scrub.log").exists()
    assert not list(root.glob(".*.tmp"))
    # Positive control: with room to write, the same command writes both.
    done = scrub(root, "big.jsonl", "--in-place", "--log", "scrub.log")
    assert done.returncode == 0, done.stderr
    assert source.read_bytes() != original and (root / "scrub.log").read_text().count("\n") == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_scrub_in_place_keeps_owner_and_mode(template: Path, tmp_path: Path) -> None:
    """Run as root on another user's file (mode 0640). Before: the scrubbed file belonged to root
    (mode kept). Now: the owner, group and mode are the old file's."""
    root = copy_project(template, tmp_path / "project")
    source = big_input(root)
    os.chown(source, 4321, 4322)
    source.chmod(0o640)
    original = source.read_bytes()
    done = scrub(root, "big.jsonl", "--in-place")
    assert done.returncode == 0, done.stderr
    info = source.stat()
    assert source.read_bytes() != original
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 4322, 0o640)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to act as another user for a moment")
def test_a_file_whose_owner_cannot_be_kept_is_refused() -> None:
    """An ordinary user may replace another user's file in a folder they can write (then it would
    become theirs): scrub refuses instead, naming the owner. Checked with the real effective user
    id of this process, lowered for the call."""
    folder = Path(tempfile.mkdtemp(prefix="contam-guard-owner-"))
    try:
        folder.chmod(0o777)
        theirs, mine = folder / "theirs.jsonl", folder / "mine.jsonl"
        theirs.write_text(LEAK)
        mine.write_text(LEAK)
        os.chown(theirs, 4321, 4321)
        os.chown(mine, 1234, 1234)
        os.setegid(1234)
        os.seteuid(1234)
        try:
            check_keepable(mine, "mine.jsonl")  # one's own file: fine
            with pytest.raises(ContamGuardError, match="owned by user 4321") as info:
                check_keepable(theirs, "theirs.jsonl")
        finally:
            os.seteuid(0)
            os.setegid(0)
        assert "nothing was changed" in str(info.value)
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


def test_scrub_in_place_says_when_other_hard_links_keep_the_leak(template: Path, tmp_path: Path) -> None:
    """Before: exit 0 and not a word, while the other name still held the leak. Now: exit 0 and a
    notice that the other link keeps the original text (which a scan of it still finds)."""
    root = copy_project(template, tmp_path / "project")
    source = put(root, "train.jsonl", LEAK)
    os.link(source, root / "copy.jsonl")
    done = scrub(root, "train.jsonl", "--in-place")
    assert done.returncode == 0, done.stderr
    assert "train.jsonl has 1 other hard link(s)" in done.stderr
    assert cli(root, "scan", "copy.jsonl").returncode == 1  # the other name: the leak is there
    assert cli(root, "scan", "train.jsonl").returncode == 0
    # No notice for a file with no other name.
    again = scrub(root, "train.jsonl", "--in-place")
    assert again.returncode == 0 and "hard link" not in again.stderr
