"""The README: at most 200 lines, every link in it names a file of the repository (and a heading
there), and every command and snippet it shows works as shown: the quick starts run in a copy of
examples/, the scrub lines and the Action's script on a project of the example data, and the
pre-commit and Action YAML name hooks and inputs that exist. The Python snippet runs in
tests/api/test_public_api.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from tests.docs.shell_blocks import blocks, check, commands, environment, run
from tests.helpers import REPO

README = REPO / "README.md"


def slug(heading: str) -> str:
    """Python-Markdown's toc slug (what mkdocs links to): lower case, punctuation out, spaces to -."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"[-\s]+", "-", text).strip("-")


def project(folder: Path) -> Path:
    """A copy of examples/ with the golden set registered, as the README's quick start makes it."""
    shutil.copytree(REPO / "examples", folder)
    setup = commands(
        "contam-guard init\n"
        "contam-guard register arith-mini golden/arith-mini.jsonl"
        " --field question --field answer --id-field id\n",
        {},
    )
    check(run(setup, folder, folder.parent))
    return folder


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_every_link_of_the_readme_resolves() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert len(links) > 20
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        path, _, anchor = link.partition("#")
        target = REPO / path
        assert target.is_file(), link
        if anchor:
            headings = [slug(h) for h in re.findall(r"^#+ (.+)$", target.read_text(encoding="utf-8"), re.M)]
            assert anchor in headings, link


def test_the_data_repository_quick_start_runs(tmp_path: Path) -> None:
    (block,) = [b for b in blocks(README) if b.startswith("cp -r examples /tmp/try")]
    swaps = {"cp -r examples": f"cp -r {REPO / 'examples'}", "/tmp/try": str(tmp_path / "try")}
    found = commands(block, swaps)
    assert [c.expected for c in found] == [0, 0, 0, 1, 0, 0]  # the failing scan, then the baseline's pass
    check(run(found, tmp_path, tmp_path))
    assert (tmp_path / "try" / ".contam-guard" / "allowlist.yaml").is_file()


def test_the_scrub_quick_start_runs(tmp_path: Path) -> None:
    folder = project(tmp_path / "p")
    (block,) = [b for b in blocks(README) if b.startswith("contam-guard scrub")]
    check(run(commands(block, {}), folder, tmp_path))
    assert (folder / "clean" / "train.jsonl").stat().st_size > 0
    assert (folder / "removed.jsonl").read_text().count("\n") >= 4  # the planted leaks
    # Outputs stay out of the scanned folder; --dry-run writes nothing.
    assert sorted(p.name for p in (folder / "clean").iterdir()) == ["chat.jsonl", "train.jsonl"]
    assert not [p for p in (folder / "data").iterdir() if ".clean" in p.name]


def test_running_the_action_locally_works_as_shown(tmp_path: Path) -> None:
    folder = project(tmp_path / "p")
    env = environment(tmp_path)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "data"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True)
    subprocess.run(["git", "update-ref", "refs/remotes/origin/main", "HEAD"], cwd=folder, env=env, check=True)
    leak = (folder / "golden" / "arith-mini.jsonl").read_text().splitlines()[3]
    (folder / "data" / "more.jsonl").write_text(leak + "\n")
    for args in (["add", "-A"], ["commit", "-qm", "more data"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True)
    (block,) = [b for b in blocks(README) if "action-entry.sh" in b]
    (command,) = commands(block, {"path/to/contam-guard": str(REPO)})
    ((_, code, out),) = run([command], folder, tmp_path)
    assert code == 1, out  # the pull request adds a golden item
    assert "::error file=data/more.jsonl,line=1" in out
    assert (folder / "cg-out" / "review.md").is_file() and (
        folder / "cg-out" / "contam-guard.sarif"
    ).is_file()


def test_the_pre_commit_and_action_examples_name_what_exists() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    local = yaml.safe_load((REPO / "examples" / "ci" / "pre-commit-local.yaml").read_text())
    shown = [yaml.safe_load(b) for b in blocks(README, "yaml")]
    tagged = next(s for s in shown if isinstance(s, dict) and s["repos"][0]["repo"] != "local")
    assert tagged["repos"][0]["rev"] == "v0.1.0"
    assert all(h["id"] in hooks for h in tagged["repos"][0]["hooks"])
    mine = next(s for s in shown if isinstance(s, dict) and s["repos"][0]["repo"] == "local")
    for hook in mine["repos"][0][
        "hooks"
    ]:  # the README's local hooks are examples/ci's (tested with pre-commit)
        same = next(h for h in local["repos"][0]["hooks"] if h["id"] == hook["id"])
        assert {k: v for k, v in same.items() if k != "name"} == {
            k: v for k, v in hook.items() if k != "name"
        }
    steps = next(s for s in shown if isinstance(s, list))
    inputs = yaml.safe_load((REPO / "action.yml").read_text())["inputs"]
    action = next(step for step in steps if step["uses"].startswith("OWNER/contam-guard"))
    assert set(action["with"]) <= set(inputs)
    assert next(s for s in steps if s["uses"].startswith("actions/checkout"))["with"]["fetch-depth"] == 0
