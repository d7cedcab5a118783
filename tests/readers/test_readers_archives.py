"""Archives and compressed files: real zip, tar, gzip, xz, bzip2, lz4 and zstd data written by
the standard library and the compressors' own packages, read member by member."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import tarfile
import zipfile
from pathlib import Path

import lz4.frame
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from contam_guard.errors import InputError
from contam_guard.io.readers import ReadOptions, Record, notes, read_records
from tests.helpers import tar_bytes, zip_bytes

JSONL = b'{"text": "alpha beta"}\n{"text": "gamma delta"}\n'
PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(32)


def records(path: Path, **opts: object) -> list[Record]:
    return list(read_records(path, path.name, ReadOptions(**opts)))  # type: ignore[arg-type]


def text(record: Record) -> str:
    """A record's strings but its keys (JSON keys and column names are read too)."""
    return "\n".join(s.text for s in record.segments if not s.path.endswith("{key}"))


def where(found: list[Record]) -> list[tuple[str, int | None, str]]:
    return [(r.source, r.line, text(r)) for r in found]


COMPRESS = {
    "gz": gzip.compress,
    "gzip": gzip.compress,
    "xz": lzma.compress,
    "bz2": bz2.compress,
    "lz4": lz4.frame.compress,
    "zst": zstandard.ZstdCompressor().compress,
    "zstd": zstandard.ZstdCompressor().compress,
}


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
def test_every_compressor_with_an_inner_suffix(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"t.jsonl.{suffix}"
    path.write_bytes(COMPRESS[suffix](JSONL))
    assert where(records(path)) == [(path.name, 1, "alpha beta"), (path.name, 2, "gamma delta")]


@pytest.mark.parametrize("suffix", ["gz", "xz", "bz2", "lz4", "zst"])
def test_without_an_inner_suffix_the_content_decides(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"dump.{suffix}"
    path.write_bytes(COMPRESS[suffix](JSONL))
    assert [(r.line, text(r)) for r in records(path)] == [(1, "alpha beta"), (2, "gamma delta")]
    path.write_bytes(COMPRESS[suffix](b"plain words on a line\n"))
    assert [r.joined() for r in records(path)] == ["plain words on a line"]


def test_compressed_under_another_name_and_twice_over(tmp_path: Path) -> None:
    hidden = tmp_path / "data.bin"
    hidden.write_bytes(gzip.compress(JSONL))  # gzip, named as nothing in particular
    assert [text(r) for r in records(hidden)] == ["alpha beta", "gamma delta"]
    twice = tmp_path / "t.jsonl.gz.zst"
    twice.write_bytes(zstandard.ZstdCompressor().compress(gzip.compress(JSONL)))
    assert [text(r) for r in records(twice)] == ["alpha beta", "gamma delta"]


@pytest.mark.parametrize("suffix", ["xz", "bz2", "lz4"])
def test_corrupt_new_compressions_name_the_file_and_line(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"t.jsonl.{suffix}"
    path.write_bytes(COMPRESS[suffix](JSONL * 200)[:-30])
    with pytest.raises(InputError) as info:
        records(path)
    assert info.value.path == path.name
    assert "corrupt or truncated" in info.value.problem


def test_zip_members_are_named_in_order_with_their_own_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    members = {"inner/b.jsonl": JSONL, "inner/a.txt": b"one\n\ntwo\n", "folder/": b""}
    path.write_bytes(zip_bytes(members))
    assert where(records(path)) == [
        ("a.zip:inner/b.jsonl", 1, "alpha beta"),
        ("a.zip:inner/b.jsonl", 2, "gamma delta"),
        ("a.zip:inner/a.txt", 1, "one"),
        ("a.zip:inner/a.txt", 3, "two"),
    ]


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:xz", "w:bz2"])
def test_tar_in_every_compression(tmp_path: Path, mode: str) -> None:
    suffix = {"w": ".tar", "w:gz": ".tar.gz", "w:xz": ".tar.xz", "w:bz2": ".tar.bz2"}[mode]
    path = tmp_path / f"a{suffix}"
    path.write_bytes(tar_bytes({"d/t.jsonl": JSONL}, mode))
    assert where(records(path))[1] == (f"a{suffix}:d/t.jsonl", 2, "gamma delta")


@pytest.mark.parametrize(("name", "compress"), [("a.tgz", gzip.compress), ("a.tar.zst", COMPRESS["zst"])])
def test_tar_shorthands_and_zstd(tmp_path: Path, name: str, compress: object) -> None:
    path = tmp_path / name
    path.write_bytes(compress(tar_bytes({"t.csv": b"id,text\n1,hello there\n"})))  # type: ignore[operator]
    assert [r.joined() for r in records(path)] == ["id\ntext", "1\nhello there"]  # the header is text


def test_tar_links_devices_and_folders_hold_no_data(tmp_path: Path) -> None:
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w") as archive:
        info = tarfile.TarInfo("t.jsonl")
        info.size = len(JSONL)
        archive.addfile(info, io.BytesIO(JSONL))
        for kind, name in ((tarfile.SYMTYPE, "to-passwd"), (tarfile.LNKTYPE, "hard"), (tarfile.DIRTYPE, "d")):
            link = tarfile.TarInfo(name)
            link.type = kind
            link.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else "t.jsonl"
            archive.addfile(link)
    path = tmp_path / "a.tar"
    path.write_bytes(sink.getvalue())
    assert [r.source for r in records(path)] == ["a.tar:t.jsonl", "a.tar:t.jsonl"]


def test_hostile_names_are_shown_escaped_and_never_used_as_paths(tmp_path: Path) -> None:
    path = tmp_path / "a.tar"
    path.write_bytes(
        tar_bytes({"../../up.jsonl": JSONL, "/abs.jsonl": JSONL, "evil\n\x1b[2Jname.txt": b"x\n"})
    )
    assert sorted({r.source for r in records(path)}) == [
        "a.tar:../../up.jsonl",
        "a.tar:/abs.jsonl",
        "a.tar:evil\\x0a\\x1b[2Jname.txt",
    ]
    assert sorted(p.name for p in tmp_path.parent.iterdir() if p.name.endswith("up.jsonl")) == []


def test_archives_inside_archives_up_to_the_depth_limit(tmp_path: Path) -> None:
    inner = zip_bytes({"t.jsonl": JSONL})
    path = tmp_path / "outer.tar.gz"
    path.write_bytes(tar_bytes({"mid.tar": tar_bytes({"in.zip": inner})}, "w:gz"))
    assert records(path)[0].source == "outer.tar.gz:mid.tar:in.zip:t.jsonl"
    deeper = tmp_path / "deeper.zip"
    deeper.write_bytes(zip_bytes({"x.tar.gz": path.read_bytes()}))
    with pytest.raises(InputError, match="nested more than 3 archives deep") as info:
        records(deeper)
    assert info.value.path == "deeper.zip:x.tar.gz:mid.tar:in.zip"


def test_tables_inside_archives(tmp_path: Path) -> None:
    sink = io.BytesIO()
    pq.write_table(pa.table({"text": ["in a parquet member"]}), sink)
    path = tmp_path / "a.zip"
    path.write_bytes(
        zip_bytes({"p/t.parquet": sink.getvalue(), "t.parquet.gz": gzip.compress(sink.getvalue())})
    )
    found = records(path)
    assert [(r.source, r.joined()) for r in found] == [
        ("a.zip:p/t.parquet", "text\nin a parquet member"),  # the column name, then the value
        ("a.zip:t.parquet.gz", "text\nin a parquet member"),
    ]


def test_members_that_hold_no_text_are_noted_by_kind(tmp_path: Path) -> None:
    notes.take()
    path = tmp_path / "a.zip"
    path.write_bytes(zip_bytes({"img/1.png": PNG, "img/2.png": PNG, "t.jsonl": JSONL}))
    assert [r.source for r in records(path)] == ["a.zip:t.jsonl"] * 2
    assert notes.take() == ["image/png: cannot hold text, not read: a.zip:img/1.png, a.zip:img/2.png"]


def test_a_torch_checkpoint_is_model_weights(tmp_path: Path) -> None:
    notes.take()
    path = tmp_path / "model.pt"
    path.write_bytes(
        zip_bytes({"model/data.pkl": b"\x80\x02}q\x00.", "model/data/0": bytes(64), "model/version": b"3\n"})
    )
    assert records(path) == []
    assert notes.take() == ["PyTorch checkpoint (model weights): cannot hold text, not read: model.pt"]


def test_a_member_that_may_hold_text_but_cannot_be_read_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    path.write_bytes(zip_bytes({"paper.pdf": b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(64)}))
    with pytest.raises(InputError, match="may hold text") as info:
        records(path)
    assert info.value.path == "a.zip:paper.pdf"


def test_a_member_past_the_cap_is_an_error_not_a_pass(tmp_path: Path) -> None:
    """The cap on what one member may inflate to, on a gzip member inside a tar (counted while
    reading) and on a zip member (its header's size, before reading)."""
    big = b'{"text": "x"}\n' * 1000
    path = tmp_path / "a.tar"
    path.write_bytes(tar_bytes({"t.jsonl.gz": gzip.compress(big)}))
    with pytest.raises(InputError, match="inflates past 5,000 bytes") as info:
        records(path, max_member_bytes=5000)
    assert info.value.path == "a.tar:t.jsonl.gz"
    assert len(records(path, max_member_bytes=len(big))) == 1000
    zipped = tmp_path / "a.zip"
    zipped.write_bytes(zip_bytes({"t.jsonl": big}))
    with pytest.raises(InputError, match="inflates past"):
        records(zipped, max_member_bytes=5000)


def test_a_zip_bomb_is_refused_from_its_header(tmp_path: Path) -> None:
    """A member whose header claims far more than deflate can give: the central directory
    rewritten (zip64) to say 1 TiB, as a crafted bomb does; refused before any inflating."""
    path = tmp_path / "bomb.zip"
    path.write_bytes(zip_bytes({"b.txt": b"a" * 1000}))
    with zipfile.ZipFile(path, "a") as archive:
        archive.filelist[0].file_size = 1 << 40
        # typeshed leaves ZipFile's private flag out: set, it writes the central directory again
        archive._didModify = True  # type: ignore[attr-defined]  # (with the claimed size)
    with pytest.raises(InputError, match="decompression bomb") as info:
        records(path)
    assert info.value.path == "bomb.zip:b.txt"


def test_an_encrypted_member_is_an_error(tmp_path: Path) -> None:
    data = bytearray(zip_bytes({"t.jsonl": JSONL}, zipfile.ZIP_STORED))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # the flag bit 0, both headers
        at = data.find(signature) + offset
        data[at] |= 1
    path = tmp_path / "a.zip"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="encrypted"):
        records(path)


def test_corrupt_and_empty_archives(tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04" + bytes(60))
    with pytest.raises(InputError, match="not a zip archive"):
        records(bad)
    empty = tmp_path / "empty.zip"
    empty.write_bytes(zip_bytes({}))
    assert records(empty) == []
    cut = tmp_path / "cut.tar"
    cut.write_bytes(tar_bytes({"t.jsonl": JSONL * 100})[:900])
    with pytest.raises(InputError) as info:
        records(cut)
    assert info.value.path.startswith("cut.tar")


def test_fields_apply_inside_archives(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    path.write_bytes(zip_bytes({"t.jsonl": b'{"prompt": "p words", "answer": "a words"}\n'}))
    assert [r.joined() for r in records(path, fields=("answer",))] == ["a words"]
    with pytest.raises(InputError) as info:
        records(path, fields=("missing",))
    assert info.value.path == "a.zip:t.jsonl"


def test_json_member_with_its_own_name(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    path.write_bytes(zip_bytes({"arr.json": json.dumps([{"text": "from an array"}]).encode()}))
    assert [(r.source, text(r)) for r in records(path)] == [("a.zip:arr.json", "from an array")]
