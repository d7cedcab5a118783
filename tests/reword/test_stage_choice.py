"""Which rewording stage a scan runs: the numpy stage for a few records, the compiled stage from
``COMPILED_REWORD_BYTES`` of input on, whatever the manifest's size (against a large manifest the
numpy stage cost seconds per few records, and 200 records took 35 s).

The choice must change the speed only: the same findings, items and pairs CSVs either way; a
scan fed records with no total said (the library) goes compiled once it has read enough, and
keeps what it found before; ``--jobs`` workers choose as their parent did.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contam_guard import Scanner
from contam_guard.core import scan_pass
from contam_guard.core.match import index as match_index
from contam_guard.core.reword.stage import CompiledStage, NumpyStage, has_compiled_stage
from contam_guard.engines.parallel import open_spec, scanner_spec
from tests.helpers import Runner

DEV = Path(__file__).resolve().parents[1] / "data" / "rewordings"
pytestmark = pytest.mark.skipif(not has_compiled_stage(), reason="the compiled kernels are not built")


def _questions(name: str) -> list[str]:
    return [json.loads(line)["question"] for line in (DEV / name).read_text(encoding="utf-8").splitlines()]


def _write(name: str, rows: list[dict[str, str]]) -> None:
    Path(name).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Runner) -> Path:
    """Golden: the development set's items as registered (its number-changed copies stand in for
    them); training: their rewordings and copies, one record each."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    golden = _questions("number_changed.jsonl")
    _write("golden.jsonl", [{"question": q} for q in golden])
    _write("train.jsonl", [{"text": t} for t in _questions("reworded.jsonl") + golden[:5]])
    assert cli("init").code == 0
    assert cli("register", "dev", "golden.jsonl", "--field", "question").code == 0
    # This manifest is small: any input but a few records would build the n-gram tables, whose
    # large scan runs the compiled stage anyway. Without them, the stage is this choice alone.
    monkeypatch.setattr(match_index, "TABLE_BYTES_PER_ENTRY", 0)
    return tmp_path


def _stage_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The stages that ran, in order (one entry per batch)."""
    ran: list[str] = []
    for kind in (CompiledStage, NumpyStage):
        original = kind.run

        def spying(self: object, *args: object, _original: object = original, **kwargs: object) -> object:
            ran.append(type(self).__name__)
            return _original(self, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(kind, "run", spying)
    return ran


def _told(monkeypatch: pytest.MonkeyPatch, threshold: int, expected: int) -> Scanner:
    """A scanner told to expect ``expected`` bytes, the compiled stage's threshold at ``threshold``."""
    monkeypatch.setattr(scan_pass, "COMPILED_REWORD_BYTES", threshold)
    scanner = Scanner.open(".contam-guard")
    scanner.expect(expected)
    return scanner


def _findings(report: object) -> list[tuple[object, ...]]:
    return [(f.rule, f.item_id, f.detail, f.pairs) for f in report.findings]  # type: ignore[attr-defined]


def test_a_few_records_run_numpy_and_more_run_compiled_without_the_tables(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scanner = _told(monkeypatch, 16, 15)
    assert scanner.reword is not None and isinstance(scanner.reword.stage, NumpyStage)
    scanner.expect(16)
    assert isinstance(scanner.reword.stage, CompiledStage)
    assert not scanner.large and not scanner.index.grams.built
    monkeypatch.setattr(match_index, "TABLE_BYTES_PER_ENTRY", 4)
    scanner.expect(1 << 40)  # the tables now: the compiled stage is kept, not built again
    assert scanner.large and scanner.__dict__["reword"].compiled


def test_the_library_goes_compiled_once_it_has_read_enough_and_keeps_what_it_found(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [{"text": t} for t in _questions("reworded.jsonl")]
    reference = Scanner.open(".contam-guard")
    monkeypatch.setattr(scan_pass, "COMPILED_REWORD_BYTES", 1 << 40)  # numpy throughout
    expected = reference.scan_records(records)
    assert any(f.rule == "reworded" for f in expected.findings)

    ran = _stage_runs(monkeypatch)
    monkeypatch.setattr(scan_pass, "COMPILED_REWORD_BYTES", 2000)
    scanner = Scanner.open(".contam-guard")
    acc = scanner.accumulator()
    acc.add_records(records[:3], source="<records>")  # under 2,000 characters: numpy
    acc.add_records(records[3:], source="<records>")  # past them: compiled from here on
    acc.read_input("<records>")
    assert "NumpyStage" in ran and ran[-1] == "CompiledStage"
    assert isinstance(scanner.reword.stage, CompiledStage)  # type: ignore[union-attr]
    assert _findings(scanner.finish(acc)) == _findings(expected)


def test_the_command_line_gives_the_same_csvs_with_either_stage(
    project: Path, cli: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = _stage_runs(monkeypatch)
    outputs = []
    for threshold, stage in ((1 << 40, "NumpyStage"), (1, "CompiledStage")):
        monkeypatch.setattr(scan_pass, "COMPILED_REWORD_BYTES", threshold)
        ran.clear()
        done = cli("scan", "train.jsonl", "--items-csv", "items.csv", "--pairs-csv", "pairs.csv")
        assert set(ran) == {stage}, ran
        outputs.append((done.code, Path("items.csv").read_bytes(), Path("pairs.csv").read_bytes()))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 1 and b"reworded" in outputs[0][2]  # the rewordings were found


def test_jobs_workers_choose_the_stage_their_parent_chose(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = _told(monkeypatch, 4096, 5000)
    assert parent.compiled_reword
    worker = open_spec(scanner_spec(parent))
    assert worker.compiled_reword and isinstance(worker.reword.stage, CompiledStage)  # type: ignore[union-attr]
    assert not open_spec(scanner_spec(_told(monkeypatch, 4096, 100))).compiled_reword
