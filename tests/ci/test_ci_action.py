"""The GitHub Action: its entry script run with a simulated GITHUB_* environment against a real
repository with a PR-like range, and action.yml checked structurally and with actionlint."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from .conftest import FILLER, PROJECT, VENV_BIN, Repo, jsonl, leak

ENTRY = PROJECT / "hooks" / "action-entry.sh"
ACTION = PROJECT / "action.yml"


def run_action(
    repo: Repo, tmp: Path, **env: str
) -> tuple[subprocess.CompletedProcess[str], str, dict[str, str]]:
    """Run the entry script as the action's scan step would; returns (process, summary, outputs)."""
    summary, outputs = tmp / "step_summary.md", tmp / "github_output"
    summary.write_text("", encoding="utf-8")
    outputs.write_text("", encoding="utf-8")
    full = {
        **repo.env,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(outputs),
        "RUNNER_TEMP": str(tmp),
        "GITHUB_EVENT_NAME": "pull_request",
        **env,
    }
    proc = subprocess.run(
        ["bash", str(ENTRY)],
        cwd=repo.root,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    values = dict(
        line.split("=", 1) for line in outputs.read_text(encoding="utf-8").splitlines() if "=" in line
    )
    return proc, summary.read_text(encoding="utf-8"), values


@pytest.fixture
def pull_request(repo: Repo) -> tuple[Repo, str]:
    """A PR-like range: the base commit has an old leak; the head adds two new leaks."""
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0)]))
    base = repo.commit("main: an old leak")
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0), "clean", leak(1)]))
    repo.write("data/odd,name:1.jsonl", jsonl(["intro", leak(2)]))
    repo.commit("pr: two new leaks")
    return repo, base


def test_pull_request_run_writes_summary_annotations_outputs_and_sarif(
    pull_request: tuple[Repo, str], tmp_path: Path, sarif_schema: dict[str, Any]
) -> None:
    repo, base = pull_request
    proc, summary, outputs = run_action(repo, tmp_path, CG_PR_BASE_SHA=base, CG_PATHS="data/\n")
    assert proc.returncode == 1, proc.stderr

    # Annotations: the two new leaks, not the old one; the odd file name escaped.
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 2, proc.stdout
    assert any(line.startswith("::error file=data/odd%2Cname%3A1.jsonl,line=2,") for line in errors)
    assert any(line.startswith("::error file=data/train.jsonl,line=4,") for line in errors)
    assert "q-01" not in proc.stdout

    assert "| # | status | rules | set:view | item | training record | detail |" in summary
    assert "**2 failing finding(s)**" in summary and "q-02" in summary

    assert outputs["exit-code"] == "1"
    assert int(outputs["findings"]) >= 2
    review = Path(outputs["review-file"])
    assert review.is_file() and review.read_text(encoding="utf-8").startswith("# contam-guard review")
    sarif = json.loads(Path(outputs["sarif-file"]).read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(sarif_schema).validate(sarif)


def test_a_clean_pull_request_passes_and_sarif_can_be_off(repo: Repo, tmp_path: Path) -> None:
    base = repo.head()
    repo.write("data/more.jsonl", jsonl([FILLER]))
    repo.commit("clean data")
    proc, summary, outputs = run_action(repo, tmp_path, CG_PR_BASE_SHA=base, CG_SARIF="false")
    assert proc.returncode == 0, proc.stderr
    assert "no failing findings" in summary and "No findings." in summary
    assert outputs["exit-code"] == "0" and outputs["findings"] == "0" and outputs["sarif-file"] == ""


def test_many_findings_are_capped_at_ten_annotations_with_a_notice(repo: Repo, tmp_path: Path) -> None:
    base = repo.head()
    repo.write("data/many.jsonl", jsonl([leak(i % 4, f"copy {i}", "end") for i in range(30)]))
    repo.commit("thirty leaks")
    proc, _, outputs = run_action(repo, tmp_path, CG_PR_BASE_SHA=base, CG_FAIL_ON="gpt3")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 10
    notices = [line for line in lines if line.startswith("::notice::")]
    assert len(notices) == 1 and re.search(r"contam-guard: \d+ more finding\(s\) not annotated", notices[0])
    assert outputs["exit-code"] == "1"


def test_base_equal_to_head_is_exit_0_with_a_notice(repo: Repo, tmp_path: Path) -> None:
    proc, summary, outputs = run_action(repo, tmp_path, CG_PR_BASE_SHA=repo.head())
    assert proc.returncode == 0
    assert "same commit" in summary and outputs["exit-code"] == "0"
    assert "::notice title=contam-guard::BASE and HEAD are the same commit" in proc.stdout


def test_shallow_checkout_fails_with_the_fix_after_writing_everything(
    pull_request: tuple[Repo, str], tmp_path: Path
) -> None:
    repo, base = pull_request
    clone = tmp_path / "checkout"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)],
        env=repo.env,
        check=True,
        capture_output=True,
    )
    shallow = Repo(clone, repo.env, repo.capsys)
    proc, summary, outputs = run_action(shallow, tmp_path, CG_PR_BASE_SHA=base)
    assert proc.returncode == 2
    assert outputs["exit-code"] == "2" and outputs["review-file"] == ""
    assert "could not run" in summary and "fetch-depth: 0" in summary
    [annotation] = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    assert annotation.startswith("::error title=contam-guard could not scan (exit 2)::")
    assert "fetch-depth: 0" in annotation and "\n" not in annotation


def test_push_of_a_new_branch_audits_the_given_paths_whole(
    pull_request: tuple[Repo, str], tmp_path: Path
) -> None:
    repo, _ = pull_request
    proc, _, outputs = run_action(
        repo, tmp_path, GITHUB_EVENT_NAME="push", CG_PUSH_BEFORE="0" * 40, CG_PATHS="data/train.jsonl"
    )
    assert proc.returncode == 1
    assert "q-01" in proc.stdout  # the old leak too: a whole-file scan
    assert outputs["exit-code"] == "1"


# --- action.yml -------------------------------------------------------------------------


def load_action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


def test_action_yml_is_a_well_formed_composite_action() -> None:
    action = load_action()
    assert action["name"] and action["description"]
    assert action["runs"]["using"] == "composite"
    required_inputs = {
        "manifest",
        "paths",
        "base-ref",
        "config",
        "fail-on",
        "sarif",
        "python-version",
        "install",
    }
    assert required_inputs <= set(action["inputs"])
    for name, spec in action["inputs"].items():
        assert spec["description"] and "default" in spec, name
    for name in ("exit-code", "findings", "review-file", "sarif-file"):
        assert action["outputs"][name]["value"] == f"${{{{ steps.scan.outputs.{name} }}}}"
    steps = action["runs"]["steps"]
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step["shell"] == "bash"
            assert "${{" not in step["run"], f"an expression inside a run script: {step['run']!r}"
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    assert uses == ["actions/setup-python", "actions/upload-artifact", "github/codeql-action/upload-sarif"]
    sarif_step = steps[-1]
    assert sarif_step["continue-on-error"] is True


def test_every_input_reaches_the_script_through_env() -> None:
    action = load_action()
    steps = action["runs"]["steps"]
    text = yaml.safe_dump(steps)
    for name in action["inputs"]:
        assert f"inputs.{name}" in text, f"input {name} is never used"
    script = ENTRY.read_text(encoding="utf-8")
    env_names = {k for s in steps for k in s.get("env", {})}
    for step in steps:
        for value in step.get("env", {}).values():
            assert str(value).startswith("${{") and str(value).endswith("}}")
    read = set(re.findall(r"\$\{?(CG_[A-Z_]+)", script)) - {"CG_OUT_DIR", "CG_INSTALL"}
    assert read <= env_names, f"the script reads {read - env_names} that action.yml never sets"
    passed = {n for n in env_names if n.startswith("CG_")} - {"CG_INSTALL"}
    assert passed <= read, f"action.yml sets {passed - read} that the script never reads"


def actionlint() -> str:
    found = shutil.which("actionlint", path=str(VENV_BIN)) or shutil.which("actionlint")
    assert found, "actionlint is a dev dependency (pip install -e '.[dev]')"
    return found


def test_example_workflow_passes_actionlint() -> None:
    proc = subprocess.run(
        [actionlint(), "-no-color", str(PROJECT / "examples" / "ci" / "workflow.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_action_inputs_check_out_with_actionlint(tmp_path: Path, repo_env: dict[str, str]) -> None:
    """actionlint reads a local action's metadata: a workflow using it with every input passes,
    and an unknown input is caught (so the check can fail)."""
    shutil.copy(ACTION, tmp_path / "action.yml")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, env=repo_env, check=True)
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    inputs = {name: "x" for name in load_action()["inputs"]}
    workflow = {
        "name": "t",
        "on": {"pull_request": None},
        "jobs": {
            "scan": {
                "runs-on": "ubuntu-latest",
                "steps": [
                    {"uses": "actions/checkout@v5", "with": {"fetch-depth": 0}},
                    {"uses": "./", "with": inputs},
                ],
            }
        },
    }
    good = workflows / "good.yml"
    good.write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    proc = subprocess.run(
        [actionlint(), "-no-color", str(good)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    workflow["jobs"]["scan"]["steps"][1]["with"]["bogus"] = "x"  # type: ignore[index]
    good.write_text(yaml.safe_dump(workflow, sort_keys=False), encoding="utf-8")
    proc = subprocess.run(
        [actionlint(), "-no-color", str(good)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1 and 'input "bogus" is not defined' in proc.stdout
