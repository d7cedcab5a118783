"""The goals printed under the benchmark's table: each ratio is computed from the rows it names,
and the janitor's ratio to the GPT-3-only scan is printed beside the default scan's (the most the
default scan's ratio can reach, since it runs GPT-3's rule and five more)."""

from __future__ import annotations

from benchmarks import ours
from benchmarks.measure import Job, Sample
from benchmarks.run import goals


def _job(tool: str, config: str, seconds: float, cpu: float) -> Job:
    return Job(tool, config, samples=[Sample(seconds, cpu, 1.0)])


def test_the_goals_are_ratios_of_the_rows_and_the_ceiling_is_printed() -> None:
    rows = [
        _job(ours.TOOL, ours.BASELINE, 1.0, 1.2),
        _job(ours.TOOL, ours.DEFAULT, 2.5, 3.6),
        _job(ours.TOOL, ours.DEFAULT_JOBS_2, 2.0, 3.6),
        _job("lm-eval janitor 0.4.13", "python path, 13-grams", 22.5, 21.6),
    ]
    lines = goals(rows, []).splitlines()
    assert "- janitor ÷ default scan: 9.00 / 6.00 (goal: at least 30, on x10)" in lines
    assert "- janitor ÷ `--only gpt3` (the ceiling of the line above): 22.50 / 18.00" in lines
    assert "- default scan ÷ `--only gpt3`: 2.50 / 3.00 (goal: at most 1.5, on x25)" in lines
    assert any(
        line.startswith("- corpus: default scan, one process ÷ `--jobs 2` (wall): 1.25") for line in lines
    )


def test_without_the_janitor_row_no_janitor_ratio_is_printed() -> None:
    rows = [_job(ours.TOOL, ours.BASELINE, 1.0, 1.2), _job(ours.TOOL, ours.DEFAULT, 2.5, 3.6)]
    text = goals(rows, [])
    assert "janitor" not in text
    assert "- default scan ÷ `--only gpt3`: 2.50 / 3.00" in text
