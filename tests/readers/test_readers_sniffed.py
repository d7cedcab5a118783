"""Text by its bytes whatever its name, HTML and XML through the standard parser, notebooks by
cell, headerless CSV, and what cannot (or may, but cannot be read) hold text."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from contam_guard.errors import InputError
from contam_guard.io.readers import ReadOptions, Record, UnsupportedFileError, read_records
from contam_guard.io.readers.sniff import sniff

PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(32)


def records(path: Path, **opts: object) -> list[Record]:
    return list(read_records(path, path.name, ReadOptions(**opts)))  # type: ignore[arg-type]


def put(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(
    ("head", "fmt"),
    [
        (b'{"text": "a"}\n{"text": "b"}\n', "jsonl"),
        (b'  [ {"text": "a"} ]', "json"),
        (b"[1] Introduction\nwords", "text"),
        (b"{ not json at all", "text"),
        (b"<!DOCTYPE html><p>x</p>", "markup"),
        (b"<?xml version='1.0'?><a/>", "markup"),
        (codecs.BOM_UTF16_LE + "plain words".encode("utf-16-le"), "text"),
        ("plain words".encode("utf-16-le"), "text"),  # no BOM: sniffed as the opener sniffs it
        (b"caf\xe9 in latin-1", "text"),  # the text reader says which byte, and --encoding
        (b"\x1f\x8b\x08\x00", "gzip"),
        (b"PK\x03\x04" + bytes(30), "zip"),
        (bytes(257) + b"ustar\x0000" + bytes(250), "tar"),
        (b"PAR1" + bytes(20), "parquet"),
        (b"ORC" + bytes(20), "orc"),
        (b"\xff\xff\xff\xff\x10\x00\x00\x00" + bytes(20), "arrow"),
    ],
)
def test_what_bytes_are_read_as(head: bytes, fmt: str) -> None:
    assert sniff(head).format == fmt


@pytest.mark.parametrize(
    ("head", "name", "kind"),
    [
        (PNG, "x", "image/png"),
        (b"RIFF\x24\x08\x00\x00WAVEfmt " + bytes(64), "x", "audio/wave"),
        (b"GGUF\x03\x00\x00\x00" + bytes(64), "x", "model weights (GGUF)"),
        ((30).to_bytes(8, "little") + b'{"__metadata__":{}}' + bytes(20), "x", "model weights (safetensors)"),
        (
            b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False}" + bytes(8),
            "x",
            "a NumPy array of numbers",
        ),
        (bytes(range(256)), "model.onnx", "model weights (by its .onnx name)"),
        (b"\x89PNG", "cut.png", "image/png (by its name)"),  # binary, too short for its magic
    ],
)
def test_what_cannot_hold_text(head: bytes, name: str, kind: str) -> None:
    assert sniff(head, name).kind == kind


@pytest.mark.parametrize(
    ("head", "what"),
    [
        (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(64), "application/pdf"),
        (b"SQLite format 3\x00" + bytes(64), "SQLite"),
        (b"\x80\x04\x95" + bytes(30), "a Python pickle"),
        (bytes(range(256)), "binary data of no kind contam-guard knows"),
    ],
)
def test_what_may_hold_text_but_cannot_be_read(head: bytes, what: str) -> None:
    found = sniff(head, "x")
    assert found.unreadable is not None and what in found.unreadable


@pytest.mark.parametrize("name", ["README", "notes.data", "LICENSE.txt.bak", "Dockerfile"])
def test_any_name_holding_text_is_read_as_text(tmp_path: Path, name: str) -> None:
    path = put(tmp_path / name, "first line\n\nsecond line\n")
    assert [(r.line, r.joined()) for r in records(path)] == [(1, "first line"), (3, "second line")]


def test_jsonl_without_its_suffix_is_read_as_jsonl(tmp_path: Path) -> None:
    path = put(tmp_path / "part-00000", '{"text": "a record"}\n')
    assert [(r.line, [s.path for s in r.segments]) for r in records(path)] == [(1, ["{key}", "text"])]


def test_a_file_that_cannot_hold_text_is_skipped_by_kind(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFileError, match=r"image/png: cannot hold text, not read"):
        records(put(tmp_path / "photo", PNG))


def test_a_file_that_may_hold_text_but_cannot_be_read_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        records(put(tmp_path / "paper.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(64)))
    assert not isinstance(info.value, UnsupportedFileError)
    assert "may hold text" in info.value.problem and info.value.hint and "scan.exclude" in info.value.hint


def test_text_in_another_encoding_says_how_to_read_it(tmp_path: Path) -> None:
    path = put(tmp_path / "notes", "café\n".encode("latin-1"))
    with pytest.raises(InputError, match="cannot decode byte") as info:
        records(path)
    assert info.value.hint and "--encoding" in info.value.hint
    assert [r.joined() for r in records(path, encoding="latin-1")] == ["café"]


HTML = """<!DOCTYPE html>
<html><head><title>A page</title><meta name="description" content="meta words here">
<style>.x { color: red }</style><script>var prompt = "inside a script";</script></head>
<body><p>Brisket&nbsp;Cove lights thirty&#45;two lamp<b>s</b> &amp; <span>copper</span>kettles</p>
<img src="a.png" alt="alt text of a picture"><!-- a comment --></body></html>
"""


def test_html_entities_decoded_tags_are_word_boundaries_and_attributes_read(tmp_path: Path) -> None:
    [record] = records(put(tmp_path / "page.html", HTML))
    text = " ".join(record.segments[0].text.split())
    assert "Brisket Cove lights thirty-two lamp s & copper kettles" in text  # &nbsp; is a space
    assert "inside a script" in text and "a comment" in text and "A page" in text
    assert [(s.path, s.text) for s in record.segments[1:]] == [
        ("@name", "description"),
        ("@content", "meta words here"),
        ("@src", "a.png"),
        ("@alt", "alt text of a picture"),
    ]
    assert (record.source, record.index, record.line) == ("page.html", 0, 1)


def test_xml_with_cdata_and_references(tmp_path: Path) -> None:
    xml = "<?xml version='1.0'?><doc><q>one &lt;two&gt;</q><![CDATA[three <four>]]><r a='attr'/></doc>"
    [record] = records(put(tmp_path / "feed.xml", xml))
    assert " ".join(record.segments[0].text.split()) == "one <two> three <four>"
    assert [(s.path, s.text) for s in record.segments[1:]] == [("@a", "attr")]


def test_html_in_utf16_and_with_a_bad_byte(tmp_path: Path) -> None:
    path = put(tmp_path / "p.htm", codecs.BOM_UTF16_LE + "<p>wide text</p>".encode("utf-16-le"))
    assert records(path)[0].segments[0].text.split() == ["wide", "text"]
    bad = put(tmp_path / "bad.html", b"<p>ok \xff</p>")
    with pytest.raises(InputError, match="cannot decode byte") as info:
        records(bad)
    assert info.value.path == "bad.html"


def test_notebook_cells_join_their_lines(tmp_path: Path) -> None:
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["A question wrapped\n", "over two lines"]},
            {
                "cell_type": "code",
                "source": "print(1)",
                "outputs": [
                    {"output_type": "stream", "text": ["printed ", "out"]},
                    {"output_type": "execute_result", "data": {"text/plain": ["a ", "result"]}},
                ],
            },
        ],
        "metadata": {"title": "the notebook's title"},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = put(tmp_path / "nb.ipynb", json.dumps(notebook))
    found = records(path)
    values = [[s.text for s in r.segments if not s.path.endswith("{key}")] for r in found]
    assert values == [
        ["markdown", "A question wrapped\nover two lines"],
        ["code", "print(1)", "stream", "printed out", "execute_result", "a result"],
        ["the notebook's title"],
    ]
    assert [r.joined() for r in records(path, fields=("source",))] == [
        "A question wrapped\nover two lines",
        "print(1)",
    ]
    with pytest.raises(InputError, match="not a Jupyter notebook"):
        records(put(tmp_path / "x.ipynb", "[1, 2]"))


def test_headerless_csv_header_is_record_zero(tmp_path: Path) -> None:
    path = put(tmp_path / "t.csv", "7,a copied question in row one\n8,another row\n")
    assert [(r.index, r.line, [(s.path, s.text) for s in r.segments]) for r in records(path)] == [
        (0, 1, [("{key}", "7"), ("{key}", "a copied question in row one")]),
        (1, 2, [("7", "8"), ("a copied question in row one", "another row")]),
    ]
    long_name = "x" * 60
    path = put(tmp_path / "u.csv", f"id,{long_name}\n1,text\n")
    assert records(path)[1].segments[1].path == "x" * 39 + "…"  # a long name, cut as a JSON key is


def test_csv_header_with_field_and_golden_reads(tmp_path: Path) -> None:
    path = put(tmp_path / "t.tsv", "id\tquestion\n1\tthe item\n")
    assert [[(s.path, s.text) for s in r.segments] for r in records(path, fields=("question",))] == [
        [("{key}", "question")],
        [("question", "the item")],
    ]
    golden = records(path, fields=("question",), names=False)
    assert [(r.index, r.line, r.joined()) for r in golden] == [(0, 2, "the item")]
    assert [r.item_id for r in records(path, fields=("question",), id_field="id")] == ["1"]


def test_a_json_document_is_one_record_of_training_data(tmp_path: Path) -> None:
    """A config or a dump holding one object is read whole; a golden set must still be an array."""
    path = put(tmp_path / "package.json", '{"name": "pkg", "description": "words", "n": 3}')
    [record] = records(path)
    assert [(s.path, s.text) for s in record.segments if not s.path.endswith("{key}")] == [
        ("name", "pkg"),
        ("description", "words"),
    ]
    assert [r.joined() for r in records(path, fields=("description",))] == ["words"]
    with pytest.raises(InputError, match="top-level JSON value is an object, expected an array"):
        records(path, detect_shape=True)
