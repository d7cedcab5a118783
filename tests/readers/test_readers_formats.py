"""JSON-array, CSV/TSV, Parquet and plain-text readers."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contam_guard.io.readers import UnsupportedFileError
from tests.helpers import fail, read, write

# ---------------------------------------------------------------- JSON array


@pytest.mark.parametrize("name", ["a.json", "a.json.gz", "a.json.zst"])
def test_json_array_round_trip(tmp_path: Path, name: str) -> None:
    data = b'\xef\xbb\xbf \n[{"text": "x", "id": 1},\n {"question": "y", "id": "b",'
    data += b' "contam_guard": "allow"}]\n'
    records = read(write(tmp_path / name, data), id_field="id")
    assert [(r.index, r.line, r.joined(), r.item_id, r.allow) for r in records] == [
        (0, None, "x", "1", False),
        (1, None, "y", "b", True),
    ]


def test_json_array_empty_file_and_empty_array(tmp_path: Path) -> None:
    assert read(write(tmp_path / "a.json", b"")) == []
    assert read(write(tmp_path / "b.json", b"  \n")) == []
    assert read(write(tmp_path / "c.json", b"[]")) == []


@pytest.mark.parametrize(
    ("data", "kind"),
    [(b'{"text": "x"}', "an object"), (b"12", "a number"), (b'"s"', "a string")],
)
def test_json_top_level_not_array(tmp_path: Path, data: bytes, kind: str) -> None:
    err = fail(write(tmp_path / "a.json", data))
    assert f"top-level JSON value is {kind}, expected an array" in err.problem
    assert err.hint is not None and "JSONL" in err.hint


def test_json_array_malformed(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "a.json", b'[{"text": "x"}, {"text": }]'))
    assert err.problem.startswith("invalid JSON after element 1")


def test_json_array_truncated(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "a.json", b'[{"text": "x"}, {"text": "y"'))
    assert "invalid JSON" in err.problem


def test_json_array_element_not_object(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "a.json", b'[{"text": "x"}, 3]'))
    assert "array element 1 is a number, expected an object" in err.problem


def test_json_array_other_encoding_and_offset(tmp_path: Path) -> None:
    path = write(tmp_path / "a.json", b'[{"text": "caf\xe9"}]')
    assert [r.joined() for r in read(path, encoding="latin-1")] == ["caf\u00e9"]
    # 0x81 is undefined in cp1252; it sits at offset 2 (leading spaces) + 12.
    bad = write(tmp_path / "b.json", b'  [{"text": "a\x81"}]')
    err = fail(bad, encoding="cp1252")
    assert "byte offset 14" in err.problem
    assert [r.joined() for r in read(bad, encoding="cp1252", errors="replace")] == ["a\ufffd"]


def test_json_array_invalid_utf8(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "a.json", b'[{"text": "caf\xe9"}]'))
    assert "invalid JSON" in err.problem and "UTF8" in err.problem


# ---------------------------------------------------------------- CSV / TSV

CSV = b'id,text\r\n1,"first line\r\nsecond line"\r\n\r\n2,"say ""hi"", then, ""bye"""\r\n3,plain\r\n'


@pytest.mark.parametrize("name", ["d.csv", "d.csv.gz", "d.csv.zst"])
def test_csv_embedded_newlines_quotes_and_lines(tmp_path: Path, name: str) -> None:
    records = read(write(tmp_path / name, CSV), id_field="id")
    assert [(r.index, r.line, r.item_id) for r in records] == [(0, 2, "1"), (1, 5, "2"), (2, 6, "3")]
    assert records[0].joined() == "first line\r\nsecond line"
    assert records[1].joined() == 'say "hi", then, "bye"'
    assert records[2].joined() == "plain"
    assert all(r.raw is None for r in records)


def test_tsv_and_field_column(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfprompt\tbody\nignored\thello\n"
    records = read(write(tmp_path / "d.tsv", data), field="body")
    assert [(r.joined(), r.line) for r in records] == [("hello", 2)]
    records = read(write(tmp_path / "e.tsv.gz", data))
    assert [r.joined() for r in records] == ["ignored"]


def test_csv_missing_text_column_lists_columns(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.csv", b"a,b\n1,2\n"))
    assert "no text column found" in err.problem and "columns: a, b" in err.problem
    err = fail(write(tmp_path / "e.csv", b"a,b\n1,2\n"), field="body")
    assert "text column 'body' not found; columns: a, b" in err.problem


def test_csv_allow_column(tmp_path: Path) -> None:
    data = b"text,contam_guard\nx,allow\ny,\n"
    assert [r.allow for r in read(write(tmp_path / "d.csv", data))] == [True, False]


def test_csv_ragged_row(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.csv", b'text,id\n"a\nb",1\nc,2,extra\n'))
    assert err.line == 4
    assert "row has 3 fields but the header has 2" in err.problem


def test_csv_unterminated_quote(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.csv", b'text\n"never closed\nmore\n'))
    assert "malformed CSV" in err.problem
    assert err.line == 3


def test_csv_decode_error_offset(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.csv", b"text\nok\nbad\xff\n"))
    assert err.line == 3 and "byte offset 11" in err.problem


def test_csv_empty_and_header_only(tmp_path: Path) -> None:
    assert read(write(tmp_path / "d.csv", b"")) == []
    assert read(write(tmp_path / "e.csv", b"text\n")) == []


def test_csv_field_larger_than_default_limit(tmp_path: Path) -> None:
    big = "w" * 300_000
    records = read(write(tmp_path / "d.csv", f"text\n{big}\n".encode()))
    assert [len(r.joined()) for r in records] == [300_000]


# ---------------------------------------------------------------- Parquet


def write_parquet(path: Path, table: pa.Table) -> Path:
    pq.write_table(table, path)
    return path


def test_parquet_round_trip_with_id(tmp_path: Path) -> None:
    table = pa.table(
        {
            "qid": pa.array([10, 11, 12], pa.int64()),
            "question": ["a", "b", "c"],
            "contam_guard": ["", "allow", None],
        }
    )
    records = read(write_parquet(tmp_path / "d.parquet", table), id_field="qid")
    assert [(r.index, r.line, r.joined(), r.item_id, r.allow) for r in records] == [
        (0, None, "a", "10", False),
        (1, None, "b", "11", True),
        (2, None, "c", "12", False),
    ]


def test_parquet_many_batches(tmp_path: Path) -> None:
    table = pa.table({"text": [f"t{i}" for i in range(3000)]})
    records = read(write_parquet(tmp_path / "d.parquet", table))
    assert [r.index for r in records] == list(range(3000))
    assert records[2999].joined() == "t2999"


def test_parquet_missing_column_lists_schema(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "d.parquet", pa.table({"a": ["x"], "b": [1]}))
    err = fail(path)
    assert "no text column found" in err.problem and "columns: a, b" in err.problem
    err = fail(path, field="body")
    assert "text column 'body' not found; columns: a, b" in err.problem


def test_parquet_int_column(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "d.parquet", pa.table({"text": pa.array([1, 2], pa.int32())}))
    err = fail(path)
    assert "text column 'text' has type int32, expected string" in err.problem


def test_parquet_null_text(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "d.parquet", pa.table({"text": ["a", None]}))
    assert "row 1: column 'text' is null" in fail(path).problem


def test_parquet_nested_field(tmp_path: Path) -> None:
    messages = [[{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]]
    path = write_parquet(tmp_path / "d.parquet", pa.table({"messages": messages}))
    records = read(path, field="messages[].content")
    assert [r.joined() for r in records] == ["q\na"]
    err = fail(path, field="messages[].role_missing")
    assert err.problem.startswith("row 0: field 'messages[].role_missing' not found")


def test_parquet_large_string_and_dictionary(tmp_path: Path) -> None:
    table = pa.table(
        {
            "text": pa.array(["x", "y"], pa.large_string()),
            "content": pa.array(["p", "q"]).dictionary_encode(),
        }
    )
    path = write_parquet(tmp_path / "d.parquet", table)
    assert [r.joined() for r in read(path)] == ["x", "y"]
    assert [r.joined() for r in read(path, field="content")] == ["p", "q"]


def test_not_a_parquet_file(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.parquet", b"PAR1 this is not parquet at all"))
    assert "not a Parquet file, or corrupt" in err.problem


def test_truncated_parquet(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "d.parquet", pa.table({"text": ["a" * 100] * 100}))
    path.write_bytes(path.read_bytes()[:-20])
    assert "not a Parquet file, or corrupt" in fail(path).problem


def test_empty_parquet_file(tmp_path: Path) -> None:
    # Zero bytes is a failed write or download; a Parquet file with no rows has a footer.
    assert fail(write(tmp_path / "d.parquet", b"")).problem.startswith("empty Parquet file")


# ---------------------------------------------------------------- plain text


@pytest.mark.parametrize("name", ["d.txt", "d.md", "d.text", "d.txt.gz", "d.md.zst"])
def test_text_paragraphs_and_lines(tmp_path: Path, name: str) -> None:
    """A paragraph (lines up to a blank one) is a record; ``lines`` reads one per line."""
    data = b"\xef\xbb\xbfone\r\n\n  \ntwo\nthree"
    path = write(tmp_path / name, data)
    assert [(r.index, r.line, r.joined(), r.raw, r.last_line) for r in read(path)] == [
        (0, 1, "one", b"one\r\n", 1),
        (1, 4, "two\nthree", b"two\nthree", 5),
    ]
    assert [(r.index, r.line, r.joined(), r.raw) for r in read(path, lines=True)] == [
        (0, 1, "one", b"one\r\n"),
        (1, 4, "two", b"two\n"),
        (2, 5, "three", b"three"),
    ]


def test_text_whole_file(tmp_path: Path) -> None:
    data = b"para one\n\npara two\n"
    records = read(write(tmp_path / "d.md", data), whole_file=True)
    assert [(r.index, r.line, r.joined(), r.raw) for r in records] == [(0, 1, "para one\n\npara two\n", data)]
    assert read(write(tmp_path / "e.md", b" \n\n"), whole_file=True) == []


def test_text_whole_file_decode_error(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.txt", b"ok\nstill ok\nbad \xc3(\n"), whole_file=True)
    assert err.line == 3 and "byte offset 16" in err.problem


def test_text_decode_error_offset(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.txt", b"\xef\xbb\xbfok\nbad \xc3(\n"))
    assert err.line == 2 and "byte offset 10" in err.problem


def test_binary_txt_is_an_error_not_a_skip(tmp_path: Path) -> None:
    # A file with a text extension was asked to be read: binary data in it is exit 2, not a skip.
    for name in ("b.txt", "b.txt.gz"):
        path = write(tmp_path / name, b"looks like text\n" * 10 + b"\x00\x01\x02")
        err = fail(path)
        assert not isinstance(err, UnsupportedFileError)
        assert "binary data" in err.problem


def test_nul_after_first_8k_is_not_sniffed(tmp_path: Path) -> None:
    path = write(tmp_path / "b.txt", b"x" * 9000 + b"\n\x00\n")
    assert [(r.line, r.last_line) for r in read(path)] == [(1, 2)]  # one paragraph of two lines


def test_empty_text_file(tmp_path: Path) -> None:
    assert read(write(tmp_path / "d.txt", b"")) == []
