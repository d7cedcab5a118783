"""Property: arbitrary bytes give records or an InputError, never another exception."""

from __future__ import annotations

import gzip
import json
import json.scanner
from pathlib import Path

import pytest
import zstandard
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contam_guard.errors import InputError
from contam_guard.io.readers import ReadOptions, read_records
from contam_guard.io.readers.jsonl import exact_parse

NAMES = ["d.jsonl", "d.txt", "d.csv", "d.tsv", "d.json", "d.jsonl.gz", "d.txt.zst", "d.parquet"]

# Bytes biased toward the syntax each parser cares about, plus arbitrary noise.
_TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b",",
    b":",
    b"\n",
    b"\r\n",
    b"\t",
    b"\x00",
    b"\xff",
    b"\xef\xbb\xbf",
    b'"text"',
    b"1e999",
    b"null",
    b"PAR1",
    b"\\",
    b"\xc3",
]
noise = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(_TOKENS) | st.binary(max_size=8), max_size=60).map(b"".join),
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _encode(name: str, data: bytes, compress: bool) -> bytes:
    if not compress:
        return data
    if name.endswith(".gz"):
        return gzip.compress(data)
    if name.endswith(".zst"):
        return zstandard.ZstdCompressor().compress(data)
    return data


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    data=noise,
    compress=st.booleans(),
    whole_file=st.booleans(),
    errors=st.sampled_from(["strict", "replace"]),
)
@example(name="d.json", data=b'[{"text": "a"}, 7]', compress=True, whole_file=False, errors="strict")
@example(name="d.csv", data=b'text\n"open', compress=True, whole_file=False, errors="strict")
def test_random_bytes_never_crash(
    workdir: Path, name: str, data: bytes, compress: bool, whole_file: bool, errors: str
) -> None:
    path = workdir / name
    path.write_bytes(_encode(name, data, compress))
    options = ReadOptions(whole_file=whole_file, errors=errors)
    try:
        records = list(read_records(path, name, options))
    except InputError as exc:
        assert exc.path == name
        assert str(exc).startswith(name)
    else:
        for i, record in enumerate(records):
            assert record.index == i
            assert all(isinstance(segment.text, str) for segment in record.segments)


json_text = st.one_of(
    st.text(alphabet=st.sampled_from(list(' \t\r\n{}[]",:01-.eEtrufalsnNI\\a\u00e9')), max_size=40),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids),
        max_leaves=8,
    )
    .map(json.dumps)
    .flatmap(lambda s: st.tuples(st.just(s), st.sampled_from(["", "\n", "\r\n", " x", "  "])))
    .map("".join),
)


@settings(max_examples=500, deadline=None)
@given(json_text)
def test_fast_parse_matches_json_loads(text: str) -> None:
    scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
    try:
        expected: object = repr(json.loads(text))
    except (ValueError, RecursionError) as exc:
        expected = type(exc)
    try:
        got: object = repr(exact_parse(text, scan, json.loads))
    except (ValueError, RecursionError) as exc:
        got = type(exc)
    assert got == expected
