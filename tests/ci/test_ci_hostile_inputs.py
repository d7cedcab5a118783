"""Hostile inputs that passed silently (exit 0), each a row: built in a real repository with
contam-guard set up, run through the CLI, and now caught (exit 1) or refused with the fix (exit 2).

``was`` is the exit code the same command gave before these cases were handled (measured on the
code before the change; kept for the record, not asserted). Git LFS rows need the real git-lfs
(``apt-get install git-lfs``; ``.ci/run`` installs it) and skip without it.
"""

from __future__ import annotations

import codecs
import gzip
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from .conftest import FILLER, Repo, jsonl, leak

HAS_LFS = shutil.which("git-lfs") is not None
NEEDS_LFS = pytest.mark.skipif(not HAS_LFS, reason="git-lfs is not installed (apt-get install git-lfs)")


@dataclass(frozen=True)
class Case:
    build: Callable[[Repo], list[str]]
    """Sets the repository up; returns the contam-guard arguments to run in it."""
    code: int
    says: str
    """A fragment of the output that shows why (the finding's file, or the error)."""
    was: int


def lfs_repo(repo: Repo) -> None:
    repo.git("lfs", "install", "--local")
    repo.git("lfs", "track", "data/lfs/**")
    repo.commit("track data/lfs with Git LFS", ".gitattributes")


def lfs_staged(name: str, body: str) -> Callable[[Repo], list[str]]:
    def build(repo: Repo) -> list[str]:
        lfs_repo(repo)
        repo.write(f"data/lfs/{name}", body)
        repo.git("add", "-A")
        assert repo.git("cat-file", "blob", f":data/lfs/{name}").startswith("version https://git-lfs")
        return ["scan", "--staged"]

    return build


def lfs_diff(name: str, body: str) -> Callable[[Repo], list[str]]:
    def build(repo: Repo) -> list[str]:
        lfs_repo(repo)
        base = repo.head()
        repo.write(f"data/lfs/{name}", body)
        repo.commit("an LFS file joins the range")
        return ["scan", "--diff", f"{base}..HEAD"]

    return build


def lfs_pointer_clone(args: list[str], fetch: bool = False) -> Callable[[Repo], list[str]]:
    """A clone of the repository whose working tree holds the pointers (as ``actions/checkout``
    without ``lfs: true`` leaves it); with ``fetch``, the objects are fetched but not checked out."""

    def build(repo: Repo) -> list[str]:
        lfs_repo(repo)
        base = repo.head()
        repo.write("data/lfs/leak.txt", leak(0) + "\n")
        repo.commit("an LFS leak")
        clone = repo.root.parent / "clone"
        env = {**repo.env, "GIT_LFS_SKIP_SMUDGE": "1"}
        subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], env=env, check=True)
        if fetch:
            subprocess.run(["git", "lfs", "fetch"], cwd=clone, env=env, check=True, capture_output=True)
        assert (clone / "data/lfs/leak.txt").read_text().startswith("version https://git-lfs")
        os.chdir(clone)
        return [a.replace("BASE", base) for a in args]

    return build


def git_mv(src: str, dst: str, *, commit: bool, change: bool = False) -> Callable[[Repo], list[str]]:
    def build(repo: Repo) -> list[str]:
        base = repo.head()
        repo.git("mv", src, dst)
        if change:
            repo.write(dst, (repo.root / dst).read_text() + jsonl(["one more clean record"]))
            repo.git("add", dst)
        if not commit:
            return ["scan", "--staged"]
        repo.commit("move")
        return ["scan", "--diff", f"{base}..HEAD"]

    return build


def committed_then_moved(repo: Repo) -> list[str]:
    repo.write("data/old.jsonl", jsonl([leak(1), FILLER]))
    repo.commit("a leak committed before the hook existed")
    return git_mv("data/old.jsonl", "data/new.jsonl", commit=False, change=True)(repo)


def copy_golden(repo: Repo) -> list[str]:
    shutil.copy(repo.root / "golden/bench.jsonl", repo.root / "data/copy.jsonl")
    repo.git("add", "-A")
    return ["scan", "--staged"]


def data_file(name: str, data: bytes, *extra: str) -> Callable[[Repo], list[str]]:
    def build(repo: Repo) -> list[str]:
        (repo.root / "data" / name).write_bytes(data)
        return ["scan", f"data/{name}", *extra]

    return build


def staged_file(name: str, data: bytes) -> Callable[[Repo], list[str]]:
    def build(repo: Repo) -> list[str]:
        (repo.root / "data" / name).write_bytes(data)
        repo.git("add", "-A")
        return ["scan", "--staged"]

    return build


def linked_folder(repo: Repo) -> list[str]:
    outside = repo.root.parent / "elsewhere"
    outside.mkdir()
    (outside / "leak.jsonl").write_text(jsonl([leak(2)]), encoding="utf-8")
    (repo.root / "data" / "linked").symlink_to(outside, target_is_directory=True)
    return ["scan", "data/"]


def loop_and_link(repo: Repo) -> list[str]:
    (repo.root / "data" / "sub").mkdir()
    (repo.root / "data" / "sub" / "loop").symlink_to("..", target_is_directory=True)
    (repo.root / "data" / "sub" / "leak.jsonl").write_text(jsonl([leak(3)]), encoding="utf-8")
    return ["scan", "data/"]


LEAK_TEXT = leak(0) + "\n"
LEAK_JSONL = jsonl([FILLER, leak(0)])
LEAK_CSV = f'text\n"{leak(0)}"\n'
LEAK_JSON = json.dumps([{"text": leak(0)}])
U16 = codecs.BOM_UTF16_LE

CASES: dict[str, Case] = {
    # Git LFS: the index and commits hold pointers; a checkout without the objects too.
    "lfs-txt-staged": Case(lfs_staged("leak.txt", LEAK_TEXT), 1, "data/lfs/leak.txt:1", 0),
    "lfs-jsonl-staged": Case(lfs_staged("leak.jsonl", LEAK_JSONL), 1, "data/lfs/leak.jsonl:2", 2),
    "lfs-txt-diff": Case(lfs_diff("leak.txt", LEAK_TEXT), 1, "data/lfs/leak.txt:1", 0),
    "lfs-jsonl-diff": Case(lfs_diff("leak.jsonl", LEAK_JSONL), 1, "data/lfs/leak.jsonl:2", 2),
    "lfs-pointer-no-object": Case(lfs_pointer_clone(["scan", "data/"]), 2, "git lfs pull", 0),
    "lfs-pointer-no-object-diff": Case(lfs_pointer_clone(["scan", "--diff", "BASE"]), 2, "lfs: true", 0),
    "lfs-pointer-object-fetched": Case(
        lfs_pointer_clone(["scan", "data/"], True), 1, "data/lfs/leak.txt:1", 0
    ),
    # Renames and copies add all of a file's content at its new path.
    "rename-golden-staged": Case(
        git_mv("golden/bench.jsonl", "data/extra.jsonl", commit=False), 1, "data/extra.jsonl:1", 0
    ),
    "rename-golden-diff": Case(
        git_mv("golden/bench.jsonl", "data/extra.jsonl", commit=True), 1, "data/extra.jsonl:1", 0
    ),
    "rename-with-change": Case(committed_then_moved, 1, "data/new.jsonl:1", 0),
    "copy-golden-staged": Case(copy_golden, 1, "data/copy.jsonl:1", 1),
    # Encodings: UTF-16/32 by BOM, by --encoding, sniffed; binary text is an error, not a skip.
    "utf16le-bom-txt": Case(data_file("a.txt", U16 + LEAK_TEXT.encode("utf-16-le")), 1, "data/a.txt:1", 0),
    "utf16be-bom-txt": Case(
        data_file("a.txt", codecs.BOM_UTF16_BE + LEAK_TEXT.encode("utf-16-be")), 1, "a.txt:1", 0
    ),
    "utf32-bom-txt": Case(data_file("a.txt", LEAK_TEXT.encode("utf-32")), 1, "data/a.txt:1", 0),
    "utf16-bom-jsonl": Case(data_file("a.jsonl", LEAK_JSONL.encode("utf-16")), 1, "data/a.jsonl:2", 2),
    "utf16-bom-jsonl-gz": Case(
        data_file("a.jsonl.gz", gzip.compress(LEAK_JSONL.encode("utf-16"))), 1, "a.jsonl.gz:2", 2
    ),
    "utf16-bom-csv": Case(data_file("a.csv", LEAK_CSV.encode("utf-16")), 1, "data/a.csv:2", 2),
    "utf16-bom-json": Case(
        data_file("a.json", LEAK_JSON.encode("utf-16")), 1, "data/a.json (record 0, field text)", 2
    ),
    "utf16-bom-staged": Case(staged_file("a.txt", LEAK_TEXT.encode("utf-16")), 1, "data/a.txt:1", 0),
    "utf16-option-txt": Case(
        data_file("a.txt", LEAK_TEXT.encode("utf-16-le"), "--encoding", "utf-16-le"), 1, "data/a.txt:1", 2
    ),
    "utf16-option-jsonl": Case(
        data_file("a.jsonl", LEAK_JSONL.encode("utf-16-be"), "--encoding", "utf-16"), 1, "data/a.jsonl:2", 2
    ),
    "utf16-sniffed-txt": Case(data_file("a.txt", LEAK_TEXT.encode("utf-16-le")), 1, "data/a.txt:1", 0),
    "utf16-jobs-2": Case(
        data_file("a.txt", U16 + LEAK_TEXT.encode("utf-16-le"), "--jobs", "2"), 1, "a.txt:1", 0
    ),
    "binary-txt": Case(data_file("b.txt", bytes(range(256)) * 4), 2, "--encoding", 0),
    "stray-nul-txt": Case(data_file("n.txt", LEAK_TEXT.encode() + b"\x00\n"), 2, "n.txt: binary data", 0),
    # Containers: zero bytes is a failed write or download, not an empty file.
    "empty-gz": Case(data_file("e.jsonl.gz", b""), 2, "empty gzip file: not a valid gzip stream", 0),
    "empty-zst": Case(data_file("e.jsonl.zst", b""), 2, "empty zstd file: not a valid zstd stream", 0),
    "empty-parquet": Case(data_file("e.parquet", b""), 2, "empty Parquet file", 0),
    # Symlinked folders are followed; a loop is a notice naming the link.
    "symlinked-folder": Case(linked_folder, 1, "data/linked/leak.jsonl:1", 0),
    "symlink-loop": Case(loop_and_link, 1, "data/sub/loop: a symlink loop", 1),
}
LFS_CASES = {name for name in CASES if name.startswith("lfs-")}


@pytest.mark.parametrize("name", [pytest.param(n, marks=NEEDS_LFS) if n in LFS_CASES else n for n in CASES])
def test_hostile_input(repo: Repo, name: str) -> None:
    case = CASES[name]
    args = case.build(repo)
    result = repo.cg(*args)
    assert result.code == case.code, result.output
    assert case.says in result.output, result.output
    assert "Traceback" not in result.output
    if case.code == 2:
        assert "hint:" in result.err  # every refusal says what to do


@pytest.mark.parametrize("name", ["a.jsonl", "a.txt"])
def test_utf16_scans_find_what_utf8_scans_find(repo: Repo, name: str) -> None:
    """The transcoded file goes through the same fast path and numbering as its UTF-8 twin."""
    texts = [FILLER, leak(0), "clean", "", leak(1) + " and ünïcödé", leak(2)]
    body = jsonl(texts) if name.endswith(".jsonl") else "".join(t + "\n" for t in texts)
    (repo.root / "data" / f"utf8-{name}").write_text(body, encoding="utf-8")
    (repo.root / "data" / f"utf16-{name}").write_bytes(body.encode("utf-16"))
    found = {}
    for variant in ("utf8", "utf16"):
        out = repo.root.parent / f"{variant}.json"
        result = repo.cg("scan", f"data/{variant}-{name}", "--review-json", out)
        assert result.code == 1, result.output
        findings = json.loads(out.read_text(encoding="utf-8"))["findings"]
        found[variant] = sorted(
            (f["rule"], f["item_id"], p["line"], p["record"], p["longest_run"])
            for f in findings
            for p in f["pairs"]
        )
    assert found["utf8"] == found["utf16"] and len(found["utf8"]) >= 3
