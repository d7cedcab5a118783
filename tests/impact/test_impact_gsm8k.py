"""The docs' worked example (docs/how-to/impact.md), run as written: a real train-vs-test scan of
GSM8K, the made-up scores, and ``impact`` in a fresh process; the page's table and numbers must
be what it prints. Reads ../shared/data/gsm8k; skips with a reason elsewhere."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import GSM8K

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.gsm8k,
    pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}"),
]


def _example() -> str:
    text = (ROOT / "docs" / "how-to" / "impact.md").read_text(encoding="utf-8")
    start = text.index("**Worked example on GSM8K")
    end = text.find("\n#", start)
    return text[start : end if end >= 0 else len(text)]


def _run(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode in (0, 1), done.stderr  # the scan exits 0 with --exit-zero
    return done.stdout


def test_docs_worked_example(tmp_path: Path) -> None:
    example = _example()
    commands = re.search(r"```\n(contam-guard init.*?)```", example, re.S)
    assert commands is not None
    data = os.fspath(GSM8K)
    for line in commands.group(1).replace("../shared/data/gsm8k", data).splitlines():
        for step in line.split(" && "):
            words = step.split()
            if words[0] == "python":  # python examples/impact/made_up_scores.py > FILE
                out = _run(os.fspath(ROOT / words[1]), cwd=tmp_path)
                (tmp_path / words[-1]).write_text(out)
            else:
                out = _run("-m", "contam_guard", *words[1:], cwd=tmp_path)
    # ``out`` is impact's report: the page's table rows, as printed.
    rows = [line for line in example.splitlines() if line.startswith("| ")]
    assert len(rows) == 4
    for row in rows:
        assert row in out
    _run("-m", "contam_guard", *words[1:], "--json", "impact.json", cwd=tmp_path)
    report = json.loads((tmp_path / "impact.json").read_text())
    assert report["scores"]["format"] == "lm-evaluation-harness"
    assert report["counts"] == {"scored": 1319, "clean": 1316, "flagged": 3, "unscored": 0}
    diff = report["clean_minus_full"]
    said = re.search(
        r"Clean − full: −([\d.]+) points \(95% paired bootstrap interval −([\d.]+) to \+([\d.]+)", example
    )
    assert said is not None
    assert [f"{100 * abs(diff[k]):.2f}" for k in ("value", "low", "high")] == list(said.groups())
    relative = re.search(r"relative change −([\d.]+)%", example)
    assert relative is not None and f"{-100 * report['gpt3_relative_change']['value']:.2f}" == relative.group(
        1
    )
    subsets = {s["name"]: s for s in report["llama2"]["subsets"]}
    assert subsets["not clean"]["n"] == 9 and subsets["not clean"]["mean"] == 1.0
    assert f"Z = {subsets['not clean']['z']:+.2f}" in example
    plain = example.replace("\n", " ").replace("−", "-")
    assert f"clean subset's Z is {subsets['clean']['z']:+.2f}" in plain
    assert subsets["dirty"]["n"] == 0 and report["llama2"]["contaminated"] is None
