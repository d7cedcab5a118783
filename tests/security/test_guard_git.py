"""Hostile rows, round 2, that need real git: submodules, the guard weakened in the change it
checks, and the pre-commit framework (real ``git``, a real submodule, the real ``pre-commit``).

Before these fixes (main at a336b46) every scan below exited 0: a submodule added, moved or left
unchecked-out in ``--staged``/``--diff`` was not looked into, a range that removed a set, raised
N, disabled a rule, raised a threshold, pointed two sets at one file or allowlisted findings in
bulk scanned clean, and a passing hook's warnings never reached the committer. Now: the
submodule's new files are scanned (exit 1 on a leak), or exit 2 names it and the command; each
weakening is a failing finding (exit 1) listing what changed, accepted only by its digest.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.security.hostile import CLEAN, LONG, cli, copy_project, make_project, put

PROJECT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
LEAK = json.dumps({"text": f"{CLEAN} {LONG}"}) + "\n"
REVERSED = json.dumps({"text": " ".join(reversed(LONG.split()))}) + "\n"
"""The long item's words in reverse order: no run is shared, only the reworded rule warns."""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("guard-git") / "project")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """git isolated from the machine's config (a fixed identity, branch main, file submodules)."""
    config = tmp_path / "gitconfig"
    config.write_text(
        "[user]\n\tname = CI Test\n\temail = ci@example.invalid\n[init]\n\tdefaultBranch = main\n"
        '[commit]\n\tgpgsign = false\n[protocol "file"]\n\tallow = always\n',
        encoding="utf-8",
    )
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITHUB_", "CONTAM_GUARD"))}
    return {**keep, "GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1"}


def git(root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def cg(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = cli(root, *args, env=env)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


@pytest.fixture
def repo(template: Path, tmp_path: Path, env: dict[str, str]) -> Path:
    """The registered project, committed."""
    root = copy_project(template, tmp_path / "repo")
    git(root, env, "init", "-q")
    git(root, env, "add", "-A")
    git(root, env, "commit", "-q", "-m", "set up contam-guard")
    return root


@pytest.fixture
def bench(tmp_path: Path, env: dict[str, str]) -> Path:
    """A repository to use as a submodule: one file holding a golden item."""
    root = tmp_path / "bench"
    put(root, "leak.jsonl", LEAK)
    git(root, env, "init", "-q")
    git(root, env, "add", "-A")
    git(root, env, "commit", "-q", "-m", "a benchmark copy")
    return root


# --- submodules ---------------------------------------------------------------------------------


def test_a_submodule_added_is_scanned_staged_and_in_a_range(
    repo: Path, bench: Path, env: dict[str, str]
) -> None:
    """``git submodule add`` of a repository holding a test item: was exit 0 ("no data file
    changed"), now exit 1 naming the file inside the submodule."""
    git(repo, env, "submodule", "add", "-q", str(bench), "vendor/bench")
    staged = cg(repo, env, "scan", "--staged")
    assert staged.returncode == 1, staged.stdout + staged.stderr
    assert "vendor/bench/leak.jsonl" in staged.stdout
    git(repo, env, "commit", "-q", "-m", "add a submodule")
    ranged = cg(repo, env, "scan", "--diff", "HEAD~1..HEAD")
    assert ranged.returncode == 1 and "vendor/bench/leak.jsonl" in ranged.stdout


def test_a_submodule_not_checked_out_is_exit_2_with_the_fix(
    repo: Path, bench: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """A clone without ``--recurse-submodules`` (CI's default): was exit 0, now exit 2 naming the
    submodule and how to check it out; once checked out, the scan finds the leak."""
    git(repo, env, "submodule", "add", "-q", str(bench), "vendor/bench")
    git(repo, env, "commit", "-q", "-m", "add a submodule")
    clone = tmp_path / "clone"
    git(tmp_path, env, "clone", "-q", str(repo), str(clone))
    done = cg(clone, env, "scan", "--diff", "HEAD~1..HEAD")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "vendor/bench" in done.stderr and "git submodule update --init" in done.stderr
    git(clone, env, "submodule", "update", "-q", "--init")
    assert cg(clone, env, "scan", "--diff", "HEAD~1..HEAD").returncode == 1


def test_a_submodule_moved_to_a_new_commit_adds_its_new_lines(
    repo: Path, bench: Path, env: dict[str, str]
) -> None:
    """An updated submodule adds what its own history adds between the two commits: only the new
    lines of a changed JSONL file (as for any file), every line of a new one."""
    git(repo, env, "submodule", "add", "-q", str(bench), "vendor/bench")
    git(repo, env, "commit", "-q", "-m", "add a submodule")
    inner = repo / "vendor" / "bench"
    with (inner / "leak.jsonl").open("a") as handle:
        handle.write(json.dumps({"text": CLEAN}) + "\n")
    put(inner, "more.jsonl", json.dumps({"text": "a clean note on sourdough starters"}) + "\n")
    git(inner, env, "add", "-A")
    git(inner, env, "commit", "-q", "-m", "clean additions")
    git(repo, env, "add", "vendor/bench")
    clean = cg(repo, env, "scan", "--staged")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Scanned 2 records" in clean.stdout  # the two new lines, not the old leak again
    put(inner, "more.jsonl", json.dumps({"text": "a clean note"}) + "\n" + LEAK)
    git(inner, env, "commit", "-q", "-am", "a leak")
    git(repo, env, "add", "vendor/bench")
    assert cg(repo, env, "scan", "--staged").returncode == 1


def test_a_submodule_moved_is_scanned_whole(repo: Path, bench: Path, env: dict[str, str]) -> None:
    """``git mv`` of a submodule adds all its files at the new path (as for a moved file)."""
    git(repo, env, "submodule", "add", "-q", str(bench), "vendor/bench")
    git(repo, env, "commit", "-q", "-m", "add a submodule")
    (repo / "third_party").mkdir()
    git(repo, env, "mv", "vendor/bench", "third_party/bench")
    done = cg(repo, env, "scan", "--staged")
    assert done.returncode == 1 and "third_party/bench/leak.jsonl" in done.stdout


# --- the guard weakened in the change it checks -------------------------------------------------

CONFIG = ".contam-guard/contam-guard.yaml"


def edit_config(old: str, new: str) -> Any:
    def change(root: Path, env: dict[str, str]) -> None:
        path = root / CONFIG
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))

    return change


def command(*args: str) -> Any:
    def change(root: Path, env: dict[str, str]) -> None:
        assert cg(root, env, *args).returncode == 0

    return change


def allowlisted(count: int, **extra: str) -> Any:
    """A change that adds ``count`` false-positive entries (``extra``: more keys of each)."""

    def change(root: Path, env: dict[str, str]) -> None:
        entry = {"set": "g", "view": "question", "item": "g-long", "rule": "gpt3", "reason": "ok"}
        entries = [entry | {"span": f"{n:032x}"} | extra for n in range(count)]
        put(root, ".contam-guard/allowlist.yaml", yaml.safe_dump({"version": 1, "entries": entries}))

    return change


WEAKENINGS = [
    ("a set removed", command("remove", "g"), "set 'g' removed"),
    ("a rule disabled", edit_config("gpt3: {enabled: true", "gpt3: {enabled: false"), "rule gpt3 disabled"),
    (
        "a failing rule made to warn",
        edit_config("action: fail, n: auto", "action: warn, n: auto"),
        "no longer fails",
    ),
    (
        "the config's N raised",
        edit_config("action: fail, n: auto", "action: fail, n: 40"),
        "n changed from auto to 40",
    ),
    (
        "a threshold raised",
        edit_config("threshold: 0.70", "threshold: 0.99"),
        "threshold raised from 0.7 to 0.99",
    ),
    (
        "a set's own N raised",
        command("register", "g", "golden.jsonl", "--field", "question", "--id-field", "id", "--n", "40"),
        "GPT-3 N raised from 11 to 40",  # the set's auto N: its 5th-percentile length
    ),
    (
        "a set registered for fewer rules",
        command(
            "register", "g", "golden.jsonl", "--field", "question", "--id-field", "id", "--rules", "gpt3"
        ),
        "no longer registered for rule(s) gpt4, llama2, numbers, palm, reworded",
    ),
    (
        "two sets pointed at the same files",
        command("register", "g2", "golden.jsonl", "--field", "question", "--id-field", "id"),
        "sets 'g', 'g2' point at the same golden file golden.jsonl",
    ),
    ("allowlist entries added in bulk", allowlisted(11), "11 allowlist entries added or widened"),
    # A baseline allows findings nobody reviewed: however few, the change is shown.
    (
        "two baseline entries",
        allowlisted(2, baseline="2026-01-15", reason="baseline: in the data when the guard was adopted"),
        "2 allowlist entries added or widened in one change (2 of them baseline entries, not reviewed)",
    ),
    ("fewer fields read", edit_config("fields: []", "fields: [title]"), "scan reads only the fields title"),
]


@pytest.mark.parametrize(("case", "change", "says"), WEAKENINGS, ids=[w[0] for w in WEAKENINGS])
def test_a_change_that_weakens_the_guard_fails(
    repo: Path, env: dict[str, str], case: str, change: Any, says: str
) -> None:
    """Was exit 0 (nothing in the range is data). Now exit 1: the change is listed, with the
    digest that accepts exactly it after review; accepted, the scan passes."""
    base = git(repo, env, "rev-parse", "HEAD").strip()
    change(repo, env)
    git(repo, env, "add", "-A")
    staged = cg(repo, env, "scan", "--staged")
    assert staged.returncode == 1 and says in staged.stdout, staged.stdout + staged.stderr
    git(repo, env, "commit", "-q", "-m", case)
    done = cg(repo, env, "scan", "--diff", f"{base}..HEAD", "--review-json", "../review.json")
    assert done.returncode == 1 and says in done.stdout, done.stdout + done.stderr
    digest = re.search(r"--accept-guard-change ([0-9a-f]{16})", done.stdout)
    assert digest is not None, done.stdout
    review = json.loads((repo.parent / "review.json").read_text())
    assert review["summary"]["exit_code"] == 1 and review["guard_changes"]["digest"] == digest.group(1)
    accepted = cg(repo, env, "scan", "--diff", f"{base}..HEAD", "--accept-guard-change", digest.group(1))
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "ACCEPTED" in accepted.stdout


def test_an_accepted_digest_covers_only_the_changes_it_was_given_for(repo: Path, env: dict[str, str]) -> None:
    base = git(repo, env, "rev-parse", "HEAD").strip()
    edit_config("threshold: 0.70", "threshold: 0.90")(repo, env)
    git(repo, env, "commit", "-q", "-am", "palm looser")
    first = cg(repo, env, "scan", "--diff", f"{base}..HEAD")
    digest = re.findall(r"--accept-guard-change ([0-9a-f]{16})", first.stdout)[0]
    edit_config("gpt3: {enabled: true", "gpt3: {enabled: false")(repo, env)
    git(repo, env, "commit", "-q", "-am", "and gpt3 off")
    again = cg(repo, env, "scan", "--diff", f"{base}..HEAD", "--accept-guard-change", digest)
    assert again.returncode == 1 and "rule gpt3 disabled" in again.stdout


def test_a_change_that_only_tightens_the_guard_passes(repo: Path, env: dict[str, str]) -> None:
    """Rules made stricter, a set added, data unchanged: exit 0 and no guard lines (the positive
    control of the table above)."""
    base = git(repo, env, "rev-parse", "HEAD").strip()
    edit_config("threshold: 0.70", "threshold: 0.50")(repo, env)
    edit_config("palm: {enabled: true, action: warn", "palm: {enabled: true, action: fail")(repo, env)
    put(repo, "other.jsonl", json.dumps({"id": "o1", "question": "an unrelated question about kites"}) + "\n")
    assert (
        cg(
            repo, env, "register", "other", "other.jsonl", "--field", "question", "--id-field", "id"
        ).returncode
        == 0
    )
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-q", "-m", "stricter")
    done = cg(repo, env, "scan", "--diff", f"{base}..HEAD")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "GUARD" not in done.stdout and "weaken" not in done.stdout


def run_action(repo: Path, env: dict[str, str], tmp: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    """The Action's scan step (hooks/action-entry.sh) on a pull request."""
    full = {
        **env,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "GITHUB_OUTPUT": str(tmp / "output"),
        "RUNNER_TEMP": str(tmp),
        **inputs,
    }
    return subprocess.run(
        ["bash", str(PROJECT / "hooks" / "action-entry.sh")],
        cwd=repo,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_action_fails_a_pull_request_that_weakens_the_guard(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """Was exit 0. Now the Action fails, annotates the changed file and writes the change into the
    job summary; the reviewed digest, given as the accept-guard-change input, lets it pass."""
    base = git(repo, env, "rev-parse", "HEAD").strip()
    assert cg(repo, env, "remove", "g").returncode == 0
    git(repo, env, "commit", "-q", "-am", "drop the benchmark")
    done = run_action(repo, env, tmp_path, CG_PR_BASE_SHA=base)
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any("file=.contam-guard/manifest.json" in line and "set 'g' removed" in line for line in errors)
    summary = (tmp_path / "summary.md").read_text()
    assert "The change weakens the guard" in summary and "set 'g' removed" in summary
    digest = re.findall(r"--accept-guard-change ([0-9a-f]{16})", done.stdout)[0]
    accepted = run_action(repo, env, tmp_path, CG_PR_BASE_SHA=base, CG_ACCEPT_GUARD_CHANGE=f"\n{digest}\n")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


# --- the pre-commit framework -------------------------------------------------------------------


def pre_commit(repo: Path, env: dict[str, str], tmp: Path, hooks: list[str], **changes: Any) -> str:
    """Install our hooks (as .pre-commit-hooks.yaml defines them, with ``changes`` applied, run with
    this checkout's contam-guard) and run them on what is staged; their output."""
    defined = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    local = []
    for hook in defined:
        if hook["id"] in hooks:
            entry = hook["entry"].replace("contam-guard", str(VENV_BIN / "contam-guard"), 1)
            local.append({**hook, "language": "system", "entry": entry, **changes})
    put(repo, ".pre-commit-config.yaml", yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]}))
    git(repo, env, "add", ".pre-commit-config.yaml")
    full = {**env, "PRE_COMMIT_HOME": str(tmp / "pre-commit-home"), "PRE_COMMIT_COLOR": "never"}
    done = subprocess.run(
        [str(VENV_BIN / "pre-commit"), "run"],
        cwd=repo,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def test_a_passing_hook_shows_its_warnings(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """A reworded copy only warns. Without ``verbose: true`` (before) pre-commit printed "Passed"
    and hid the warning; with it (now) the committer reads it. Both runs use the real pre-commit."""
    put(repo, "data/chat.jsonl", REVERSED)
    git(repo, env, "add", "data/chat.jsonl")
    shown = pre_commit(repo, env, tmp_path, ["contam-guard-scan"])
    assert shown.startswith("exit 0") and "Passed" in shown, shown
    assert "WARN" in shown and "reworded" in shown, shown
    hidden = pre_commit(repo, env, tmp_path, ["contam-guard-scan"], verbose=False)
    assert hidden.startswith("exit 0") and "Passed" in hidden and "WARN" not in hidden, hidden


def test_the_submodule_hook_refuses_a_submodule_holding_a_test_item(
    repo: Path, bench: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """pre-commit passes a data hook files matching its pattern, which a submodule never does:
    the hook for staged submodules gets their folders and scans what each adds (was: skipped)."""
    git(repo, env, "submodule", "add", "-q", str(bench), "vendor/bench")
    out = pre_commit(repo, env, tmp_path, ["contam-guard-scan", "contam-guard-scan-submodules"])
    assert out.startswith("exit 1"), out
    assert "vendor/bench/leak.jsonl" in out
