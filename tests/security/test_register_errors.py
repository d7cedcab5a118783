"""Golden text never appears in ``register``'s errors.

A golden file that cannot be read as asked is refused with exit 2, naming the file and line, but
without quoting it: a CSV without a header row would otherwise print its first test item as the
"column names", a JSON object keyed by text its keys, a JSON array its parser's snippet. The
positive control: scanning the same file as training data (not secret) does show that text, so
the check below can fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ITEM = "A farmer stacks 48 bales of hay into 6 equal piles"
SECOND = "Lena walks 3 miles every morning and 2 every evening"
WORDS = ("farmer stacks", "bales of hay", "Lena walks", "every morning")
"""Pieces of the golden text: none may appear in register's output."""


@dataclass(frozen=True)
class Row:
    name: str
    file: str
    write: Callable[[Path], object]
    args: tuple[str, ...]
    says: tuple[str, ...]


def text(data: str) -> Callable[[Path], object]:
    return lambda path: path.write_text(data)


def parquet(path: Path) -> None:
    pq.write_table(pa.table({ITEM: [SECOND]}), path)


ROWS = [
    Row(
        "CSV without a header", "g.csv", text(f"{ITEM},{SECOND}\nx,y\n"), (), ("g.csv:1", "columns not shown")
    ),
    Row(
        "CSV without a header, --field",
        "g.csv",
        text(f"{ITEM},{SECOND}\nx,y\n"),
        ("--field", "question"),
        ("g.csv:1", "'question' not found", "columns not shown"),
    ),
    Row("TSV without a header", "g.tsv", text(f"{ITEM}\t{SECOND}\n"), (), ("g.tsv:1", "columns not shown")),
    Row(
        "JSONL keyed by the text",
        "g.jsonl",
        text(f'{{"{ITEM}": "{SECOND}"}}\n'),
        (),
        ("fields present not shown",),
    ),
    Row(
        "JSONL keyed by the text, --field",
        "g.jsonl",
        text(f'{{"{ITEM}": "{SECOND}"}}\n'),
        ("--field", "question"),
        ("g.jsonl:1", "fields present not shown"),
    ),
    Row(
        "JSON array with a syntax error",
        "g.json",
        text(f'[{{"question": "{ITEM}"}} {{"question": "{SECOND}"}}]'),
        ("--field", "question"),
        ("g.json", "invalid JSON"),
    ),
    Row("Parquet with a text column name", "g.parquet", parquet, (), ("g.parquet", "columns not shown")),
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any) -> Path:
    monkeypatch.chdir(tmp_path)
    assert cli("init").code == 0
    return tmp_path


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_register_refuses_without_quoting_the_golden_file(project: Path, cli: Any, row: Row) -> None:
    row.write(project / row.file)
    result = cli("register", "g", row.file, *row.args)
    assert result.code == 2, result.output
    for phrase in row.says:
        assert phrase in result.err, (phrase, result.err)
    assert [w for w in WORDS if w in result.output] == []


@pytest.mark.parametrize("row", [r for r in ROWS if not r.args], ids=[r.name for r in ROWS if not r.args])
def test_the_same_file_as_training_data_is_quoted(project: Path, cli: Any, row: Row) -> None:
    """The positive control: training data is not secret, and the reader's message names it
    (read with ``--field text``, as the golden set was: without it every string is read)."""
    row.write(project / row.file)
    result = cli("scan", row.file, "--field", "text")
    assert result.code == 2, result.output
    assert any(w in result.err for w in WORDS), result.err
