"""The hook as users install it, without the real pre-commit (that is ``make test-e2e``'s:
tests/ci/test_ci_precommit.py installs from the tag and runs the local example).

``make release-tag`` (``.ci/release-tag``): the tag the hook example's ``rev:`` names, on the
commit it is run on; refusals for a dirty tree, two versions, and a tag that is elsewhere. Run in
a committed snapshot of this working tree (real git; no network). The local-checkout example
runs the hooks ``.pre-commit-hooks.yaml`` defines, and the plain hook's install hint names what
works (a path or a git URL at the tag, not an unpublished package name).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from .conftest import PROJECT, git_env, snapshot

VERSION = re.search(r'^version = "(.+)"$', (PROJECT / "pyproject.toml").read_text(), re.M)


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **git_env(home)}
    root = tmp_path / "contam-guard"
    root.mkdir()
    snapshot(root, env, (".ci/", "contam_guard/version.py", "pyproject.toml", ".pre-commit-hooks.yaml"))
    return root, env


def tag(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", ".ci/release-tag"], cwd=root, env=env, capture_output=True, text=True, check=False
    )


def git(root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def test_release_tag_tags_head_once(checkout: tuple[Path, dict[str, str]]) -> None:
    root, env = checkout
    assert VERSION is not None
    name = f"v{VERSION.group(1)}"
    done = tag(root, env)
    assert done.returncode == 0, done.stderr
    assert f"Tagged {name} on " in done.stdout and f"git push origin {name}" in done.stdout
    head = git(root, env, "rev-parse", "HEAD").strip()
    assert git(root, env, "rev-parse", f"{name}^{{commit}}").strip() == head
    assert git(root, env, "cat-file", "-t", name).strip() == "tag"  # annotated
    again = tag(root, env)
    assert again.returncode == 0 and "already tags" in again.stdout

    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + "\n")
    dirty = tag(root, env)
    assert dirty.returncode == 1 and "uncommitted changes" in dirty.stderr
    git(root, env, "commit", "-qam", "later")
    moved = tag(root, env)
    assert moved.returncode == 1 and f"{name} already tags another commit" in moved.stderr
    assert git(root, env, "rev-parse", f"{name}^{{commit}}").strip() == head  # never moved


def test_release_tag_refuses_two_versions(checkout: tuple[Path, dict[str, str]]) -> None:
    root, env = checkout
    init = root / "contam_guard" / "version.py"
    init.write_text(re.sub(r'__version__ = ".*"', '__version__ = "9.9.9"', init.read_text()))
    git(root, env, "commit", "-qam", "bump one side only")
    done = tag(root, env)
    assert done.returncode == 2 and "contam_guard/version.py says 9.9.9" in done.stderr
    assert git(root, env, "tag", "-l") == ""


def test_makefile_runs_it() -> None:
    makefile = (PROJECT / "Makefile").read_text()
    assert re.search(r"^release-tag:.*\n\t.*bash \.ci/release-tag$", makefile, re.M)


def test_the_local_example_runs_the_defined_hooks() -> None:
    """examples/ci/pre-commit-local.yaml: each hook as .pre-commit-hooks.yaml defines it, but
    ``language: system`` (the installed contam-guard), with ``verbose: true`` on the scan."""
    defined = {hook["id"]: hook for hook in yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())}
    config = yaml.safe_load((PROJECT / "examples" / "ci" / "pre-commit-local.yaml").read_text())
    [local] = config["repos"]
    assert local["repo"] == "local"
    for hook in local["hooks"]:
        expected = {k: v for k, v in defined[hook["id"]].items() if k != "description"}
        assert hook == {**expected, "language": "system"}, hook["id"]
    assert {hook["id"]: hook.get("verbose") for hook in local["hooks"]}["contam-guard-scan"] is True


def test_the_plain_hook_says_how_to_install_what_exists() -> None:
    script = (PROJECT / "hooks" / "pre-commit").read_text(encoding="utf-8")
    hint = script[script.index("is not installed") :]
    assert "pip install contam-guard " not in hint and "pip install contam-guard\n" not in hint
    assert "pip install /path/to/contam-guard" in hint
    assert VERSION is not None and f"contam-guard@v{VERSION.group(1)}'" in hint
