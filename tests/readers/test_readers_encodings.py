"""UTF-16/32 text through every reader: byte-order marks, --encoding, sniffing, errors, containers.

The text holds characters outside ASCII and outside the BMP, so a transcoder that dropped or
mangled a byte could not read it back.
"""

from __future__ import annotations

import codecs
import gzip
import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contam_guard.engines.parallel import plan
from contam_guard.errors import InputError
from contam_guard.io.readers import ReadOptions, read_records, transcode
from contam_guard.io.readers.opener import transcodes
from contam_guard.io.sources import Source
from tests.helpers import fail, read, write

TEXTS = ["naïve café in Zürich", "東京 and 🙂 on one line", "plain ASCII words"]
BOMS = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}
BOMS |= {"utf-32-le": codecs.BOM_UTF32_LE, "utf-32-be": codecs.BOM_UTF32_BE}


def as_text() -> str:
    return "\n".join(t + "\n" for t in TEXTS)  # paragraphs: a blank line between


def as_jsonl() -> str:
    return "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in TEXTS)


def as_csv() -> str:
    return "id,text\n" + "".join(f'{i},"{t}"\n' for i, t in enumerate(TEXTS))


def as_tsv() -> str:
    return "id\ttext\n" + "".join(f"{i}\t{t}\n" for i, t in enumerate(TEXTS))


def as_json() -> str:
    return json.dumps([{"text": t} for t in TEXTS], ensure_ascii=False)


FORMATS: dict[str, Callable[[], str]] = {
    "a.txt": as_text,
    "a.jsonl": as_jsonl,
    "a.csv": as_csv,
    "a.tsv": as_tsv,
    "a.json": as_json,
    "a.jsonl.gz": as_jsonl,
    "a.csv.zst": as_csv,
}


@pytest.mark.parametrize("codec", sorted(BOMS))
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_bom_decides_the_encoding(tmp_path: Path, name: str, codec: str) -> None:
    data = BOMS[codec] + FORMATS[name]().encode(codec)
    assert [r.joined() for r in read(write(tmp_path / name, data))] == TEXTS


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-16", "utf-32", "utf-32-be"])
@pytest.mark.parametrize("name", ["a.txt", "a.jsonl", "a.csv", "a.json"])
def test_encoding_option_without_a_bom(tmp_path: Path, name: str, codec: str) -> None:
    # "utf-16"/"utf-32" without a BOM: the byte order comes from where the zeros are.
    body_codec = {"utf-16": "utf-16-le", "utf-32": "utf-32-le"}.get(codec, codec)
    data = FORMATS[name]().encode(body_codec)
    assert [r.joined() for r in read(write(tmp_path / name, data), encoding=codec)] == TEXTS


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("name", ["a.txt", "a.jsonl", "a.csv"])
def test_bomless_utf16_and_utf32_are_sniffed(tmp_path: Path, name: str, codec: str) -> None:
    data = FORMATS[name]().encode(codec)
    assert [r.joined() for r in read(write(tmp_path / name, data))] == TEXTS


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ("plain text\n".encode("utf-16-le"), "utf-16-le"),
        ("plain text\n".encode("utf-16-be"), "utf-16-be"),
        ("plain text\n".encode("utf-32-le"), "utf-32-le"),
        ("plain text\n".encode("utf-32-be"), "utf-32-be"),
        ("mostly 東京 text\n".encode("utf-16-le"), "utf-16-le"),
        (bytes(range(256)), None),  # control characters: binary
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", None),
        (b"text\x00\x00\x00\x00more", None),
        (b"ASCII text with one stray NUL\x00 in it, which must not read as CJK\n", None),
        (("plain English " * 3 + "\u4e00\u4e01\u4e03" * 2).encode("utf-16-le"), "utf-16-le"),
    ],
)
def test_sniff(head: bytes, expected: str | None) -> None:
    assert transcode.sniff(head) == expected


def test_binary_text_file_is_an_error_naming_encoding(tmp_path: Path) -> None:
    for name in ("b.txt", "b.md.gz"):
        err = fail(write(tmp_path / name, b"looks like text\n" * 10 + b"\x00\x01\x02"))
        assert "binary data" in err.problem
        assert err.hint is not None and "--encoding" in err.hint and "--skip-unreadable" in err.hint


@pytest.mark.parametrize(
    ("name", "lines"),
    [
        ("a.txt", ["line one", "line two", "bad {}"]),
        ("a.jsonl", ['{"text": "one"}', '{"text": "two"}', '{"text": "bad {}"}']),
        ("a.csv", ["text", "one", "bad {}"]),
    ],
)
def test_undecodable_bytes_name_the_line_and_the_file_offset(
    tmp_path: Path, name: str, lines: list[str]
) -> None:
    before, after = "\n".join(lines).encode("utf-16-le").split("{}".encode("utf-16-le"))
    surrogate = b"\x00\xdc"  # U+DC00 alone: not UTF-16
    data = codecs.BOM_UTF16_LE + before + surrogate + after + "\n".encode("utf-16-le")
    err = fail(write(tmp_path / name, data))
    assert err.line == 3
    assert f"byte offset {data.index(surrogate)} as utf-16-le" in err.problem
    assert err.hint is not None and "--errors replace" in err.hint


def test_errors_replace_substitutes_and_goes_on(tmp_path: Path) -> None:
    data = codecs.BOM_UTF16_LE + "a\nb ".encode("utf-16-le") + b"\x00\xdc" + "c\n".encode("utf-16-le")
    records = read(write(tmp_path / "a.txt", data), errors="replace")
    assert [r.joined() for r in records] == ["a\nb \ufffdc"]  # one paragraph


def test_a_truncated_code_unit_is_an_error(tmp_path: Path) -> None:
    data = codecs.BOM_UTF16_LE + "one\ntwo".encode("utf-16-le") + b"x"
    err = fail(write(tmp_path / "a.txt", data))
    assert err.line == 2 and f"byte offset {len(data) - 1}" in err.problem


def test_the_bom_wins_over_an_ascii_compatible_encoding(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", codecs.BOM_UTF16_LE + "café\n".encode("utf-16-le"))
    assert [r.joined() for r in read(path, encoding="latin-1")] == ["café"]
    path = write(tmp_path / "b.txt", codecs.BOM_UTF16_LE + "東京\n".encode("utf-16-le"))
    err = fail(path, encoding="latin-1")
    assert "U+6771 cannot be represented in --encoding latin-1" in err.problem


def test_whole_file_mode_reads_utf16(tmp_path: Path) -> None:
    data = codecs.BOM_UTF16_BE + as_text().encode("utf-16-be")
    records = read(write(tmp_path / "a.txt", data), whole_file=True)
    assert [r.joined() for r in records] == [as_text()]


def test_unknown_encoding_is_still_an_error(tmp_path: Path) -> None:
    err = fail(write(tmp_path / "a.jsonl", b'{"text": "x"}\n'), encoding="no-such-codec")
    assert "unknown text encoding" in err.problem


@pytest.mark.parametrize("name", ["e.jsonl.gz", "e.jsonl.zst", "e.txt.gz", "e.csv.zst", "e.json.gz"])
def test_a_zero_byte_compressed_file_is_corrupt(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    err = fail(path)
    kind = "gzip" if name.endswith(".gz") else "zstd"
    assert err.problem.startswith(f"empty {kind} file: not a valid {kind} stream")
    # The positive control: a compressed empty text is a valid, empty file.
    assert read(write(tmp_path / f"ok-{name}", b"")) == []


def test_a_zero_byte_parquet_file_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "e.parquet"
    path.write_bytes(b"")
    assert fail(path).problem.startswith("empty Parquet file")
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), tmp_path / "ok.parquet")
    assert read(tmp_path / "ok.parquet") == []  # no rows is fine


def test_parallel_plan_never_cuts_a_transcoded_file_into_byte_windows(tmp_path: Path) -> None:
    lines = "".join(f"line {i} of some filler text\n" for i in range(4000))
    utf8 = write(tmp_path / "a.txt", lines.encode())
    utf16 = write(tmp_path / "b.txt", codecs.BOM_UTF16_LE + lines.encode("utf-16-le"))
    sniffed = write(tmp_path / "c.txt", lines.encode("utf-16-le"))
    sources = [Source(p, p.name) for p in (utf8, utf16, sniffed)]
    chunks = plan(sources, ReadOptions(), jobs=2, min_window_bytes=1 << 12)
    windowed = {c.source.display for c in chunks if c.window is not None}
    assert windowed == {"a.txt"}  # the control: an UTF-8 file of that size is cut
    assert not transcodes(utf8, "utf-8") and transcodes(utf16, "utf-8") and transcodes(sniffed, "utf-8")
    explicit = plan([sources[0]], ReadOptions(encoding="utf-16-le"), jobs=2, min_window_bytes=1 << 12)
    assert all(c.window is None for c in explicit)


def test_records_are_numbered_as_in_utf8(tmp_path: Path) -> None:
    body = "first\n\n  \nsecond\r\nthird"
    utf8 = [(r.index, r.line, r.joined()) for r in read(write(tmp_path / "a.txt", body.encode()))]
    utf16 = list(read_records(write(tmp_path / "b.txt", body.encode("utf-16")), "b.txt", ReadOptions()))
    assert (
        [(r.index, r.line, r.joined()) for r in utf16] == utf8 == [(0, 1, "first"), (1, 4, "second\r\nthird")]
    )


def test_errors_are_input_errors_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read(write(tmp_path / "x.jsonl", codecs.BOM_UTF32_LE + b"\x00\x00\x11\x00"))  # beyond U+10FFFF
    assert info.value.path == "x.jsonl"


@pytest.mark.parametrize(("lines", "level"), [(20000, 9), (300, 0)])  # (300, 0): cut within the head
def test_corrupt_compression_under_utf16_names_the_line_after_the_good_ones(
    tmp_path: Path, lines: int, level: int
) -> None:
    body = "".join(f"line {i} of the text\n" for i in range(lines)).encode("utf-16")
    blob = gzip.compress(body, compresslevel=level)
    path = tmp_path / "a.txt.gz"
    path.write_bytes(blob[: len(blob) // 2])  # cut off: the first half decompresses
    with pytest.raises(InputError) as info:
        list(read_records(path, "a.txt.gz", ReadOptions(lines=True)))
    err = info.value
    assert "gzip data is corrupt or truncated" in err.problem
    records = []
    with pytest.raises(InputError):
        for record in read_records(path, "a.txt.gz", ReadOptions(lines=True)):
            records.append(record)
    assert err.line == len(records) + 1 > lines // 3  # every whole line before the cut was read
    # By paragraph (no blank line here: records cut by size), the same line, after every line read.
    paragraphs = []
    with pytest.raises(InputError) as info:
        for record in read_records(path, "a.txt.gz", ReadOptions()):
            paragraphs.append(record)
    assert info.value.line == err.line is not None
    spans: list[tuple[int, int]] = []
    for r in paragraphs:  # text lines: every record has its lines
        assert r.line is not None and r.last_line is not None
        spans.append((r.line, r.last_line))
    assert spans[0][0] == 1 and spans[-1][1] == err.line - 1
    assert all(after[0] == before[1] + 1 for before, after in itertools.pairwise(spans))
