"""Diff scanning on real git repositories: only what the index or a commit range adds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import FILLER, Repo, jsonl, leak


def review(repo: Repo, *args: str) -> dict[str, object]:
    out = repo.root.parent / "review.json"
    result = repo.cg("scan", *args, "--review-json", out)
    assert result.code in (0, 1), result.output
    data: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return data


def pairs(data: dict[str, object]) -> list[tuple[str, str, int, int]]:
    """(item id, file, line, record) of every failing finding's first pair."""
    findings = data["findings"]
    assert isinstance(findings, list)
    return [
        (f["item_id"], f["pairs"][0]["source"], f["pairs"][0]["line"], f["pairs"][0]["record"])
        for f in findings
        if f["action"] == "fail"
    ]


def test_staged_scans_only_added_lines_with_their_real_numbers(repo: Repo) -> None:
    # An old leak is already committed on line 3; the new commit appends a leak on line 5.
    repo.write("data/train.jsonl", jsonl([FILLER, "clean", leak(0)]))
    repo.commit("an old leak, already reviewed elsewhere")
    assert repo.cg("scan", "data/train.jsonl").code == 1  # a whole-file scan sees the old leak

    repo.write("data/train.jsonl", jsonl([FILLER, "clean", leak(0), "clean again", leak(1)]))
    repo.git("add", "data/train.jsonl")
    result = repo.cg("scan", "--staged")
    assert result.code == 1, result.output
    data = review(repo, "--staged")
    assert pairs(data) == [("q-02", "data/train.jsonl", 5, 4)]  # not q-01 on line 3


def test_staged_reads_the_index_not_the_working_tree(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([FILLER, "clean", "harmless new line"]))
    repo.git("add", "data/train.jsonl")
    repo.write("data/train.jsonl", jsonl([FILLER, "clean", leak(2)]))  # unstaged: not committed
    result = repo.cg("scan", "--staged")
    assert result.code == 0, result.output
    assert "Scanned 2 records" in result.out  # lines 2 and 3 of the staged file


def test_code_is_text_and_an_empty_index_scans_nothing(repo: Repo) -> None:
    repo.write("src/app.py", "print('changed')\n")
    repo.git("add", "src/app.py")
    result = repo.cg("scan", "--staged")
    assert result.code == 0
    assert "src/app.py" in result.out and "Scanned 1 records" in result.out  # source code is read
    repo.commit("code")
    result = repo.cg("scan", "--staged")
    assert result.code == 0
    assert "nothing to scan" in result.err
    assert "Nothing was scanned." in result.out


def test_diff_range_like_a_pull_request(repo: Repo) -> None:
    base = repo.head()
    repo.write("data/train.jsonl", jsonl([FILLER, "a second clean record about sourdough starters", "x"]))
    repo.write("data/new.jsonl", jsonl(["intro", leak(3)]))  # a new file: scanned whole
    repo.commit("add data")
    repo.write("data/old.jsonl", jsonl([leak(1)]))
    repo.commit("another leak in a second commit")
    head = repo.head()

    data = review(repo, "--diff", f"{base}..{head}")
    assert pairs(data) == [("q-02", "data/old.jsonl", 1, 0), ("q-04", "data/new.jsonl", 2, 1)]
    assert pairs(review(repo, "--diff", base)) == pairs(data)  # BASE alone is BASE..HEAD
    # Limited to a path: only changes under it.
    assert pairs(review(repo, "--diff", base, "data/new.jsonl")) == [("q-04", "data/new.jsonl", 2, 1)]


def test_diff_ignores_deleted_files_and_scans_renamed_ones_whole(repo: Repo) -> None:
    repo.write("data/leaky.jsonl", jsonl([leak(0)]))
    repo.write("data/moved.jsonl", jsonl([leak(1), FILLER]))
    base = repo.commit("leaks that predate the range")
    repo.git("rm", "-q", "data/leaky.jsonl")
    repo.git("mv", "data/moved.jsonl", "data/renamed.jsonl")
    head = repo.commit("delete one, rename the other")
    # The deleted file is gone; the renamed one is content the range adds at a new path.
    assert pairs(review(repo, "--diff", f"{base}..{head}")) == [("q-02", "data/renamed.jsonl", 1, 0)]

    # A rename with a change: scanned whole as well, not only the added line.
    repo.write("data/renamed.jsonl", jsonl([leak(1), FILLER, leak(2)]))
    repo.git("mv", "data/renamed.jsonl", "data/again.jsonl")
    head2 = repo.commit("rename and add")
    found = pairs(review(repo, "--diff", f"{head}..{head2}"))
    assert sorted(found) == [("q-02", "data/again.jsonl", 1, 0), ("q-03", "data/again.jsonl", 3, 2)]


def test_plain_text_and_whole_formats(repo: Repo) -> None:
    base = repo.head()
    repo.write("notes/a.txt", f"{FILLER}\n{leak(0)}\n")
    repo.commit("text")
    repo.write("notes/a.txt", f"{FILLER}\n{leak(0)}\n\nclean line\n{leak(2)}\n")
    repo.write("notes/b.csv", f'text\n{FILLER}\n"{leak(3)}"\n')
    head = repo.commit("more text and a csv")
    found = pairs(review(repo, "--diff", f"{base}..{head}"))
    # A paragraph is a record (lines 1-2, then 4-5); a finding names the line its run starts on.
    assert ("q-03", "notes/a.txt", 5, 1) in found
    assert ("q-01", "notes/a.txt", 2, 0) in found  # added in the first commit of the range
    assert any(f[0] == "q-04" and f[1] == "notes/b.csv" for f in found)  # csv: scanned whole
    only_last = pairs(review(repo, "--diff", f"{repo.git('rev-parse', 'HEAD~1').strip()}..{head}"))
    assert [f[:3] for f in only_last if f[1] == "notes/a.txt"] == [("q-03", "notes/a.txt", 5)]
    # A line added to a paragraph: the paragraph is read whole (its run may start on an old line).
    repo.write("notes/a.txt", f"{FILLER}\n{leak(0)}\nmore words\n\nclean line\n{leak(2)}\n")
    third = repo.commit("a line in the first paragraph")
    touched = pairs(review(repo, "--diff", f"{head}..{third}"))
    assert [f[:3] for f in touched if f[1] == "notes/a.txt"] == [("q-01", "notes/a.txt", 2)]


def test_golden_files_and_the_guard_folder_are_never_scanned(repo: Repo) -> None:
    repo.write("golden/bench.jsonl", (repo.root / "golden/bench.jsonl").read_text() + "\n")
    repo.git("add", "-A")
    result = repo.cg("scan", "--staged", "golden/bench.jsonl", ".contam-guard/manifest.json")
    assert result.code == 0, result.output
    assert "a golden file of set 'bench'" in result.err


def test_base_equal_to_head_is_a_notice(repo: Repo) -> None:
    result = repo.cg("scan", "--diff", "HEAD..HEAD")
    assert result.code == 0, result.output
    assert "same commit" in result.err


def test_missing_base_and_not_a_repo_are_errors(repo: Repo, tmp_path: Path) -> None:
    result = repo.cg("scan", "--diff", "0123456789abcdef0123456789abcdef01234567")
    assert result.code == 2
    assert "BASE" in result.err and "not a commit" in result.err
    assert repo.cg("scan", "--diff", "--upload-pack=x").code == 2  # never passed to git as an option

    outside = tmp_path / "plain"
    outside.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "contam_guard", "scan", "--staged", "--manifest", repo.manifest],
        cwd=outside,
        env={**repo.env, "GIT_CEILING_DIRECTORIES": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "not inside a git work tree" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_shallow_clone_is_exit_2_with_the_fix(repo: Repo, tmp_path: Path) -> None:
    base = repo.head()
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0)]))
    repo.commit("a leak")
    clone = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)],
        env=repo.env,
        check=True,
        capture_output=True,
    )
    result = subprocess.run(
        [sys.executable, "-m", "contam_guard", "scan", "--diff", f"{base}..HEAD"],
        cwd=clone,
        env=repo.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "shallow" in result.stderr and "fetch-depth: 0" in result.stderr


def test_first_commit_of_a_repository(
    tmp_path: Path,
    repo_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    fresh = Repo(root, repo_env, capsys)
    fresh.git("init", "-q")
    monkeypatch.chdir(root)
    assert fresh.cg("init").code == 0
    fresh.write("golden/g.jsonl", json.dumps({"id": "a", "question": leak(0, "", "")}) + "\n")
    assert fresh.cg("register", "g", "golden/g.jsonl", "--field", "question", "--id-field", "id").code == 0
    fresh.write("data/d.jsonl", jsonl([leak(0)]))
    fresh.git("add", "-A")
    result = fresh.cg("scan", "--staged")  # no HEAD yet: everything staged is added
    assert result.code == 1, result.output
    assert "golden/g.jsonl: a golden file" in result.err
