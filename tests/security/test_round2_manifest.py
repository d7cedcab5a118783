"""The manifest's rows of the hostile rounds: an index edited on one side, a kill during
``register``, readers during a concurrent ``remove``, sealed sizes, golden text in an error, a
golden file outside the repository, and set files that are not files.

``ROWS`` are single CLI calls in a fresh copy of a registered project (``hostile.py``), with the
exit code before the fix (``was``, measured on the commit this branch started from) and now. The
kill, concurrency and upgrade cases need more than one call: they are ordinary tests below, with
before and after in their docstrings. The size attack is in ``test_manifest_secrecy.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contam_guard.io.manifest import binfile
from contam_guard.io.manifest.disk_files import file_digest
from contam_guard.io.manifest.index_text import dumps_index
from contam_guard.io.manifest.schema import Index
from tests.security.hostile import (
    GOLDEN,
    KEY,
    LONG,
    MANIFEST_DIR,
    Row,
    cli,
    copy_project,
    make_project,
    put,
    run_row,
)

INDEX = MANIFEST_DIR / "manifest.json"
LEAK = json.dumps({"text": LONG}) + "\n"


def edit_index(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the index and recompute its digest, as a careless tool (or a pull request) would."""
    raw = json.loads((root / INDEX).read_text())
    change(raw)
    raw.pop("digest")
    (root / INDEX).write_text(dumps_index(Index.model_validate(raw)))


def edit_record(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the set's own record in its ids file's header, and record the file's new size and
    digest in the index (its digest recomputed): the set file's side alone changed."""
    raw = json.loads((root / INDEX).read_text())
    rel = raw["sets"]["g"]["ids"]
    path = root / MANIFEST_DIR / rel
    data = path.read_bytes()
    header = binfile.header_of(data, rel)
    arrays = {
        name: (header["arrays"][name]["dtype"], array.copy())
        for name, array in binfile.arrays_of(data, header, rel).items()
    }
    meta = {k: v for k, v in header.items() if k != "arrays"}
    meta.setdefault("set", {})  # (before records existed, the same edit adds one)
    change(meta["set"])
    blob = binfile.encode(meta, arrays)
    path.write_bytes(blob)
    described = {"bytes": len(blob), "digest": file_digest(lambda size, at: blob[at : at + size], len(blob))}
    edit_index(root, lambda index: index["sets"]["g"]["data"].update({rel: described}))


def set_file(root: Path, view: str = "question") -> Path:
    rel: str = json.loads((root / INDEX).read_text())["sets"]["g"]["views"][view]["file"]
    return root / MANIFEST_DIR / rel


def replaced_by(make: Callable[[Path], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = set_file(root)
        path.unlink()
        make(path)

    return apply


def staged_leak_with_golden_outside(root: Path) -> list[str]:
    """A golden file outside the repository named like a data file inside it: the repository's
    own ``test.jsonl`` (holding a test question) is staged."""
    outside = root.parent / f"{root.name}-evals" / "test.jsonl"
    put(outside.parent, "test.jsonl", json.dumps({"id": "o1", "question": LONG}) + "\n")
    assert cli(root, "register", "t", str(outside), "--field", "question", "--id-field", "id").returncode == 0
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    put(root, "test.jsonl", LEAK)
    subprocess.run(["git", "add", "test.jsonl"], cwd=root, check=True)
    return ["scan", "--staged"]


def no_golden_text(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert LONG[:40] not in done.stdout + done.stderr


def nothing_left_out(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    files = json.loads((root / INDEX).read_text())["sets"]["t"]["files"]
    assert files[0]["path"] == f"../{root.name}-evals/test.jsonl", files  # where it really is
    assert "not scanned" not in done.stderr


def fifo(path: Path) -> None:
    os.mkfifo(path)


def scan(root: Path) -> list[str]:
    put(root, "train.jsonl", LEAK)
    return ["scan", "train.jsonl"]


def then(change: Callable[[Path], None], args: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
    def build(root: Path) -> list[str]:
        change(root)
        return args(root)

    return build


def verify(root: Path) -> list[str]:
    return ["verify"]


def without_views(raw: dict[str, Any]) -> None:
    golden = raw["sets"]["g"]
    golden["views"] = {name: view for name, view in golden["views"].items() if "~" in name}


def raise_n(raw: dict[str, Any]) -> None:
    raw["sets"]["g"]["n"] = 1000


def drop_gpt3(raw: dict[str, Any]) -> None:
    raw["sets"]["g"]["rules"] = [rule for rule in raw["sets"]["g"]["rules"] if rule != "gpt3"]


def rename_field(raw: dict[str, Any]) -> None:
    raw["sets"]["g"]["views"]["question"]["field"] = "answer"


def older_spec(raw: dict[str, Any]) -> None:
    raw["spec"].update(words="words-v2", alnum="alnum-v2")


def keyed_set_removed(raw: dict[str, Any]) -> None:
    raw["sets"].clear()


def duplicate_ids(root: Path) -> list[str]:
    put(root, "dup.jsonl", json.dumps({"q": LONG}) + "\n" + json.dumps({"q": LONG}) + "\n")
    return ["register", "d", "dup.jsonl", "--field", "q", "--id-field", "q"]


def non_utf8_name(root: Path) -> list[str]:
    return ["register", os.fsdecode(b"bad\xffname"), "golden.jsonl", "--field", "question"]


ROWS = [
    # -- 23.6 / 22.8(a): the index against the set files' own record --
    Row("index re-sealed without the set's views: scan", then(lambda r: edit_index(r, without_views), scan),
        code=2, was=0, says=("disagree on views",)),
    Row("index re-sealed with the set's N raised: verify", then(lambda r: edit_index(r, raise_n), verify),
        code=2, was=0, says=("disagree on n",)),
    Row("index re-sealed with the set's N raised: scan", then(lambda r: edit_index(r, raise_n), scan),
        code=2, was=0, says=("disagree on n",)),
    Row("index re-sealed without gpt3 among the rules: scan", then(lambda r: edit_index(r, drop_gpt3), scan),
        code=2, was=1, says=("disagree on rules",)),
    Row("index re-sealed with a view's field renamed: verify",
        then(lambda r: edit_index(r, rename_field), verify), code=2, was=0, says=("disagree on views",)),
    Row("index re-sealed with an older spec: verify", then(lambda r: edit_index(r, older_spec), verify),
        code=2, was=0, says=("disagree on spec",)),
    Row("the set file's record alone edited (N), its digest recomputed: verify",
        then(lambda r: edit_record(r, lambda record: record.update(n=99)), verify),
        code=2, was=0, says=("disagree on n",)),
    Row("keyed index re-sealed without its set (no key needed to edit it): scan",
        then(lambda r: edit_index(r, keyed_set_removed), scan),
        code=2, was=0, says=("MAC does not match",), keyed=True),
    Row("keyed index with its MAC stripped: scan",
        then(lambda r: edit_index(r, lambda raw: raw.pop("mac", None)), scan),
        code=2, was=1, says=("carries no MAC", "contam-guard upgrade"), keyed=True),
    # -- 23.8: golden text in an error --
    Row("duplicate ids where the id field holds the question", duplicate_ids,
        code=2, was="golden text in the error", says=("duplicate item id", "dup.jsonl:1"),
        check=no_golden_text),
    # -- 22.7: a golden file registered from outside the repository --
    Row("golden file outside the repo, a staged test.jsonl of the same name", staged_leak_with_golden_outside,
        code=1, was=0, check=nothing_left_out),
    # -- 22.13: set files that are not files, a set name that is not text --
    Row("a FIFO as a set file: verify", then(replaced_by(fifo), verify),
        code=2, was="hang", says=("not a regular file (a FIFO)",)),
    Row("a FIFO as a set file: scan", then(replaced_by(fifo), scan),
        code=2, was="hang", says=("not a regular file (a FIFO)",)),
    Row("/dev/zero as a set file: verify", then(replaced_by(lambda p: p.symlink_to("/dev/zero")), verify),
        code=2, was=2, says=("not a regular file (a device)",)),
    Row("a symlink loop as a set file: verify", then(replaced_by(lambda p: p.symlink_to(p.name)), verify),
        code=2, was=3, says=("symlink loop",)),
    Row("a non-UTF-8 set name: register", non_utf8_name, code=2, was=3, says=("not UTF-8",)),
]  # fmt: skip


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    return {
        keyed: make_project(tmp_path_factory.mktemp(f"keyed{keyed}") / "p", keyed=keyed)
        for keyed in (False, True)
    }


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(templates: dict[bool, Path], tmp_path: Path, row: Row) -> None:
    run_row(row, copy_project(templates[row.keyed], tmp_path / "project"))


# --- a kill during register ---------------------------------------------------------------


def _new_version(root: Path) -> None:
    """Golden items that make set g's next version (every one of its files changes)."""
    rows = [
        GOLDEN[0],
        {"id": "g-new", "question": "Which planet has the most moons in our solar system today"},
    ]
    put(root, "golden.jsonl", "".join(json.dumps(row) + "\n" for row in rows))


REGISTER = ("register", "g", "golden.jsonl", "--field", "question", "--id-field", "id")


def _set_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / MANIFEST_DIR / "sets").rglob("*") if p.is_file())


@pytest.mark.slow
def test_a_register_killed_after_any_file_operation_leaves_a_whole_manifest(
    templates: dict[bool, Path], tmp_path: Path
) -> None:
    """A real ``register`` of set g's next version, killed (SIGKILL) right after its 1st, 2nd,
    ... file operation (``CONTAM_GUARD_MANIFEST_KILL_AFTER``), until it runs to the end. After
    each kill the index is the old one or the new one, and scan (1: the leak is found), verify,
    sets, upgrade (0), register (0: completes or repeats it), remove (0) all work.

    Before: the set files were replaced under their names before the index; a kill after any of
    the first five replacements left an index naming files of the other version, and every one
    of those commands exited 2 (the hint, register again, too)."""
    template = templates[False]
    old = (template / INDEX).read_bytes()
    complete = copy_project(template, tmp_path / "complete")
    _new_version(complete)
    assert cli(complete, *REGISTER).returncode == 0
    new, new_files = (complete / INDEX).read_bytes(), _set_files(complete)
    step = 0
    while True:
        step += 1
        root = copy_project(template, tmp_path / f"killed-{step}")
        _new_version(root)
        done = cli(root, *REGISTER, env={"CONTAM_GUARD_MANIFEST_KILL_AFTER": str(step)})
        if done.returncode == 0:  # fewer operations than ``step``: every one was a kill point
            break
        assert done.returncode == -signal.SIGKILL, done.stderr
        assert (root / INDEX).read_bytes() in (old, new), step
        put(root, "train.jsonl", LEAK)
        for args, code in (
            (("scan", "train.jsonl"), 1),
            (("verify",), 0),
            (("sets",), 0),
            (("upgrade",), 0),
            (REGISTER, 0),
        ):
            result = cli(root, *args)
            assert result.returncode == code, (step, args, result.stdout + result.stderr)
        # the registration completed: the new manifest, and nothing the kill left behind
        assert (root / INDEX).read_bytes() == new and _set_files(root) == new_files, step
        assert cli(root, "remove", "g").returncode == 0 and cli(root, "verify").returncode == 0
    # new files (6), the index, the old files (6): every step was killed once
    assert step > 13, step


# --- readers during a concurrent writer ------------------------------------------------------


def _stopped_reader(root: Path, *args: str) -> subprocess.Popen[str]:
    """``contam-guard ARGS``, stopped (SIGSTOP, by ``CONTAM_GUARD_MANIFEST_STOP_AFTER_INDEX``)
    right after it has read the index, before it opens the set files."""
    env = {**os.environ, "CONTAM_GUARD_MANIFEST_STOP_AFTER_INDEX": "1"}
    env.pop("CONTAM_GUARD_KEY", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "contam_guard", *args], cwd=root, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while _state(process.pid) != "T":
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.02)
    return process


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.parametrize(
    ("reader", "code"), [(("scan", "train.jsonl"), 1), (("verify",), 0)], ids=["scan", "verify"]
)
@pytest.mark.parametrize("writer", ["remove", "register"])
def test_a_reader_between_the_index_and_the_files_of_a_writer_reads_one_manifest(
    templates: dict[bool, Path], tmp_path: Path, reader: tuple[str, ...], code: int, writer: str
) -> None:
    """A real scan (or verify) stopped after reading the index; a real ``remove`` of another set
    (or ``register`` of its next version) runs to the end; the reader goes on.

    Before: the reader opened the files its index named, which the writer had removed (or, for
    register, replaced): exit 2 ("missing", or "its files do not hold what its index names").
    Now: the reader finds a file gone, reads the index again, and reads the new manifest whole."""
    root = copy_project(templates[False], tmp_path / "project")
    put(
        root,
        "h.jsonl",
        json.dumps({"id": "h1", "question": "Name the longest river that flows through Egypt"}) + "\n",
    )
    assert cli(root, "register", "h", "h.jsonl", "--field", "question", "--id-field", "id").returncode == 0
    put(root, "train.jsonl", LEAK)
    process = _stopped_reader(root, *reader)
    if writer == "remove":
        assert cli(root, "remove", "h").returncode == 0
    else:
        _new_version(root)
        assert cli(root, *REGISTER).returncode == 0
    os.kill(process.pid, signal.SIGCONT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == code, out + err
    assert "Traceback" not in err


@pytest.mark.slow
def test_readers_during_a_stream_of_removes_and_registers(
    templates: dict[bool, Path], tmp_path: Path
) -> None:
    """Real processes, unsynchronised: a writer removes and registers set h over and over while
    scans and verifies run; every scan finds g's leak (1) and every verify passes (0)."""
    root = copy_project(templates[False], tmp_path / "project")
    put(
        root,
        "h.jsonl",
        json.dumps({"id": "h1", "question": "Name the longest river that flows through Egypt"}) + "\n",
    )
    put(root, "train.jsonl", LEAK)
    register_h = ["register", "h", "h.jsonl", "--field", "question", "--id-field", "id"]
    script = (
        "import subprocess, sys\n"
        "for _ in range(8):\n"
        f"    for args in ({register_h!r}, ['remove', 'h']):\n"
        "        command = [sys.executable, '-m', 'contam_guard', *args]\n"
        "        subprocess.run(command, check=True, capture_output=True)\n"
    )
    writer = subprocess.Popen([sys.executable, "-c", script], cwd=root)
    codes: list[tuple[str, int, str]] = []
    while writer.poll() is None:
        for args, want in ((["scan", "train.jsonl"], 1), (["verify"], 0)):
            done = cli(root, *args)
            codes.append((args[0], done.returncode, done.stderr[-300:]))
            assert done.returncode == want, codes[-1]
    assert writer.returncode == 0 and len(codes) >= 4


# --- the upgrade path of manifests written before records, MACs and padding ---------------


def test_upgrade_adds_a_keyed_indexs_mac(templates: dict[bool, Path], tmp_path: Path) -> None:
    """A keyed index without a MAC (as contam-guard wrote them before) is refused by every
    command but ``upgrade``, which adds it; then it scans as before."""
    root = copy_project(templates[True], tmp_path / "project")
    put(root, "train.jsonl", LEAK)
    env = {"CONTAM_GUARD_KEY": KEY}
    assert cli(root, "scan", "train.jsonl", env=env).returncode == 1
    with_mac = (root / INDEX).read_bytes()
    edit_index(root, lambda raw: raw.pop("mac"))
    refused = cli(root, "verify", env=env)
    assert refused.returncode == 2 and "carries no MAC" in refused.stderr
    upgraded = cli(root, "upgrade", env=env)
    assert upgraded.returncode == 0 and "MAC" in upgraded.stdout, upgraded.stdout + upgraded.stderr
    assert (root / INDEX).read_bytes() == with_mac
    assert cli(root, "scan", "train.jsonl", env=env).returncode == 1


def test_a_set_written_before_records_loads_and_upgrade_adds_its_record(
    templates: dict[bool, Path], tmp_path: Path
) -> None:
    """An ids file without the set's record (as contam-guard wrote them before) loads, checked
    against the set's digest instead; ``upgrade`` writes the record (the same bytes a fresh
    registration gives)."""
    root = copy_project(templates[False], tmp_path / "project")
    recorded = (root / INDEX).read_bytes()
    _drop_record_key(root)
    put(root, "train.jsonl", LEAK)
    assert cli(root, "scan", "train.jsonl").returncode == 1
    assert cli(root, "verify").returncode == 0
    upgraded = cli(root, "upgrade")
    assert upgraded.returncode == 0 and "brought up to date" in upgraded.stdout, upgraded.stdout
    assert (root / INDEX).read_bytes() == recorded
    assert cli(root, "verify").returncode == 0


def _drop_record_key(root: Path) -> None:
    raw = json.loads((root / INDEX).read_text())
    rel = raw["sets"]["g"]["ids"]
    path = root / MANIFEST_DIR / rel
    data = path.read_bytes()
    header = binfile.header_of(data, rel)
    arrays = {
        name: (header["arrays"][name]["dtype"], array.copy())
        for name, array in binfile.arrays_of(data, header, rel).items()
    }
    blob = binfile.encode({k: v for k, v in header.items() if k not in ("arrays", "set")}, arrays)
    path.write_bytes(blob)
    described = {"bytes": len(blob), "digest": file_digest(lambda size, at: blob[at : at + size], len(blob))}
    edit_index(root, lambda index: index["sets"]["g"]["data"].update({rel: described}))
