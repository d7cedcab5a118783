"""A record as documents: its value strings joined in order, each key apart; the fields and line
a run names; consecutive records grouped by ``--group-by``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contam_guard.core.register.build import GoldenSource, build_set, golden_options, golden_texts
from contam_guard.errors import InputError
from contam_guard.io.readers import ReadOptions, Record, Segment, read_records
from contam_guard.io.readers.documents import documents, grouped, line_of
from contam_guard.io.readers.fields import strings_in
from tests.helpers import write


def test_values_are_one_document_and_keys_are_apart() -> None:
    segments = strings_in({"id": "q-1", "meta": {"tags": ["a b", "c"]}, "text": "d e"})
    found = documents(segments)
    assert [d.text for d in found] == ["q-1\na b\nc\nd e", "id", "meta", "tags", "text"]
    values = found[0]
    assert [s.path for s in values.segments] == ["id", "meta.tags[0]", "meta.tags[1]", "text"]
    assert values.starts == (0, 4, 8, 10)
    # A run inside one string names it; one that crosses names the first and the last.
    assert values.field(4, 7) == "meta.tags[0]"
    assert values.field(6, 11) == "meta.tags[0]..text"
    assert values.local(9) == (2, 1)
    assert values.at(7) == 1  # the separator after a string belongs to it


def test_a_record_of_one_string_or_of_keys_only() -> None:
    (one,) = documents([Segment("", "plain text")])
    assert (one.text, one.starts, one.field(0, 5)) == ("plain text", (0,), "")
    assert [d.text for d in documents(strings_in({"a": 1, "b": None}))] == ["a", "b"]
    assert documents([]) == []


def test_the_line_of_a_run_in_a_paragraph() -> None:
    text = "first line\r\nsecond line\nthird"
    record = Record("n.txt", 0, 7, (Segment("", text),), raw=text.encode() + b"\n", text_lines=True)
    (document,) = documents(record.segments)
    assert [line_of(record, document, text.index(w)) for w in ("first", "second", "third")] == [7, 8, 9]
    assert record.last_line == 9
    assert record.touches(frozenset({9})) and not record.touches(frozenset({6, 10}))
    # Newlines inside a JSON string are not lines of the file.
    json_record = Record("a.jsonl", 0, 3, (Segment("text", text),), raw=b'{"text": "..."}\n')
    (document,) = documents(json_record.segments)
    assert line_of(json_record, document, text.index("third")) == 3


def records_of(rows: list[dict[str, object]], tmp_path: Path, **options: object) -> list[Record]:
    path = write(tmp_path / "s.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())
    read = ReadOptions(**options)  # type: ignore[arg-type]
    return list(grouped(read_records(path, "s.jsonl", read)))


def test_group_by_joins_consecutive_records_with_the_same_value(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"doc": 1, "text": "a b", "contam_guard": "allow"},
        {"doc": 1, "text": "c d", "contam_guard": "allow"},
        {"doc": "1", "text": "e"},  # the same value as text: "1"
        {"doc": 2, "text": "f"},
        {"doc": 1, "text": "g"},  # not consecutive: a document of its own
    ]
    found = records_of(rows, tmp_path, fields=("text",), group_by="doc")
    assert [(r.index, r.line, r.group, r.allow) for r in found] == [
        (0, 1, "1", False),
        (3, 4, "2", False),
        (4, 5, "1", False),
    ]
    first = found[0]
    assert [(s.path, s.text, s.line) for s in first.segments] == [
        ("[0].text", "a b", 1),
        ("[1].text", "c d", 2),
        ("[2].text", "e", 3),
    ]
    (document,) = documents(first.segments)
    assert document.field(0, len(document.text)) == "[0].text..[2].text"
    assert line_of(first, document, document.text.index("c")) == 2
    assert first.touches(frozenset({3})) and not first.touches(frozenset({4}))
    allowed = records_of(rows[:2], tmp_path, fields=("text",), group_by="doc")
    assert [r.allow for r in allowed] == [True]  # every member carries the marker


def test_group_by_errors_name_the_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        records_of([{"doc": 1, "text": "a"}, {"text": "b"}], tmp_path, group_by="doc")
    assert info.value.line == 2 and "--group-by field 'doc' not found" in info.value.problem
    with pytest.raises(InputError) as info:
        records_of([{"doc": [1], "text": "a"}], tmp_path, group_by="doc")
    assert "expected a string or number" in info.value.problem


def test_group_by_in_csv_and_parquet(tmp_path: Path) -> None:
    csv = write(tmp_path / "s.csv", b"doc,text\n1,a b\n1,c d\n2,e\n")
    found = list(grouped(read_records(csv, "s.csv", ReadOptions(fields=("text",), group_by="doc"))))
    # record 0 is the header (its cells are read as text, like keys; it has no group value)
    assert [[s.path for s in r.segments] for r in found] == [
        ["{key}"],
        ["[1].text", "[2].text"],
        ["[3].text"],
    ]
    with pytest.raises(InputError, match="--group-by column 'nope' not found"):
        list(read_records(csv, "s.csv", ReadOptions(group_by="nope")))
    table = pa.table({"doc": [5, 5, 6], "text": ["a", "b", "c"]})
    pq.write_table(table, tmp_path / "s.parquet")
    parquet = read_records(tmp_path / "s.parquet", "s.parquet", ReadOptions(fields=("text",), group_by="doc"))
    assert [r.group for r in grouped(parquet)] == ["5", "6"]


def test_a_plain_text_golden_file_holds_one_item_per_line(tmp_path: Path) -> None:
    """Training text is read by paragraph; a golden text file stays one item per line (a list of
    questions has no blank lines between them)."""
    golden = write(tmp_path / "golden.txt", b"first question here\nsecond question here\n\nthird one\n")
    built = build_set([GoldenSource(golden, "golden.txt")], [None], None, None, None)
    assert built.items == 3
    assert [t for _, t in golden_texts(golden, "golden.txt", golden_options(None, None))] == [
        "first question here",
        "second question here",
        "third one",
    ]
