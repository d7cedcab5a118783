"""Silent passes of the readers (hostile round 2): headerless CSV/TSV, Parquet and Arrow text
stored as binary or as a column name, and every format a folder walk used to leave out with only
a notice (Arrow IPC, Feather, a ``datasets`` folder, ORC, archives, single-file compressors,
code and web text). Each row writes a real file (pyarrow, ``datasets``' own ``save_to_disk``,
zipfile/tarfile/lzma/bz2/lz4/zstandard) holding the long golden item and runs the real CLI.

``was`` is what main gave before these readers (commit a336b46), measured with the same rows.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import os
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import lz4.frame
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from pyarrow import feather, orc

from tests.helpers import tar_bytes, zip_bytes
from tests.security.hostile import CLEAN, LONG, Row, copy_project, make_project, put, run_row

JSONL = (json.dumps({"text": CLEAN}) + "\n" + json.dumps({"text": f"copied: {LONG}"}) + "\n").encode()
FAIL = ("FAIL",)


def _scan(*paths: str, extra: tuple[str, ...] = ()) -> list[str]:
    return ["scan", *paths, *extra]


def _file(name: str, data: bytes | str | Callable[[], bytes], *extra: str) -> Callable[[Path], list[str]]:
    """Write ``data`` at ``data/NAME`` and scan the folder ``data``."""

    def build(root: Path) -> list[str]:
        put(root, Path("data") / name, data() if callable(data) else data)
        return _scan("data", extra=extra)

    return build


def _named(name: str, data: bytes | str | Callable[[], bytes], *extra: str) -> Callable[[Path], list[str]]:
    """Write ``data`` at ``NAME`` and scan that file by name."""

    def build(root: Path) -> list[str]:
        put(root, name, data() if callable(data) else data)
        return _scan(name, extra=extra)

    return build


def _csv(rows: list[list[str]], delimiter: str = ",") -> bytes:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _table_bytes(table: pa.Table, write: Callable[[pa.Table, io.BytesIO], None]) -> bytes:
    sink = io.BytesIO()
    write(table, sink)
    return sink.getvalue()


def _parquet(table: pa.Table) -> bytes:
    return _table_bytes(table, pq.write_table)


def _arrow_file(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def _feather(table: pa.Table) -> bytes:
    return _table_bytes(table, feather.write_feather)


def _orc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    orc.write_table(table, sink)
    return bytes(sink.getvalue())


def _text_table() -> pa.Table:
    return pa.table({"id": [1, 2], "text": [CLEAN, f"copied: {LONG}"]})


def _binary_table(kind: pa.DataType) -> pa.Table:
    return pa.table({"id": [1, 2], "blob": pa.array([CLEAN.encode(), f"copied: {LONG}".encode()], kind)})


def _datasets_folder(root: Path) -> list[str]:
    """``datasets.Dataset.save_to_disk``: Arrow stream shards, state.json, dataset_info.json."""
    import datasets  # noqa: PLC0415 (slow to import: only for this row)

    rows = {"prompt": [CLEAN] * 3 + [f"copied: {LONG}"], "n": [1, 2, 3, 4]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(root / "data" / "sft"), num_shards=2)
    return _scan("data")


HTML = (
    "<!DOCTYPE html><html><head><title>forum</title></head><body><p>"
    + LONG.replace("harbour town", "harbour&nbsp;<b>town</b>")
    .replace("lamplighter", "lamplight&#101;r")
    .replace("copper lamps", "copper<span> </span>lamps")
    + "</p></body></html>\n"
)
PY = f'"""Examples."""\n\nPROMPT = {LONG!r}\n\n\ndef ask() -> str:\n    return PROMPT\n'


ROWS = [
    # 22.3: header cells are text.
    Row("csv-headerless-leak-in-row-1", _file("t.csv", _csv([["7", LONG], ["8", CLEAN]])), 1, 0, FAIL),
    Row("tsv-headerless-leak-in-row-1", _file("t.tsv", _csv([[LONG, "7"], [CLEAN, "8"]], "\t")), 1, 0, FAIL),
    Row("csv-header-is-the-leak", _named("t.csv", _csv([["id", LONG], ["1", CLEAN]])), 1, 0, FAIL),
    Row(
        "csv-header-is-the-leak-with-field",
        _named("t.csv", _csv([["id", LONG], ["1", CLEAN]]), "--field", LONG),
        1,
        0,
        FAIL,
    ),
    # 22.4: Parquet (and Arrow) text stored as binary, and column names.
    Row(
        "parquet-binary-column", _file("t.parquet", lambda: _parquet(_binary_table(pa.binary()))), 1, 0, FAIL
    ),
    Row(
        "parquet-large-binary-column",
        _file("t.parquet", lambda: _parquet(_binary_table(pa.large_binary()))),
        1,
        0,
        FAIL,
    ),
    Row(
        "parquet-binary-with-field",
        _named("t.parquet", lambda: _parquet(_binary_table(pa.binary())), "--field", "blob"),
        1,
        2,
        FAIL,
    ),
    Row(
        "parquet-column-name",
        _file("t.parquet", lambda: _parquet(pa.table({LONG: [1, 2], "text": [CLEAN, CLEAN]}))),
        1,
        0,
        FAIL,
    ),
    Row(
        "parquet-binary-not-text-is-told",
        _file("t.parquet", lambda: _parquet(pa.table({"blob": pa.array([b"\x89PNG\r\n\x1a\n\0\0"])}))),
        0,
        0,
        ("not UTF-8 text",),
    ),
    # 22.5: formats a folder walk used to leave out.
    Row("arrow-ipc-file", _file("t.arrow", lambda: _arrow_file(_text_table())), 1, 0, FAIL),
    Row("feather-v2", _file("t.feather", lambda: _feather(_text_table())), 1, 0, FAIL),
    Row(
        "feather-binary-column", _file("t.feather", lambda: _feather(_binary_table(pa.binary()))), 1, 0, FAIL
    ),
    Row("datasets-save-to-disk", _datasets_folder, 1, 2, ("data/sft",)),
    Row("orc", _file("t.orc", lambda: _orc(_text_table())), 1, 0, FAIL),
    Row("jsonl-xz", _file("t.jsonl.xz", lambda: lzma.compress(JSONL)), 1, 0, FAIL),
    Row("jsonl-bz2", _file("t.jsonl.bz2", lambda: bz2.compress(JSONL)), 1, 0, FAIL),
    Row("jsonl-lz4", _file("t.jsonl.lz4", lambda: lz4.frame.compress(JSONL)), 1, 0, FAIL),
    Row("jsonl-gzip-suffix", _file("t.jsonl.gzip", lambda: gzip.compress(JSONL)), 1, 0, FAIL),
    Row(
        "jsonl-zstd-suffix",
        _file("t.jsonl.zstd", lambda: zstandard.ZstdCompressor().compress(JSONL)),
        1,
        0,
        FAIL,
    ),
    Row("gz-without-inner-suffix", _file("dump.gz", lambda: gzip.compress(JSONL)), 1, 0, FAIL),
    Row(
        "zst-without-inner-suffix",
        _file("dump.zst", lambda: zstandard.ZstdCompressor().compress(JSONL)),
        1,
        0,
        FAIL,
    ),
    Row("xz-without-inner-suffix", _file("dump.xz", lambda: lzma.compress(JSONL)), 1, 0, FAIL),
    Row(
        "zip",
        _file("t.zip", lambda: zip_bytes({"inner/clean.txt": CLEAN.encode(), "inner/train.jsonl": JSONL})),
        1,
        0,
        ("data/t.zip:inner/train.jsonl",),
    ),
    Row(
        "tar",
        _file("t.tar", lambda: tar_bytes({"inner/train.jsonl": JSONL})),
        1,
        0,
        ("data/t.tar:inner/train.jsonl",),
    ),
    Row(
        "tar-gz",
        _file("t.tar.gz", lambda: tar_bytes({"inner/train.jsonl": JSONL}, "w:gz")),
        1,
        0,
        ("data/t.tar.gz:inner/train.jsonl",),
    ),
    Row("tgz", _file("t.tgz", lambda: tar_bytes({"a/b.txt": f"x\n{LONG}\n".encode()}, "w:gz")), 1, 0, FAIL),
    Row(
        "zip-in-tar",
        _file("t.tar", lambda: tar_bytes({"nested.zip": zip_bytes({"deep/train.jsonl": JSONL})})),
        1,
        0,
        ("data/t.tar:nested.zip:deep/train.jsonl",),
    ),
    Row(
        "zip-member-parquet",
        _file("t.zip", lambda: zip_bytes({"part.parquet": _parquet(_text_table())})),
        1,
        0,
        ("data/t.zip:part.parquet",),
    ),
    Row("python-source", _file("prompts.py", PY), 1, 0, FAIL),
    Row("html-entities-and-tags", _file("page.html", HTML), 1, 0, FAIL),
    Row("xml", _file("feed.xml", f"<?xml version='1.0'?><doc><q>{LONG}</q></doc>\n"), 1, 0, FAIL),
    Row("tex", _file("paper.tex", f"\\section{{Intro}}\n{LONG}\n"), 1, 0, FAIL),
    Row("rst", _file("notes.rst", f"Notes\n=====\n\n{LONG}\n"), 1, 0, FAIL),
    Row("yaml", _file("cfg.yaml", f"prompt: {json.dumps(LONG)}\n"), 1, 0, FAIL),
    Row(
        "ipynb",
        _file(
            "nb.ipynb",
            json.dumps(
                {
                    "cells": [{"cell_type": "markdown", "metadata": {}, "source": [LONG[:70], LONG[70:]]}],
                    "metadata": {},
                    "nbformat": 4,
                    "nbformat_minor": 5,
                }
            ),
        ),
        1,
        0,
        FAIL,
    ),
    Row("text-without-suffix", _file("README", f"{CLEAN}\n{LONG}\n"), 1, 0, FAIL),
    Row("text-with-odd-suffix", _file("dump.data", f"{CLEAN}\n{LONG}\n"), 1, 0, FAIL),
    Row("html-without-suffix", _named("page", HTML), 1, 0, FAIL),
    # What cannot hold text is listed by kind; what may but cannot be read is exit 2.
    Row(
        "image-is-listed-by-kind",
        _file("cat.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(64)),
        0,
        0,
        ("image/png", "cannot hold text"),
    ),
    Row(
        "pdf-cannot-be-read",
        _file("paper.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(64)),
        2,
        0,
        ("paper.pdf",),
    ),
    Row(
        "pdf-with-skip-unreadable",
        _file("paper.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(64), "--skip-unreadable"),
        0,
        0,
        ("paper.pdf",),
    ),
    Row("unknown-binary-cannot-be-read", _file("blob.bin", bytes(range(256)) * 4), 2, 0, ("blob.bin",)),
]


def _zip_bomb() -> bytes:
    """A member whose central directory claims 1 TiB (zip64), as a crafted bomb's does: refused
    from the header, before any inflating."""
    sink = io.BytesIO(zip_bytes({"big.txt": b"a " * 1000}))
    with zipfile.ZipFile(sink, "a") as archive:
        archive.filelist[0].file_size = 1 << 40
        # typeshed leaves ZipFile's private flag out: set, it writes the central directory again
        archive._didModify = True  # type: ignore[attr-defined]  # (with the claimed size)
    return sink.getvalue()


def _traversal(root: Path) -> list[str]:
    put(root, "data/evil.tar", tar_bytes({"../../escaped.jsonl": JSONL, "/abs/evil.jsonl": JSONL}))
    return _scan("data")


def _nothing_escaped(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert not (root.parent / "escaped.jsonl").exists()
    assert not Path("/abs/evil.jsonl").exists()


def _deep(levels: int) -> bytes:
    data = JSONL
    name = "train.jsonl"
    for level in range(levels):
        data, name = zip_bytes({name: data}), f"level{level}.zip"
    return data


def _scrub_xz(root: Path) -> list[str]:
    put(root, "t.jsonl.xz", lzma.compress(JSONL))
    return ["scrub", "t.jsonl.xz", "--in-place"]


def _xz_untouched(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert lzma.decompress((root / "t.jsonl.xz").read_bytes()) == JSONL


def _zip_bad_member_first(root: Path) -> list[str]:
    put(root, "data/a.zip", zip_bytes({"a/paper.pdf": b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(64)}))
    put(root, "data/b.jsonl", JSONL)
    return _scan("data", extra=("--skip-unreadable",))


# --field and --skip-unreadable on the new formats; --jobs reads them as one process does.
OPTIONS = [
    Row(
        "zip-member-with-field",
        _named("t.zip", lambda: zip_bytes({"inner/train.jsonl": JSONL}), "--field", "text"),
        1,
        0,
        ("t.zip:inner/train.jsonl",),
    ),
    Row(
        "zip-member-with-missing-field",
        _named("t.zip", lambda: zip_bytes({"inner/train.jsonl": JSONL}), "--field", "prompt"),
        2,
        0,
        ("t.zip:inner/train.jsonl", "prompt"),
    ),
    Row("html-with-field-reads-the-page", _named("page.html", HTML, "--field", "text"), 1, 0, FAIL),
    Row(
        "feather-with-field",
        _named("t.feather", lambda: _feather(_text_table()), "--field", "text"),
        1,
        0,
        FAIL,
    ),
    Row(
        "skip-unreadable-goes-on-after-a-bad-archive",
        _zip_bad_member_first,
        1,
        1,  # the zip was left out silently; now its member is named as unreadable
        ("data/a.zip:a/paper.pdf", "--skip-unreadable"),
    ),
    Row(
        "archives-with-jobs-2",
        _file(
            "t.tar.gz",
            lambda: tar_bytes(
                {"inner/train.jsonl": JSONL, "img.png": b"\x89PNG\r\n\x1a\n" + bytes(40)}, "w:gz"
            ),
            "--jobs",
            "2",
        ),
        1,
        0,
        ("data/t.tar.gz:inner/train.jsonl", "data/t.tar.gz:img.png"),
    ),
    Row("scrub-refuses-to-write-xz-as-plain-text", _scrub_xz, 2, 2, (".xz",), check=_xz_untouched),
]
ROWS += OPTIONS

HOSTILE = [
    Row("zip-bomb-header", _file("bomb.zip", _zip_bomb), 2, 0, ("bomb.zip:big.txt", "decompression bomb")),
    Row(
        "tar-path-traversal-names-are-read-never-written",
        _traversal,
        1,
        0,
        ("data/evil.tar:../../escaped.jsonl",),
        check=_nothing_escaped,
    ),
    Row("nested-archives-three-deep", _file("deep.zip", lambda: _deep(3)), 1, 0, FAIL),
    Row("nested-archives-too-deep", _file("deep.zip", lambda: _deep(5)), 2, 0, ("nested",)),
    Row("corrupt-zip", _file("bad.zip", b"PK\x03\x04" + bytes(40)), 2, 0, ("bad.zip",)),
    Row(
        "truncated-tar-gz",
        _file("cut.tar.gz", lambda: tar_bytes({"a.jsonl": JSONL * 50}, "w:gz")[:-40]),
        2,
        0,
        ("cut.tar.gz",),
    ),
]
ROWS += HOSTILE


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("template") / "project")


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(row: Row, template: Path, tmp_path: Path) -> None:
    run_row(row, copy_project(template, tmp_path / "project"))


def test_rows_are_named_once() -> None:
    names = [row.name for row in ROWS]
    assert len(names) == len(set(names))
    assert os.sep == "/"  # the member spelling in findings is a POSIX path
