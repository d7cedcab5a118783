"""JSONL reader: round trip, compression, encodings, and every error path."""

from __future__ import annotations

import gzip
import json
import os
import types
from pathlib import Path

import pytest
import zstandard

from contam_guard.io.readers import ReadOptions
from contam_guard.io.readers.jsonl import read_jsonl
from tests.helpers import fail, read, write

BOM = b"\xef\xbb\xbf"


SAMPLE = b'{"text": "alpha"}\n\n{"text": "beta", "id": 7}\r\n   \n{"text": "gamma"}'


@pytest.mark.parametrize("name", ["d.jsonl", "d.ndjson", "d.jsonl.gz", "d.jsonl.zst"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    records = read(write(tmp_path / name, SAMPLE))
    assert [r.joined() for r in records] == ["alpha", "beta", "gamma"]
    assert [r.index for r in records] == [0, 1, 2]
    assert [r.line for r in records] == [1, 3, 5]
    assert [r.raw for r in records] == [
        b'{"text": "alpha"}\n',
        b'{"text": "beta", "id": 7}\r\n',
        b'{"text": "gamma"}',
    ]
    assert all(r.source == name for r in records)
    assert not any(r.allow for r in records)


def test_bom_is_stripped(tmp_path: Path) -> None:
    records = read(write(tmp_path / "d.jsonl.gz", BOM + b'{"text": "x"}\n'))
    assert [(r.joined(), r.raw) for r in records] == [("x", b'{"text": "x"}\n')]


def test_empty_and_blank_files_have_no_records(tmp_path: Path) -> None:
    assert read(write(tmp_path / "e.jsonl", b"")) == []
    assert read(write(tmp_path / "b.jsonl", b"\n \r\n\t\n")) == []
    assert read(write(tmp_path / "e.jsonl.gz", b"")) == []
    assert read(write(tmp_path / "e.jsonl.zst", b"")) == []


def test_malformed_line_names_file_line_and_column(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.jsonl", b'{"text": "a"}\n\n{"text": "b",}\n'))
    assert err.line == 3
    assert str(err).startswith("d.jsonl:3: invalid JSON")
    assert "column 14" in err.problem


def test_non_object_line(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.jsonl", b'{"text": "a"}\n[1, 2]\n'))
    assert err.line == 2
    assert "record is an array, not a JSON object" in err.problem


def test_missing_field_lists_fields(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "d.jsonl", b'{"title": "a", "body": "b"}\n'), field="text")
    assert err.line == 1
    assert "fields present: title, body" in err.problem


def test_explicit_field_and_id(tmp_path: Path) -> None:
    data = b'{"messages": [{"content": "q"}, {"content": "a"}], "meta": {"id": 12}}\n'
    records = read(write(tmp_path / "d.jsonl", data), field="messages[].content", id_field="meta.id")
    assert [(r.joined(), r.item_id) for r in records] == [("q\na", "12")]


def test_allow_marker(tmp_path: Path) -> None:
    data = b'{"text": "a", "contam_guard": "allow"}\n{"text": "b"}\n{"text": "c", "contam_guard": "deny"}\n'
    assert [r.allow for r in read(write(tmp_path / "d.jsonl", data))] == [True, False, False]


def test_invalid_utf8_reports_exact_byte_offset(tmp_path: Path) -> None:
    # Line 2 starts at offset 15; the bad byte follows '{"text": "caf' (13 bytes).
    data = b'{"text": "ok"}\n{"text": "caf\xe9"}\n'
    err = fail(write(tmp_path / "d.jsonl", data))
    assert err.line == 2
    assert "byte offset 28" in err.problem
    assert "b'\\xe9'" in err.problem
    assert err.hint is not None and "--encoding" in err.hint and "--errors replace" in err.hint


def test_byte_offset_counts_bom_and_blank_lines(tmp_path: Path) -> None:
    data = BOM + b'{"text": "ok"}\n\n{"text": "caf\xe9"}\n'
    err = fail(write(tmp_path / "d.jsonl.zst", data))
    assert err.line == 3
    assert "byte offset 32" in err.problem


def test_errors_replace_opt_in(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", b'{"text": "caf\xe9"}\n')
    assert [r.joined() for r in read(path, errors="replace")] == ["caf\ufffd"]


def test_other_encoding(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", b'{"text": "caf\xe9"}\n')
    assert [r.joined() for r in read(path, encoding="latin-1")] == ["caf\u00e9"]


def test_unknown_encoding_and_handler(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", b'{"text": "x"}\n')
    assert "unknown text encoding" in fail(path, encoding="no-such-codec").problem
    assert "unknown text encoding" in fail(path, encoding="hex").problem
    assert "unknown decoding error handler" in fail(path, errors="nope").problem
    # UTF-16 is read (transcoded); UTF-8 bytes read as UTF-16 are not JSON: an error, not a pass.
    assert "invalid JSON" in fail(path, encoding="utf-16").problem


MANY = b"".join(b'{"text": "line %d"}\n' % i for i in range(50_000))


def test_truncated_gzip(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl.gz"
    blob = gzip.compress(MANY)
    path.write_bytes(blob[: len(blob) // 2])
    err = fail(path)
    assert "gzip data is corrupt or truncated" in err.problem
    # The error names the line reached: well into the file, not the start.
    assert err.line is not None and 1000 < err.line <= 50_000


def test_truncated_zstd(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl.zst"
    blob = zstandard.ZstdCompressor().compress(MANY)
    path.write_bytes(blob[:-5])
    err = fail(path)
    assert "zstd data is corrupt or truncated" in err.problem
    assert err.line is not None and 1000 < err.line <= 50_000


def test_truncated_tiny_zstd_reports_line_one(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(b'{"text": "a"}\n')[:-3])
    err = fail(path)
    assert "zstd data is corrupt or truncated" in err.problem
    assert err.line == 1


@pytest.mark.parametrize("name", ["a.jsonl.zst", "a.jsonl.gz"])
def test_not_compressed_at_all(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b'{"text": "plain, not compressed"}\n')
    kind = "zstd" if name.endswith(".zst") else "gzip"
    err = fail(path)
    assert f"{kind} data is corrupt or truncated" in err.problem
    assert err.hint is not None and f"{kind} -t" in err.hint


def test_concatenated_zstd_frames(tmp_path: Path) -> None:
    cz = zstandard.ZstdCompressor()
    blob = cz.compress(b'{"text": "one"}\n') + cz.compress(b'{"text": "two"}\n')
    path = tmp_path / "d.jsonl.zst"
    path.write_bytes(blob)
    assert [r.joined() for r in read(path)] == ["one", "two"]


def test_very_long_line(tmp_path: Path) -> None:
    long_text = "x" * 3_000_000
    path = write(tmp_path / "d.jsonl.zst", json.dumps({"text": long_text}).encode() + b"\n")
    assert [len(r.joined()) for r in read(path)] == [3_000_000]


def test_an_integer_of_5000_digits_is_valid_json(tmp_path: Path) -> None:
    """Python limits the digits of int(); JSON does not. The number is read, not an error."""
    path = write(tmp_path / "d.jsonl", b'{"text": "a", "n": ' + b"9" * 5000 + b"}\n")
    assert [r.joined() for r in read(path)] == ["a"]
    assert [[s.path for s in r.segments] for r in read(path, every=True)] == [["{key}", "text", "{key}"]]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_abandoned_generator_closes_file(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl.gz", SAMPLE)
    before = len(os.listdir("/proc/self/fd"))
    gen = read_jsonl(path, "d.jsonl.gz", ReadOptions())
    assert isinstance(gen, types.GeneratorType)
    next(gen)
    assert len(os.listdir("/proc/self/fd")) == before + 1
    gen.close()
    assert len(os.listdir("/proc/self/fd")) == before
