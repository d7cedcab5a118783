"""The datatrove step (``ContamGuardFilter``) in real datatrove pipelines, and ``report-merge``.

What a pipeline gets: each contaminated document annotated with its failing findings (never the
golden text), dropped with ``drop=True`` and kept by the exclusion writer with its reason;
documents named as the local engine names its records whatever the data's ids (the reader's
``adapter=adapter``), also when a step before drops some. What the merge refuses, each with exit
2 and a message naming the folder: a rank that did not finish, a file that is not a rank state,
a manifest changed since the run, an empty folder.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO, Runner

pytest.importorskip("datatrove", reason="datatrove is not installed (pip install 'contam-guard[datatrove]')")

from datatrove.data import Document
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.filters import LambdaFilter
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter

from contam_guard.engines.datatrove import (
    DROP_REASON,
    POSITION_KEY,
    ContamGuardFilter,
    adapter,
)
from contam_guard.engines.rank_states import FINDINGS_KEY

EXAMPLES = REPO / "examples"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Runner) -> Path:
    """The bundled set registered; the bundled training file (records with ids of their own) with
    blank lines added."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", "golden.jsonl")
    assert cli("init").code == 0
    assert cli("register", "arith-mini", "golden.jsonl", "--field", "question", "--field", "answer").code == 0
    rows = (EXAMPLES / "data" / "train.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    Path("data").mkdir()
    Path("data/train.jsonl").write_text("".join([*rows[:3], "\n", *rows[3:30], "  \n", *rows[30:]]))
    return tmp_path


def run(*steps: object, tasks: int = 1) -> None:
    """Absolute folders only: fsspec reuses the folder object of a relative path made before."""
    LocalPipelineExecutor(
        list(steps), tasks=tasks, workers=1, logging_dir=str(Path("logs").absolute()), skip_completed=False
    ).run()


def documents(folder: str) -> list[dict[str, object]]:
    found = []
    for path in sorted(Path(folder).glob("*.jsonl.gz")):
        found += [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    return found


def test_annotates_drops_and_keeps_the_dropped_for_review(project: Path, cli: Runner) -> None:
    scan = cli("scan", "data", "--field", "text", "--pairs-csv", "pairs.csv")
    assert scan.code == 1
    run(
        JsonlReader(str(project / "data"), adapter=adapter),
        ContamGuardFilter("states", drop=True, exclusion_writer=JsonlWriter(str(project / "dropped"))),
        JsonlWriter(str(project / "kept")),
    )
    kept, dropped = documents("kept"), documents("dropped")
    assert len(kept) + len(dropped) == 40 and len(dropped) == 4
    assert all(FINDINGS_KEY not in doc["metadata"] for doc in kept)  # type: ignore[operator]
    golden = Path("golden.jsonl").read_text(encoding="utf-8")
    for doc in dropped:
        meta = doc["metadata"]
        assert isinstance(meta, dict) and meta["filter_reason"] == DROP_REASON
        assert POSITION_KEY not in meta  # the adapter's position is the step's alone
        findings = meta[FINDINGS_KEY]
        assert findings and all(f["rule"] == "gpt3" and f["set"] == "arith-mini" for f in findings)
        assert not any(str(f["item_id"]) in ("", "None") for f in findings)
        shown = json.dumps(findings)
        assert not any(json.loads(line)["question"][:40] in shown for line in golden.splitlines())
    merged = cli("report-merge", "states", "--pairs-csv", "merged.csv")
    assert merged.code == 1
    assert Path("merged.csv").read_text() == Path("pairs.csv").read_text()


def test_names_survive_a_filter_before_the_step(project: Path, cli: Runner) -> None:
    """A step before ours drops clean documents: the adapter's positions still name the rest."""
    assert cli("scan", "data", "--field", "text", "--pairs-csv", "pairs.csv").code == 1
    leaks = {int(row["line"]) - 1 for row in csv.DictReader(io.StringIO(Path("pairs.csv").read_text()))}

    def clean_half(doc: Document) -> bool:  # drops every other clean document
        position = doc.metadata[POSITION_KEY]
        return position in leaks or position % 2 == 0

    keep = LambdaFilter(clean_half)
    run(JsonlReader(str(project / "data"), adapter=adapter), keep, ContamGuardFilter("states"), tasks=2)
    assert cli("report-merge", "states", "--pairs-csv", "merged.csv").code == 1
    assert Path("merged.csv").read_text() == Path("pairs.csv").read_text()


def test_the_merge_refuses_what_is_not_a_whole_run(project: Path, cli: Runner) -> None:
    run(JsonlReader(str(project / "data")), ContamGuardFilter("states"), tasks=3)
    assert cli("report-merge", "states").code == 1

    def dies_on_rank_1(data: Iterator[Document], rank: int, world_size: int) -> Iterator[Document]:
        if rank == 1:
            raise RuntimeError("a task that dies")
        yield from data

    with pytest.raises(RuntimeError, match="a task that dies"):  # the earlier run's state is gone
        run(JsonlReader(str(project / "data")), dies_on_rank_1, ContamGuardFilter("states"), tasks=3)
    missing = cli("report-merge", "states")
    assert missing.code == 2 and "1 of 3 ranks have no state (rank 1)" in missing.err

    Path("states/00001.contam-guard-state").write_bytes(b"not a state")
    foreign = cli("report-merge", "states")
    assert foreign.code == 2 and "00001.contam-guard-state: not a rank state" in foreign.err

    run(JsonlReader(str(project / "data")), ContamGuardFilter("states"), tasks=3)
    assert cli("register", "again", "golden.jsonl", "--field", "question").code == 0
    changed = cli("report-merge", "states")
    assert changed.code == 2 and "another manifest" in changed.err

    Path("empty").mkdir()
    empty = cli("report-merge", "empty")
    assert empty.code == 2 and "no rank states" in empty.err
    assert cli("report-merge", "no-such-folder").code == 2
