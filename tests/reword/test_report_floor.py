"""The reworded rule's report floor: the lowest score a scan computes and reports. At its default
(0.2) a near miss shows in the items CSV; raised to the threshold it shows 0, and the findings,
the pairs and the exit code stay as they were (a scan against a large manifest walks fewer
candidates that way)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from contam_guard.core.config import Rules
from contam_guard.core.families.reword import RewordSettings
from contam_guard.core.rules import reworded
from tests.helpers import Runner

LIGHTHOUSE = (
    "A lighthouse keeper on Brackwater Point polishes 14 brass lamps every evening and trims "
    "6 wicks before the fog rolls in. How many lamps and wicks does she tend in a week?"
)
BAKER = (
    "A baker fills 9 trays with 12 rolls each morning and sells all but 15 of them by noon. "
    "How many rolls does she sell before noon?"
)
NEAR_MISS = "A keeper polishes lamps in the evening and walks home in the fog."  # 0.249 with LIGHTHOUSE
REWORDED = (
    "Each morning the baker puts 12 rolls on each of 9 trays, and by noon all but 15 are sold. "
    "How many rolls were sold before noon?"
)


def _reworded_scores(items_csv: Path) -> list[float]:
    with items_csv.open(encoding="utf-8", newline="") as f:
        return [float(row["reworded_score"]) for row in csv.DictReader(f)]


def _scan(cli: Runner, name: str) -> tuple[int, list[float], str]:
    done = cli("scan", "train.jsonl", "--items-csv", f"{name}-items.csv", "--pairs-csv", f"{name}-pairs.csv")
    pairs = Path(f"{name}-pairs.csv").read_text(encoding="utf-8")
    return done.code, _reworded_scores(Path(f"{name}-items.csv")), pairs


def _set_floor(line: str) -> None:
    config = Path(".contam-guard/contam-guard.yaml")
    text = config.read_text(encoding="utf-8")
    default = "reworded: {enabled: true, action: warn, threshold: 0.32, report_floor: 0.2}"
    assert default in text  # what init writes: the defaults, spelled out
    config.write_text(text.replace(default, line), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Runner) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    rows = [{"question": LIGHTHOUSE}, {"question": BAKER}]
    Path("golden.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    Path("train.jsonl").write_text(
        "".join(json.dumps({"text": t}) + "\n" for t in (NEAR_MISS, REWORDED)), encoding="utf-8"
    )
    assert cli("init").code == 0
    assert cli("register", "g", "golden.jsonl", "--field", "question").code == 0
    return tmp_path


def test_the_floor_at_the_threshold_drops_the_near_miss_and_keeps_the_findings(
    project: Path, cli: Runner
) -> None:
    code, scores, pairs = _scan(cli, "default")
    near_miss, finding = scores
    assert 0.2 <= near_miss < 0.32  # shown at the default floor
    assert finding >= 0.32

    _set_floor("reworded: {enabled: true, action: warn, threshold: 0.32, report_floor: 0.32}")
    raised_code, raised_scores, raised_pairs = _scan(cli, "raised")
    assert raised_scores == [0.0, finding]
    assert (raised_code, raised_pairs) == (code, pairs)
    assert "reworded" in pairs.splitlines()[0] and len(pairs.splitlines()) == 2  # the finding's pair


def test_a_floor_over_the_threshold_is_the_threshold() -> None:
    settings = RewordSettings(numbers=None, reworded=0.32, report_floor=0.5)
    assert settings.floor == 0.32
    assert RewordSettings(numbers=13, reworded=None, report_floor=0.2).floor is None
    defaults = RewordSettings.of(Rules())
    assert defaults is not None and defaults.floor == reworded.Settings().report_floor


@pytest.mark.parametrize("value", ["0", "-0.1", "1.5", "low"])
def test_a_floor_out_of_bounds_is_a_config_error(project: Path, cli: Runner, value: str) -> None:
    _set_floor(f"reworded: {{enabled: true, action: warn, threshold: 0.32, report_floor: {value}}}")
    done = cli("scan", "train.jsonl")
    assert done.code == 2
    assert "report_floor" in done.err and "Traceback" not in done.err
