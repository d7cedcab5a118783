"""Git LFS with the real git-lfs in real repositories: pointers are never read as data.

The hostile-input matrix (``test_ci_hostile_inputs.py``) has a row per way a pointer reached a
reader; these tests check the details: line numbers of an LFS file's records, a changed LFS file
scanned whole, Parquet, the error without git-lfs, a malformed pointer, and the pieces in ``lfs``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contam_guard.errors import InputError
from contam_guard.io import lfs

from .conftest import FILLER, Repo, jsonl, leak
from .test_ci_git import pairs, review

pytestmark = pytest.mark.skipif(
    shutil.which("git-lfs") is None, reason="git-lfs is not installed (apt-get install git-lfs)"
)


def track(repo: Repo) -> None:
    repo.git("lfs", "install", "--local")
    repo.git("lfs", "track", "data/lfs/**")
    repo.commit("track data/lfs with Git LFS", ".gitattributes")


def pointer_clone(repo: Repo, *, fetch: bool) -> Repo:
    """A clone whose working tree holds pointers; with ``fetch``, the objects are in it too."""
    clone = repo.root.parent / "clone"
    env = {**repo.env, "GIT_LFS_SKIP_SMUDGE": "1"}
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], env=env, check=True)
    if fetch:
        subprocess.run(["git", "lfs", "fetch"], cwd=clone, env=env, check=True, capture_output=True)
    os.chdir(clone)
    return Repo(clone, repo.env, repo.capsys)


def test_a_changed_lfs_file_is_scanned_whole_with_its_real_line_numbers(repo: Repo) -> None:
    track(repo)
    repo.write("data/lfs/big.jsonl", jsonl([leak(0), FILLER]))
    base = repo.commit("an LFS file with a leak that predates the range")
    repo.write("data/lfs/big.jsonl", jsonl([leak(0), FILLER, "clean", leak(1)]))
    head = repo.commit("append to it")
    # git's lines are the pointer's, so the added lines cannot be known: the file is read whole.
    assert sorted(pairs(review(repo, "--diff", f"{base}..{head}"))) == [
        ("q-01", "data/lfs/big.jsonl", 1, 0),
        ("q-02", "data/lfs/big.jsonl", 4, 3),
    ]


def test_lfs_parquet_staged_and_from_a_clone_with_the_objects(repo: Repo) -> None:
    track(repo)
    (repo.root / "data/lfs").mkdir(parents=True)
    pq.write_table(pa.table({"text": [FILLER, leak(2)]}), repo.root / "data/lfs/rows.parquet")
    repo.git("add", "-A")
    staged = repo.cg("scan", "--staged")
    assert staged.code == 1 and "data/lfs/rows.parquet (record 1, field text)" in staged.out, staged.output
    repo.commit("parquet in LFS")
    clone = pointer_clone(repo, fetch=True)
    assert (clone.root / "data/lfs/rows.parquet").read_bytes().startswith(b"version https://git-lfs")
    result = clone.cg("scan", "data/")
    assert result.code == 1 and "data/lfs/rows.parquet (record 1, field text)" in result.out, result.output


def test_a_smudged_checkout_is_read_as_usual(repo: Repo) -> None:
    track(repo)
    repo.write("data/lfs/leak.txt", f"{FILLER}\n{leak(3)}\n")
    repo.commit("an LFS text file")
    assert (repo.root / "data/lfs/leak.txt").read_text().startswith(FILLER)  # git-lfs smudged it
    result = repo.cg("scan", "data/")
    assert result.code == 1 and "data/lfs/leak.txt:2" in result.out, result.output


def test_without_git_lfs_the_error_says_to_install_it(repo: Repo, tmp_path: Path) -> None:
    track(repo)
    repo.write("data/lfs/leak.txt", leak(0) + "\n")
    repo.commit("an LFS leak")
    clone = pointer_clone(repo, fetch=False)
    bin_dir = tmp_path / "bin-without-lfs"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    result = clone.cg_proc("scan", "data/lfs/leak.txt", env={"PATH": str(bin_dir)})
    assert result.code == 2, result.output
    assert "data/lfs/leak.txt: is a Git LFS pointer" in result.err
    assert "git-lfs is not installed" in result.err and "lfs: true" in result.err
    with_lfs = clone.cg_proc("scan", "data/lfs/leak.txt")  # the control: only PATH differs
    assert "this clone does not have the object" in with_lfs.err


def test_a_diff_scan_skips_a_missing_lfs_object_only_when_asked(repo: Repo) -> None:
    """A clone without the LFS objects: the range's LFS file cannot be had. The scan stops
    (exit 2, naming it) unless --skip-unreadable, which notes it and scans the rest."""
    track(repo)
    base = repo.head()
    repo.write("data/lfs/leak.txt", leak(0) + "\n")
    repo.write("data/plain.txt", f"{FILLER}\n{leak(1)}\n")
    head = repo.commit("an LFS leak and a plain one")
    clone = pointer_clone(repo, fetch=False)
    stopped = clone.cg_proc("scan", "--diff", f"{base}..{head}")
    assert stopped.code == 2, stopped.output
    assert "data/lfs/leak.txt" in stopped.err and "this clone does not have the object" in stopped.err
    skipped = clone.cg_proc("scan", "--diff", f"{base}..{head}", "--skip-unreadable")
    assert skipped.code == 1, skipped.output  # the plain leak is still found
    assert "data/plain.txt:2" in skipped.out
    assert "unreadable, not scanned (--skip-unreadable): data/lfs/leak.txt" in skipped.output


def test_scrub_and_register_read_the_object_too(repo: Repo) -> None:
    track(repo)
    repo.write("data/lfs/leak.txt", f"{leak(1)}\n")
    repo.commit("an LFS leak")
    clone = pointer_clone(repo, fetch=True)
    out = clone.root / "clean.txt"
    result = clone.cg("scrub", "data/lfs/leak.txt", "-o", out, "--mode", "drop")
    assert result.code == 0, result.output
    assert out.read_text() == ""  # the leaked record is dropped: the object was read, not the pointer
    registered = clone.cg("register", "more", "data/lfs/leak.txt")
    assert registered.code == 0, registered.output
    assert "1 item" in registered.output


def test_a_malformed_pointer_is_an_error(repo: Repo) -> None:
    repo.write("data/bad.txt", "version https://git-lfs.github.com/spec/v1\noid md5:abc\nsize many\n")
    result = repo.cg("scan", "data/bad.txt")
    assert result.code == 2 and "starts like a Git LFS pointer" in result.err, result.output


def test_pointer_parsing() -> None:
    oid = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393"
    text = f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize 12345\n".encode()
    assert lfs.parse_pointer(text, "f") == lfs.Pointer(oid, 12345)
    assert lfs.parse_pointer(b"version 1\noid sha256:" + oid.encode(), "f") is None  # not the spec's line
    assert lfs.parse_pointer(text + b"x" * 1024, "f") is None  # too long for a pointer
    with pytest.raises(InputError):
        lfs.parse_pointer(text.replace(b"size 12345", b"size -1"), "f")


def test_the_index_holds_pointers_so_a_staged_scan_needs_this(repo: Repo) -> None:
    """The premise of every LFS test: without the fix, git hands contam-guard the pointer."""
    track(repo)
    repo.write("data/lfs/leak.txt", leak(0) + "\n")
    repo.git("add", "-A")
    blob = repo.git("rev-parse", ":data/lfs/leak.txt").strip()
    assert lfs.blob_is_pointer(repo.root, blob)
    assert not lfs.blob_is_pointer(repo.root, repo.git("rev-parse", "HEAD:data/train.jsonl").strip())
    assert repo.cg("scan", "--staged").code == 1
