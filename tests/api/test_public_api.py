"""The Python library as the docs show it, against the command line on the same data.

The README's snippet (its ``python`` block, also on docs/how-to/python-api.md) runs as written.
``import contam_guard as cg``: ``Scanner.open``, ``scan_records`` on dicts (every string read), on
a Hugging Face ``datasets.Dataset`` batch by batch, on a pyarrow Table; an accumulator per part,
merged; ``scrub_records``. Each must find what ``contam-guard scan`` (and ``scrub``) find on the
same records: the same findings, the same items CSV, the same pairs (but for line numbers, which
records in memory do not have)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

import contam_guard as cg
from contam_guard.report.tables import items_csv, pairs_csv
from tests.helpers import REPO, Runner

EXAMPLES = REPO / "examples"
README = REPO / "README.md"
TRAIN = "data/train.jsonl"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Runner) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    (tmp_path / "data").mkdir()
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", tmp_path / "golden.jsonl")
    shutil.copy(EXAMPLES / "data" / "train.jsonl", tmp_path / TRAIN)
    assert cli("init").code == 0
    assert cli("register", "arith-mini", "golden.jsonl", "--field", "question", "--field", "answer").code == 0
    return tmp_path


def rows() -> list[dict[str, object]]:
    return [json.loads(line) for line in Path(TRAIN).read_text(encoding="utf-8").splitlines()]


def command_line(cli: Runner) -> tuple[int, str, str]:
    done = cli("scan", TRAIN, "--items-csv", "items.csv", "--pairs-csv", "pairs.csv")
    return done.code, Path("items.csv").read_text(), Path("pairs.csv").read_text()


def without_lines(pairs: str) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if k != "line"} for row in csv.DictReader(io.StringIO(pairs))]


def findings(report: cg.Report) -> list[tuple[str, str, str, int | None, str]]:
    return [(f.rule, f.set, f.item_id, f.record, f.status) for f in report.findings]


def test_scan_records_is_the_command_line(project: Path, cli: Runner) -> None:
    code, items, pairs = command_line(cli)
    scanner = cg.Scanner.open(".contam-guard")
    report = scanner.scan_records(rows(), source=TRAIN)
    assert report.exit_code == code == cg.ExitCode.CONTAMINATED
    assert items_csv(report) == items
    assert without_lines(pairs_csv(report)) == without_lines(pairs)
    failing = report.failing[0]
    assert failing.set == "arith-mini" and failing.record is not None and failing.numbers["longest_run"] >= 13
    assert isinstance(failing, cg.Finding)


def test_parts_merged_are_one_scan(project: Path) -> None:
    scanner = cg.Scanner.open(".contam-guard")
    whole = scanner.scan_records(rows(), source=TRAIN)
    total = scanner.accumulator()
    parts = [scanner.accumulator() for _ in range(2)]
    records = rows()
    parts[0].add_records(records[:20], source=TRAIN)
    parts[1].add_records(records[20:], source=TRAIN)  # numbered from 0 in its own accumulator
    total.merge(parts[0])
    raw = "".join(json.dumps(r) + "\n" for r in records[20:]).encode()
    last = scanner.accumulator()
    last.add_jsonl_block(raw, source=TRAIN, first_line=21, first_record=20)  # as Spark and Ray feed blocks
    total.merge(last)
    total.read_input(TRAIN)
    merged = scanner.finish(total)
    assert items_csv(merged) == items_csv(whole)
    assert findings(merged) == findings(whole)


def test_a_datasets_dataset_batch_by_batch(project: Path) -> None:
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list(rows())
    scanner = cg.Scanner.open(".contam-guard")
    acc = scanner.accumulator()
    for batch in ds.iter(batch_size=16):  # a dict of columns
        acc.add_records([dict(zip(batch, values)) for values in zip(*batch.values())], source=TRAIN)
    report = scanner.finish(acc)
    assert findings(report) == findings(scanner.scan_records(rows(), source=TRAIN))

    # dropping contaminated records inside a pipeline: Dataset.filter over the failing records
    failing = {f.record for f in report.failing}
    kept = ds.filter(lambda _, index: index not in failing, with_indices=True)
    assert len(kept) == len(ds) - len(failing) and failing
    assert scanner.scan_records(list(kept), source="kept").exit_code == cg.ExitCode.CLEAN


def test_a_pyarrow_table(project: Path, cli: Runner) -> None:
    _, items, _ = command_line(cli)
    table = pa.Table.from_pylist(rows())
    scanner = cg.Scanner.open(".contam-guard")
    report = scanner.scan_records(table.to_pylist(), source=TRAIN)
    assert items_csv(report) == items


def test_scrub_records_is_the_command_lines_scrub(project: Path, cli: Runner) -> None:
    assert cli("scrub", TRAIN, "-o", "clean.jsonl", "--log", "removed.jsonl").code == 0
    expected = [json.loads(line) for line in Path("clean.jsonl").read_text().splitlines() if line.strip()]
    scanner = cg.Scanner.open(".contam-guard")
    done = scanner.scrub_records(rows())
    assert done.records == expected
    assert len(done.removed) == len(Path("removed.jsonl").read_text().splitlines()) > 0
    assert scanner.scan_records(done.records).exit_code == cg.ExitCode.CLEAN


def test_strings_and_errors(project: Path) -> None:
    scanner = cg.Scanner.open(".contam-guard")
    leak = next(str(r["text"]) for r in rows() if "piggy bank" in str(r["text"]))
    report = scanner.scan_records(["nothing to see", leak])
    assert report.exit_code == cg.ExitCode.CONTAMINATED and report.failing[0].record == 1
    with pytest.raises(cg.ContamGuardError, match="record 0 is a int"):
        scanner.scan_records([7])  # type: ignore[list-item]
    with pytest.raises(cg.ContamGuardError) as missing:
        cg.Scanner.open("no-such-folder")
    assert missing.value.exit_code == cg.ExitCode.USAGE
    with pytest.raises(ValueError, match="threads must be 1 or more, not 0"):
        cg.Scanner.open(".contam-guard", threads=0)
    two = cg.Scanner.open(".contam-guard", threads=2)
    assert two.threads == 2 and two.with_rules(two.rules).threads == 2


def readme_snippet() -> str:
    """The README's Python block, as shown (the docs' Python API page shows the same block)."""
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n") + len("```python\n")
    block = text[start : text.index("```", start)]
    page = (REPO / "docs" / "how-to" / "python-api.md").read_text(encoding="utf-8")
    assert f"```python\n{block}```" in page
    return block


def test_the_readme_snippet_runs_as_shown(
    project: Path, cli: Runner, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("datasets")
    code, items, _ = command_line(cli)
    shown: dict[str, object] = {}
    exec(compile(readme_snippet(), "README.md", "exec"), shown)  # the README's own code
    printed = capsys.readouterr().out
    scanner = cg.Scanner.open(".contam-guard")
    whole = scanner.scan_records(rows(), source=TRAIN)
    failing = sorted({f.record for f in whole.failing if f.record is not None})
    # the list of dicts: its verdict and failing findings, printed
    assert code == cg.ExitCode.CONTAMINATED and printed.startswith("CONTAMINATED [(")
    assert all(f"'{f.item_id}', {f.record})" in printed for f in whole.failing)
    # the Dataset: map flagged exactly the failing records, filter dropped them
    ds, clean = shown["ds"], shown["clean"]
    assert len(ds) == len(rows()) and len(clean) == len(ds) - len(failing) and failing  # type: ignore[arg-type]
    assert [r["id"] for r in clean] == [r["id"] for i, r in enumerate(rows()) if i not in failing]  # type: ignore[attr-defined]
    assert scanner.scan_records([str(r["text"]) for r in clean]).exit_code == cg.ExitCode.CLEAN  # type: ignore[attr-defined]
    # the pyarrow Table: the command line's items, number for number
    report = shown["report"]
    assert isinstance(report, cg.Report) and items_csv(report) == items
