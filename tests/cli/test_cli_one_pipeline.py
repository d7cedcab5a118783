"""One pipeline and one set of options for every front end: `scan`, `review` and `sweep` read the
same files with the same options; choices are checked and listed; `--help` reads plainly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from contam_guard.core.rules import RULES
from contam_guard.core.scrub.rounds import loop_rounds
from tests.cli.conftest import GOLDEN_REL, Project, leak
from tests.helpers import Runner


def _train(project: Project) -> Path:
    tokens = project.items[0]["question"].split()
    return project.training("data/train.jsonl", [leak(tokens, 0, len(tokens)), "nothing here at all today"])


def test_sweep_reads_exactly_the_files_scan_reads(
    registered: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The golden file inside the scanned folder is never read as training data, by either:
    `sweep .` used to scan it and report 100% in every column."""
    _train(registered)
    out = tmp_path_factory.mktemp("out")  # outside the scanned folder
    scan = registered.cli("scan", ".", "--review-json", out / "r.json")
    assert scan.code == 1, scan.output
    files = json.loads((out / "r.json").read_text())["summary"]["files"]
    assert files == ["data/train.jsonl"]
    assert f"{GOLDEN_REL}: a golden file of set 'bench'; not scanned" in scan.err

    sweep = registered.cli("sweep", ".", "--csv", out / "sweep.csv")
    assert sweep.code == 0, sweep.output
    assert "(2 records scanned)" in sweep.out  # train.jsonl's two records, not the 5 golden items
    row = (out / "sweep.csv").read_text().splitlines()[1].split(",")
    assert row[0] == "bench:question" and float(row[3]) == pytest.approx(1 / 5)  # n=8: one item of five


@pytest.mark.parametrize("link", ["file", "folder"])
def test_a_link_to_the_golden_file_inside_the_data_is_scanned(
    registered: Project, tmp_path_factory: pytest.TempPathFactory, link: str
) -> None:
    """Only the registered golden file itself is left out: a symlink in the data folder (to the
    file, or to its folder) puts the whole test set into what a pipeline reads, so it is a leak."""
    golden = registered.root / GOLDEN_REL
    data = registered.root / "data"
    data.mkdir(exist_ok=True)
    if link == "file":
        (data / "evals.jsonl").symlink_to(golden)
        shown = "data/evals.jsonl"
    else:
        (data / "evals").symlink_to(golden.parent, target_is_directory=True)
        shown = f"data/evals/{golden.name}"
    out = tmp_path_factory.mktemp("out")
    scan = registered.cli("scan", "data", "--review-json", out / "r.json")
    assert scan.code == 1, scan.output
    assert json.loads((out / "r.json").read_text())["summary"]["files"] == [shown]
    whole = registered.cli("scan", ".", "--review-json", out / "all.json")
    assert whole.code == 1, whole.output
    assert shown in json.loads((out / "all.json").read_text())["summary"]["files"]
    assert GOLDEN_REL not in json.loads((out / "all.json").read_text())["summary"]["files"]


def test_sweep_takes_the_scan_options(registered: Project, tmp_path: Path) -> None:
    _train(registered)
    only = registered.cli("sweep", "data", "--field", "id", "--csv", tmp_path / "s.csv")
    assert only.code == 2, only.output  # --field id: these records have no such field
    assert "'id' not found" in only.err
    ok = registered.cli("sweep", "data", "--field", "text", "--only", "gpt3", "--csv", tmp_path / "s.csv")
    assert ok.code == 0, ok.output


def test_review_takes_jobs_skip_unreadable_and_redact_pii(registered: Project) -> None:
    _train(registered)
    broken = registered.root / "data" / "broken.jsonl"
    broken.write_text('{"text": oops}\n', encoding="utf-8")

    def review(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "contam_guard", "review", "data", *options],
            cwd=registered.root,
            input="q\n",  # look at the first finding, then quit
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    refused = review("--jobs", "2")
    assert refused.returncode == 2 and "broken.jsonl:1" in refused.stderr  # the control
    done = review("--jobs", "2", "--skip-unreadable", "--redact-pii")
    assert done.returncode == 0, done.stderr
    assert "1/1 FAIL gpt3" in done.stderr  # the readable file was scanned and its leak shown


@pytest.mark.parametrize("option", ["--only", "--disable", "--fail-on", "--warn-on"])
def test_rule_choices_are_checked_and_listed(registered: Project, option: str) -> None:
    _train(registered)
    done = registered.cli("scan", "data", option, "gpt5")
    assert done.code == 2
    assert "gpt5" in done.err and all(name in done.err for name in RULES)


def test_format_choices_come_from_the_registry(registered: Project) -> None:
    _train(registered)
    done = registered.cli("scan", "data", "--format", "yaml")
    assert done.code == 2 and "sarif" in done.err and "github" in done.err


def test_help_shows_extras_and_no_type_placeholders(cli: Runner) -> None:
    text = cli("scan", "--help").out
    assert "contam-guard[spark]" in text and "local[4]" in text  # not eaten as markup
    assert "<bool>" not in text and "<path>" not in text and "<int range>" not in text
    assert "--review-html FILE" in text and "--only RULE" in text
    scrub = cli("scrub", "--help").out
    assert "--window N" in scrub and "default 200" in scrub  # from the settings model


def test_dupes_with_several_views_needs_one_for_its_files(project: Project, tmp_path: Path) -> None:
    assert project.register("question", "answer").code == 0
    done = project.cli("dupes", "bench", "--review", tmp_path / "d.md")
    assert done.code == 2 and "--view" in done.err
    assert project.cli("dupes", "bench", "--view", "answer", "--review", tmp_path / "d.md").code == 0
    assert (tmp_path / "d.md").is_file()


def test_a_round_that_removes_nothing_stops_the_loop() -> None:
    """Both the local scrub and Spark's run ``loop_rounds``: a round that cuts nothing while
    n-grams are active is a bug that must not loop forever (Spark's own loop used to)."""
    counts = np.array([2, 0, 40], dtype=np.int64)
    calls = []

    def idle(number: int, active: Any, locate: bool) -> tuple[Any, Any, bool]:
        calls.append(number)
        return np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64), False

    with pytest.raises(RuntimeError, match="removed nothing"):
        loop_rounds(counts, 10, idle)
    assert calls == [1]

    def cutting(number: int, active: Any, locate: bool) -> tuple[Any, Any, bool]:
        return np.array([2, 0, 0], dtype=np.int64), np.zeros(3, dtype=np.int64), True

    final, rounds = loop_rounds(counts, 10, cutting)
    assert rounds == 1 and final.tolist() == [0, 0, 40]
