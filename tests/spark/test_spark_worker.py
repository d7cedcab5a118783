"""The Spark scan task without Spark: Arrow batches of raw JSONL lines, as the input frame holds
them, fed to ``PartitionScan`` give the local engine's pairs and counts, however the batches and
the prefilter's blocks are cut (runs of one split inside a batch, blocks across batches, blocks
cut inside a batch, a byte-order mark, blank and whitespace-only lines)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.config import MAX_PAIRS_PER_ITEM, Config, Rules
from contam_guard.core.scanner import Scanner
from contam_guard.core.state import ScanState
from contam_guard.engines.local import scan_sources
from contam_guard.io.manifest import store
from contam_guard.io.readers import ReadOptions
from contam_guard.io.readers.opener import UTF8_BOM
from contam_guard.io.sources import Source

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")

from contam_guard.engines.spark import worker
from contam_guard.engines.spark.inputs import plan_files, sources_for
from contam_guard.engines.spark.payload import payload_for
from contam_guard.engines.spark.records import is_blank

from .conftest import EXAMPLES

INPUT = pa.schema(
    [
        ("file", pa.string()),
        ("block", pa.int64()),
        ("raw", pa.binary()),
        ("text", pa.string()),
        ("row", pa.int64()),
        ("allow", pa.bool_()),
    ]
)


def training_lines() -> list[bytes]:
    """Records around the golden questions copied verbatim, blank and whitespace-only lines
    among them, the first line after a byte-order mark."""
    golden = (EXAMPLES / "golden" / "arith-mini.jsonl").read_text(encoding="utf-8").splitlines()
    lines: list[bytes] = []
    for k, line in enumerate(golden * 3):
        question = json.loads(line)["question"]
        filler = f"Record {k}: counting beads on a string, one colour after another, {k} times."
        lines.append(json.dumps({"id": k, "text": filler, "n": k}).encode())
        lines.append(json.dumps({"id": f"q{k}", "text": f"{filler} {question}"}).encode())
        lines.append(b"" if k % 3 == 0 else b" \t\r" if k % 3 == 1 else b"   ")
    lines[0] = UTF8_BOM + lines[0]
    return lines


def batches(path: Path, lines: list[bytes], per_batch: int) -> Iterator[pa.RecordBatch]:
    """The rows ``inputs.file_frame`` makes of a JSONL file read as one split."""
    key = str(path.resolve())
    for start in range(0, len(lines), per_batch):
        raws = lines[start : start + per_batch]
        n = len(raws)
        columns: dict[str, list[Any]] = {
            "file": [key] * n,
            "block": [0] * n,
            "raw": raws,
            "text": [None] * n,
            "row": [None] * n,
            "allow": [False] * n,
        }
        yield pa.RecordBatch.from_pydict(columns, schema=INPUT)


def found(state: ScanState) -> list[tuple[Any, ...]]:
    return sorted(
        (p.item, p.record, p.line, p.field, tuple(sorted(p.numbers.items())), p.snippet.run)
        for p in state.store.pairs()
    )


@pytest.mark.parametrize(
    ("per_batch", "block_bytes"), [(10_000, 4 << 20), (7, 4 << 20), (7, 600), (1000, 300)]
)
def test_partition_scan_matches_the_local_engine(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    per_batch: int,
    block_bytes: int,
) -> None:
    lines = training_lines()
    path = tmp_path / "train.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    read = ReadOptions(fields=("text",))
    manifest = store.load(project / ".contam-guard" / "manifest.json")
    scanner = Scanner(manifest, Config(rules=Rules()), None, root=Path.cwd(), max_pairs=MAX_PAIRS_PER_ITEM)
    local = scan_sources(scanner, [Source(path, "train.jsonl")], read).state

    monkeypatch.setattr(worker, "BLOCK_BYTES", block_bytes)
    blocks: list[int] = []
    add_jsonl_block = Accumulator.add_jsonl_block  # the class engines.spark.worker imports

    def counted(self: Any, block: bytes, **kwargs: Any) -> None:
        blocks.append(len(block))
        add_jsonl_block(self, block, **kwargs)

    monkeypatch.setattr(Accumulator, "add_jsonl_block", counted)
    task = worker.PartitionScan(payload_for(scanner), plan_files(sources_for([path]), read), 0)
    task.scan(batches(path, lines, per_batch))

    assert found(local), "the golden questions copied into the records must be found"
    assert found(task.acc.state) == found(local)
    assert (task.acc.state.census.records, task.acc.state.census.chars) == (
        local.census.records,
        local.census.chars,
    )
    [split] = task.splits
    assert (split.lines, split.size) == (len(lines), path.stat().st_size)
    assert split.records == sum(not is_blank(line.removeprefix(UTF8_BOM)) for line in lines)
    assert split.records == local.census.records
    assert split.chars == local.census.chars
    # Every line went through the compiled path, in blocks of at most BLOCK_BYTES (a longer line
    # is a block of its own).
    assert sum(blocks) == path.stat().st_size - len(UTF8_BOM)
    assert max(blocks) <= max(block_bytes, *(len(line) + 1 for line in lines))
    assert len(blocks) >= (path.stat().st_size // block_bytes)
