"""The hooks with the real `pre-commit` package and real `git commit`s in throwaway repositories.

Most tests use the hooks exactly as `.pre-commit-hooks.yaml` defines them (files, exclude,
require_serial, pass_filenames, always_run), run as `language: system` with this checkout's
`contam-guard`, so they need no network. One test installs the hooks for real (`language:
python`, `pre-commit try-repo` on a committed snapshot of this working tree), which pip-installs
contam-guard from the package registry into pre-commit's own environment.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import FILLER, PROJECT, VENV_BIN, Repo, git_env, jsonl, leak, snapshot

PRE_COMMIT = VENV_BIN / "pre-commit"
HOOKS = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def run(
    args: list[str], cwd: Path, env: dict[str, str], timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit store for the session: its hook environments are built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def hook_env(repo: Repo, pre_commit_home: Path) -> dict[str, str]:
    return {
        **repo.env,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(pre_commit_home),
        "PRE_COMMIT_COLOR": "never",
    }


def local_config(hook_ids: list[str]) -> dict[str, Any]:
    """Our hooks as defined in .pre-commit-hooks.yaml, run with this checkout's contam-guard."""
    hooks = []
    for hook in HOOKS:
        if hook["id"] in hook_ids:
            local = dict(hook, language="system")
            local["entry"] = hook["entry"].replace("contam-guard", str(VENV_BIN / "contam-guard"), 1)
            hooks.append(local)
    return {"repos": [{"repo": "local", "hooks": hooks}]}


@pytest.fixture
def framework(repo: Repo, hook_env: dict[str, str]) -> Repo:
    """``repo`` with a .pre-commit-config.yaml using our scan and verify hooks, installed."""
    config = local_config(["contam-guard-scan", "contam-guard-verify"])
    repo.write(".pre-commit-config.yaml", yaml.safe_dump(config, sort_keys=False))
    repo.commit("add pre-commit config")
    installed = run([str(PRE_COMMIT), "install"], repo.root, hook_env)
    assert installed.returncode == 0, installed.stderr
    return repo


def commit(repo: Repo, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    repo.git("add", "-A")
    return run(["git", "commit", "-m", message], repo.root, env)


def test_hook_manifest_and_example_config_validate() -> None:
    proc = run(
        [str(PRE_COMMIT), "validate-manifest", str(PROJECT / ".pre-commit-hooks.yaml")],
        PROJECT,
        dict(os.environ),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    config = PROJECT / "examples" / "ci" / ".pre-commit-config.yaml"
    proc = run([str(PRE_COMMIT), "validate-config", str(config)], PROJECT, dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    by_id = {hook["id"]: hook for hook in HOOKS}
    assert by_id["contam-guard-scan"]["require_serial"] is True
    assert by_id["contam-guard-verify"]["pass_filenames"] is False
    assert by_id["contam-guard-verify"]["always_run"] is True
    assert by_id["contam-guard-scrub"]["stages"] == ["manual"]
    assert all(hook["language"] == "python" for hook in HOOKS)


def test_scrub_hook_entry_is_a_real_command() -> None:
    entry = {hook["id"]: hook for hook in HOOKS}["contam-guard-scrub"]["entry"].split()
    proc = run([str(VENV_BIN / entry[0]), *entry[1:], "--help"], PROJECT, dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_commit_adding_a_leak_is_refused_with_the_review(framework: Repo, hook_env: dict[str, str]) -> None:
    framework.write(
        "data/train.jsonl", jsonl([FILLER, "a second clean record about sourdough starters", leak(1)])
    )
    before = framework.head()
    proc = commit(framework, hook_env, "add a leaked item")
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "contam-guard scan" in output and "Failed" in output
    assert (
        "FAIL    bench:question item q-02 (#1) in data/train.jsonl:3 (record 2, field text): FAIL gpt3"
        in output
    )
    assert framework.head() == before


def test_clean_commit_and_code_only_commit_go_through(framework: Repo, hook_env: dict[str, str]) -> None:
    framework.write("data/train.jsonl", jsonl([FILLER, "a second clean record", "and a third one"]))
    proc = commit(framework, hook_env, "clean data")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "contam-guard verify" in proc.stderr and "Passed" in proc.stderr

    framework.write("src/app.py", "print('only code')\n")
    proc = commit(framework, hook_env, "only code")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "contam-guard scan" in proc.stderr and "Passed" in proc.stderr  # code is text: read

    framework.write("src/prompts.py", f"FEW_SHOT = {leak(1)!r}\n")  # a test item pasted into code
    proc = commit(framework, hook_env, "a few-shot prompt")
    assert proc.returncode == 1 and "q-02" in proc.stdout + proc.stderr


def test_allowlisted_pair_goes_through(framework: Repo, hook_env: dict[str, str]) -> None:
    framework.write("data/train.jsonl", jsonl([FILLER, leak(2)]))
    framework.git("add", "-A")
    reviewed = framework.cg_proc("review", "--staged", stdin="n\na worked example we wrote ourselves\n")
    assert reviewed.code == 0, reviewed.output
    proc = commit(framework, hook_env, "data with a reviewed pair, and the allowlist")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "allowlist.yaml" in framework.git("show", "--name-only", "HEAD")


def test_all_files_run_audits_whole_files(framework: Repo, hook_env: dict[str, str]) -> None:
    """`pre-commit run --all-files` passes files without staged changes: they are scanned whole."""
    framework.write("data/old.jsonl", jsonl([leak(3)]))
    framework.commit("a leak committed with --no-verify")
    proc = run([str(PRE_COMMIT), "run", "--all-files"], framework.root, hook_env)
    assert proc.returncode == 1
    assert "q-04" in proc.stdout


def test_hook_overhead_on_a_code_only_commit(framework: Repo, hook_env: dict[str, str]) -> None:
    """Time `git commit` of a code-only change with the hooks and without (--no-verify)."""

    def timed(extra: list[str], n: int) -> float:
        times = []
        for i in range(n):
            framework.write("src/app.py", f"print({i}, {extra!r})\n")
            framework.git("add", "src/app.py")
            start = time.perf_counter()
            proc = run(["git", "commit", "-q", *extra, "-m", f"code {i}"], framework.root, hook_env)
            times.append(time.perf_counter() - start)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        return statistics.median(times)

    without = timed(["--no-verify"], 5)
    both = timed([], 5)
    framework.write(".pre-commit-config.yaml", yaml.safe_dump(local_config(["contam-guard-scan"])))
    framework.commit("scan hook only")
    scan_only = timed([], 5)
    print(  # what a committer reads
        f"\npre-commit hook overhead on a code-only commit (median of 5, --no-verify {without:.2f} s): "
        f"scan hook only {scan_only - without:.2f} s; scan + verify hooks {both - without:.2f} s"
    )
    assert scan_only - without < 5 and both - without < 10


# --- the plain git hook (no framework) -----------------------------------------------------


@pytest.fixture
def plain_hook(repo: Repo) -> Repo:
    target = repo.root / ".git" / "hooks" / "pre-commit"
    shutil.copy(PROJECT / "hooks" / "pre-commit", target)
    target.chmod(0o755)
    return repo


def test_plain_git_hook(plain_hook: Repo, repo_env: dict[str, str]) -> None:
    env = {**repo_env, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    plain_hook.write("data/train.jsonl", jsonl([FILLER, leak(0)]))
    proc = commit(plain_hook, env, "a leak")
    assert proc.returncode != 0 and "q-01" in proc.stderr

    plain_hook.write("data/train.jsonl", jsonl([FILLER]))
    proc = commit(plain_hook, env, "clean")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    start = time.perf_counter()
    plain_hook.write("src/app.py", "print('code')\n")
    proc = commit(plain_hook, env, "code only")
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0
    print(f"\nplain git hook: a code-only commit took {elapsed:.2f} s in all")

    bare_path = "/usr/bin:/bin"  # no contam-guard here
    plain_hook.write("data/more.jsonl", jsonl([FILLER]))
    proc = commit(plain_hook, {**env, "PATH": bare_path}, "no tool")
    assert proc.returncode == 1
    assert "is not installed" in proc.stderr and "--no-verify" in proc.stderr


def test_plain_hook_starts_the_scan_for_any_staged_change() -> None:
    """Any staged file may hold text, a submodule adds files, a change of the guard's own files
    may weaken it: the plain hook skips only a commit that stages nothing."""
    script = (PROJECT / "hooks" / "pre-commit").read_text(encoding="utf-8")
    assert "staged=$(git diff --cached --name-only)" in script
    assert 'if [ -z "$staged" ]; then\n  exit 0' in script


# --- the real `language: python` hook, installed by pre-commit -----------------------------


@pytest.fixture(scope="session")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed snapshot of this working tree (pre-commit installs hooks from a commit)."""
    env = {**os.environ, **git_env(tmp_path_factory.mktemp("git-home"))}
    return snapshot(tmp_path_factory.mktemp("hooks-repo"), env)


@pytest.mark.slow
def test_real_python_hook_via_try_repo(repo: Repo, hook_env: dict[str, str], hooks_repo: Path) -> None:
    repo.write("data/train.jsonl", jsonl([FILLER, "a second clean record about sourdough starters", leak(3)]))
    repo.git("add", "-A")
    args = [str(PRE_COMMIT), "try-repo", str(hooks_repo), "contam-guard-scan", "--files", "data/train.jsonl"]
    env = {**hook_env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    proc = run(args, repo.root, env, timeout=1800)
    output = proc.stdout + proc.stderr
    if proc.returncode == 3 and "An unexpected error has occurred" in output:
        pytest.fail(f"pre-commit could not install the hook (network?):\n{output[-3000:]}")
    assert proc.returncode == 1, output
    assert (
        "FAIL    bench:question item q-04 (#3) in data/train.jsonl:3 (record 2, field text): FAIL gpt3"
        in output
    )
    # The hook ran in an environment pre-commit built for it from the snapshot (language: python),
    # not with this checkout's contam-guard (try-repo's store is temporary, so it says so each time).
    installing = rf"\[INFO\] Installing environment for \S*/{re.escape(hooks_repo.name)}\.\n"
    assert re.search(installing, output), output

    repo.write("data/train.jsonl", jsonl([FILLER, "a second clean record about sourdough starters", "more"]))
    repo.git("add", "-A")
    proc = run(args, repo.root, env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --- the hook as users install it: the local-checkout example, and from the release tag ------


def test_local_checkout_example(repo: Repo, hook_env: dict[str, str]) -> None:
    """examples/ci/pre-commit-local.yaml with the contam-guard on PATH: a leak is refused, and
    with ``verbose: true`` a passing commit's warnings reach the committer."""
    example = PROJECT / "examples" / "ci" / "pre-commit-local.yaml"
    valid = run([str(PRE_COMMIT), "validate-config", str(example)], PROJECT, dict(os.environ))
    assert valid.returncode == 0, valid.stdout + valid.stderr
    shutil.copy(example, repo.root / ".pre-commit-config.yaml")
    repo.commit("the local hooks")
    installed = run([str(PRE_COMMIT), "install"], repo.root, hook_env)
    assert installed.returncode == 0, installed.stderr
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0)]))
    refused = commit(repo, hook_env, "a leak")
    assert refused.returncode != 0 and "FAIL    bench:question item q-01" in refused.stdout + refused.stderr

    repo.git("reset", "-q")  # the refused commit's data stays in the work tree only
    config = repo.root / ".contam-guard" / "contam-guard.yaml"
    text = config.read_text(encoding="utf-8")
    # The two rules that fail on a whole copied question only warn here.
    warn = text
    for rule in ("gpt3", "whole"):
        failing = f"{rule}: {{enabled: true, action: fail"
        assert failing in warn
        warn = warn.replace(failing, f"{rule}: {{enabled: true, action: warn")
    config.write_text(warn)
    repo.commit("gpt3 and whole only warn here", ".contam-guard/contam-guard.yaml")
    passed = commit(repo, hook_env, "the same text, now a warning")
    output = passed.stdout + passed.stderr
    assert passed.returncode == 0, output
    assert "Passed" in output and "WARN    bench:question item q-01" in output  # verbose: shown

    # The control: without `verbose: true` pre-commit hides a passing hook's warnings.
    hooks = yaml.safe_load((repo.root / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    del hooks["repos"][0]["hooks"][0]["verbose"]
    repo.write(".pre-commit-config.yaml", yaml.safe_dump(hooks, sort_keys=False))
    repo.commit("hooks without verbose")
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0), leak(1)]))
    hidden = commit(repo, hook_env, "another warning")
    assert hidden.returncode == 0 and "Passed" in hidden.stderr + hidden.stdout
    assert "WARN" not in hidden.stdout + hidden.stderr


@pytest.mark.slow
def test_hook_installed_from_the_release_tag(repo: Repo, hook_env: dict[str, str], hooks_repo: Path) -> None:
    """`make release-tag` in a copy of this checkout, then a config naming that path and the tag
    (`rev: v0.1.0`), as a user's names the repository's URL: pre-commit builds the hook's own
    environment from the tag (pip install from the path; its dependencies from the registry)."""
    release = subprocess.run(
        ["bash", ".ci/release-tag"], cwd=hooks_repo, env=hook_env, capture_output=True, text=True, check=False
    )
    assert release.returncode == 0, release.stderr
    version = re.search(r"^(v\S+) already tags|^Tagged (v\S+) on", release.stdout, re.M)
    assert version is not None
    tag = version.group(1) or version.group(2)
    config = {"repos": [{"repo": str(hooks_repo), "rev": tag, "hooks": [{"id": "contam-guard-scan"}]}]}
    repo.write(".pre-commit-config.yaml", yaml.safe_dump(config, sort_keys=False))
    repo.commit("hooks from the release tag")
    env = {**hook_env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    installed = run([str(PRE_COMMIT), "install", "--install-hooks"], repo.root, env, timeout=1800)
    output = installed.stdout + installed.stderr
    if installed.returncode == 3 and "An unexpected error has occurred" in output:
        pytest.fail(f"pre-commit could not install the hook (network?):\n{output[-3000:]}")
    assert installed.returncode == 0, output
    repo.write("data/train.jsonl", jsonl([FILLER, leak(3)]))
    refused = commit(repo, env, "a leak")
    assert refused.returncode != 0
    assert "FAIL    bench:question item q-04" in refused.stdout + refused.stderr
