"""The manifest in a real Git repository: re-registering one set changes only that set's
files and the index; ``init``'s ``.gitattributes`` marks the binary files ``-diff``; ``sets``
reports the bytes on disk per set and view, and says when a set stores no window hashes."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path

import pytest

from contam_guard.cli import main
from contam_guard.io.manifest import store
from contam_guard.io.manifest.names import stem_of

GUARD = ".contam-guard"


def run(*args: str) -> tuple[int, str]:
    """The CLI in this process; returns the exit code and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as info:
        main(list(args))
    code = info.value.code
    return (code if isinstance(code, int) else 0), out.getvalue() + err.getvalue()


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def write_set(path: Path, template: str, count: int) -> None:
    path.write_text("".join(json.dumps({"q": template.format(n=n)}) + "\n" for n in range(count)))


ALPHA = (
    "In the village of Hollowbrook a miller ground {n} sacks of barley before the river froze, then sold some"
)
BETA = (
    "A train leaves the station at {n} o'clock and travels at sixty miles an hour toward the coast; how far"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Git repository with two registered sets (beta without GPT-4's rule), all committed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    git(tmp_path, "init", "-q", ".")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    write_set(tmp_path / "alpha.jsonl", ALPHA, 6)
    write_set(tmp_path / "beta.jsonl", BETA, 5)
    assert run("init")[0] == 0
    assert run("register", "alpha", "alpha.jsonl", "--field", "q")[0] == 0
    assert run("register", "beta", "beta.jsonl", "--field", "q", "--rules", "gpt3,palm,llama2")[0] == 0
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "two sets")
    return tmp_path


def changed(root: Path) -> list[str]:
    lines = git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    return sorted(line[3:] for line in lines)


def files_of(root: Path, name: str) -> dict[str, bytes]:
    """A set's files by stem (a file's name also holds the digest of its bytes)."""
    return {stem_of(p.name): p.read_bytes() for p in sorted((root / GUARD / "sets" / name).iterdir())}


def names_of(root: Path, name: str) -> list[str]:
    return sorted(f"{GUARD}/sets/{name}/{p.name}" for p in (root / GUARD / "sets" / name).iterdir())


def test_reregistering_one_set_changes_only_its_files_and_the_index(repo: Path) -> None:
    beta_before = files_of(repo, "beta")
    alpha_before = files_of(repo, "alpha")
    alpha_names = names_of(repo, "alpha")
    write_set(repo / "alpha.jsonl", ALPHA + " at the fair", 7)
    code, printed = run("register", "alpha", "alpha.jsonl", "--field", "q")
    assert code == 0, printed
    changes = changed(repo)
    # ids, q's 5-grams and windows, and q's derived views (numbers, and reworded's
    # features with their window file)
    assert {"_ids.bin", "q.bin", "q.windows.bin"} < set(alpha_before) and len(alpha_before) == 6
    # every file of the set is new (new names; the old ones removed)
    assert changes == sorted(
        ["alpha.jsonl", f"{GUARD}/manifest.json", *alpha_names, *names_of(repo, "alpha")]
    )
    assert files_of(repo, "beta") == beta_before  # byte-identical
    assert all(files_of(repo, "alpha")[name] != alpha_before[name] for name in alpha_before)
    # The index is the one text file that changed: its diff names the set's new version.
    assert '"version": 2' in git(repo, "diff", f"{GUARD}/manifest.json")


def test_registering_the_same_content_again_writes_nothing(repo: Path) -> None:
    code, printed = run("register", "alpha", "alpha.jsonl", "--field", "q")
    assert code == 0, printed
    assert changed(repo) == []


def test_removing_a_set_leaves_the_other_set_untouched(repo: Path) -> None:
    assert run("remove", "alpha")[0] == 0
    changes = changed(repo)
    assert f"{GUARD}/manifest.json" in changes
    assert [c for c in changes if "/beta/" in c] == []
    assert run("verify")[0] == 0


def test_gitattributes_keeps_the_binary_files_out_of_text_diffs(repo: Path) -> None:
    bins = sorted(p.relative_to(repo).as_posix() for p in (repo / GUARD / "sets").rglob("*.bin"))
    # alpha: ids, 5-grams, windows and its derived views' 3 files; beta (registered
    # without gpt4, numbers and reworded): ids, 5-grams
    assert len(bins) == 8
    attrs = git(repo, "check-attr", "diff", "merge", "text", "--", *bins, f"{GUARD}/manifest.json")
    for path in bins:
        assert f"{path}: diff: unset" in attrs and f"{path}: merge: unset" in attrs
    assert f"{GUARD}/manifest.json: diff: unspecified" in attrs  # the index diffs as text
    write_set(repo / "alpha.jsonl", ALPHA + " in spring", 6)
    assert run("register", "alpha", "alpha.jsonl", "--field", "q")[0] == 0
    diff = git(repo, "diff", "--", f"{GUARD}/sets")
    assert "Binary files" in diff and "@@" not in diff


def test_sets_reports_bytes_per_set_and_view_and_sets_without_windows(repo: Path) -> None:
    code, printed = run("sets")
    assert code == 0, printed
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
        for line in printed.splitlines()
        if line.startswith("│")
    }
    sizes = {
        name: {stem_of(p.name): p.stat().st_size for p in (repo / GUARD / "sets" / name).iterdir()}
        for name in ("alpha", "beta")
    }
    # columns: set, version, items, set bytes, view, view bytes, gpt3, whole, palm, llama2, gpt4, ...
    alpha, beta = rows["alpha"], rows["beta"]
    assert alpha[3] == f"{sum(sizes['alpha'].values()):,}"
    assert alpha[5] == f"{sizes['alpha']['q.bin'] + sizes['alpha']['q.windows.bin']:,}"
    assert beta[3] == f"{sum(sizes['beta'].values()):,}"
    assert beta[5] == f"{sizes['beta']['q.bin']:,}"
    assert "q.windows.bin" not in sizes["beta"]
    assert alpha[10] == "0" and beta[10] == "not stored"
    assert "beta: registered for gpt3,llama2,palm: no window hashes stored" in printed
    total = sum(sum(s.values()) for s in sizes.values()) + (repo / GUARD / "manifest.json").stat().st_size
    assert f"{total:,} bytes in all" in printed


def test_changing_only_a_sets_n_rewrites_only_the_index_and_its_record(repo: Path) -> None:
    """``register --n`` is not content: same version, same view files; a new index, and a new
    ids file (its header holds the set's record, N too)."""
    ids_before = [name for name in names_of(repo, "alpha") if "/_ids." in name]
    code, printed = run("register", "alpha", "alpha.jsonl", "--field", "q", "--n", "20")
    assert code == 0, printed
    ids_after = [name for name in names_of(repo, "alpha") if "/_ids." in name]
    assert changed(repo) == sorted([f"{GUARD}/manifest.json", *ids_before, *ids_after])
    index = json.loads((repo / GUARD / "manifest.json").read_text())
    assert index["sets"]["alpha"]["n"] == 20 and index["sets"]["alpha"]["version"] == 1
    assert "n" not in index["sets"]["beta"]  # a set without its own N: no key, as before N existed
    loaded = store.load(repo / GUARD / "manifest.json").sets
    assert (loaded["alpha"].n, loaded["beta"].n) == (20, None)
    assert run("verify")[0] == 0
    # registering again without --n keeps the set's N and writes nothing
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "n")
    assert run("register", "alpha", "alpha.jsonl", "--field", "q")[0] == 0
    assert changed(repo) == []


@pytest.mark.parametrize(
    ("rules", "derived", "files"),
    [
        ("gpt3,numbers", ["q~numbers-v1"], 3),  # ids, q, q~numbers (no window file: no gpt4)
        ("gpt3,reworded", ["q~words-v2"], 4),  # ids, q, q~words and its features' window file
        ("gpt3,gpt4", [], 3),  # ids, q, q's windows
    ],
)
def test_derived_views_follow_the_sets_rules(repo: Path, rules: str, derived: list[str], files: int) -> None:
    """A set gets a rewording rule's derived view only when registered for that rule."""
    write_set(repo / "gamma.jsonl", BETA, 5)
    code, printed = run("register", "gamma", "gamma.jsonl", "--field", "q", "--rules", rules)
    assert code == 0, printed
    views = store.load(repo / GUARD / "manifest.json").sets["gamma"].views
    assert sorted(views) == ["q", *derived]
    assert len(list((repo / GUARD / "sets" / "gamma").iterdir())) == files
    assert run("verify")[0] == 0
