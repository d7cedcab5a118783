"""Tables written by pyarrow itself (Parquet, Arrow IPC file and stream, Feather 1 and 2, ORC)
and by ``datasets``' own ``save_to_disk``: binary text, column names, rows numbered in order."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import feather, orc

from contam_guard.errors import InputError
from contam_guard.io.readers import ReadOptions, Record, notes, read_records

Writer = Callable[[pa.Table, Path], None]


def _arrow_file(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _feather_v1(table: pa.Table, path: Path) -> None:
    with warnings.catch_warnings():  # pyarrow 25 deprecates writing Feather 1; files exist
        warnings.simplefilter("ignore", DeprecationWarning)
        feather.write_feather(table, path, version=1)


def _arrow_stream(table: pa.Table, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=1)  # a batch per row: rows count on across batches


WRITERS: dict[str, Writer] = {
    "t.parquet": lambda t, p: pq.write_table(t, p, row_group_size=1),
    "t.arrow": _arrow_file,
    "stream.arrow": _arrow_stream,
    "t.feather": feather.write_feather,
    "v1.feather": _feather_v1,
    "t.orc": orc.write_table,
}


def records(path: Path, **opts: object) -> list[Record]:
    return list(read_records(path, path.name, ReadOptions(**opts)))  # type: ignore[arg-type]


def segments(found: list[Record]) -> list[list[tuple[str, str]]]:
    return [[(s.path, s.text) for s in r.segments] for r in found]


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_text_binary_and_names_in_every_table_format(tmp_path: Path, name: str) -> None:
    table = pa.table(
        {
            "id": [1, 2],
            "text": ["first row", "second row"],
            "blob": pa.array([b"binary text", b"more"], pa.binary()),
        }
    )
    path = tmp_path / name
    WRITERS[name](table, path)
    found = records(path)
    assert [(r.index, r.line, r.source) for r in found] == [(0, None, name), (1, None, name)]
    assert segments(found) == [
        [
            ("{key}", "id"),
            ("{key}", "text"),
            ("{key}", "blob"),
            ("text", "first row"),
            ("blob", "binary text"),
        ],
        [("text", "second row"), ("blob", "more")],
    ]
    if name != "v1.feather":  # Feather 1 has no large_binary
        large = pa.table({"blob": pa.array([b"large binary text"], pa.large_binary())})
        WRITERS[name](large, path)
        assert segments(records(path)) == [[("{key}", "blob"), ("blob", "large binary text")]]


def test_binary_that_is_not_text_is_told_not_read(tmp_path: Path) -> None:
    notes.take()
    png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(16)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"blob": pa.array([b"fine text", png, b"\xff\xfe\x00bad"])}), path)
    assert [r.joined() for r in records(path)] == ["blob\nfine text", "", ""]
    assert notes.take() == [
        "t.parquet: column 'blob': 2 of 3 binary value(s) are not UTF-8 text (the first: image/png); not read"
    ]


def test_nested_binary_and_nested_names(tmp_path: Path) -> None:
    """``datasets``' Image feature is a struct of bytes and a path; chat turns are lists."""
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    turn = pa.struct([("role", pa.string()), ("content", pa.large_binary())])
    table = pa.table(
        {
            "image": pa.array([{"bytes": b"caption as bytes", "path": "a.png"}], image),
            "turns": pa.array([[{"role": "user", "content": b"hello there"}]], pa.list_(turn)),
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    [record] = records(path)
    assert [(s.path, s.text) for s in record.segments] == [
        ("{key}", "image"),
        ("image{key}", "bytes"),
        ("image{key}", "path"),
        ("{key}", "turns"),
        ("turns[]{key}", "role"),
        ("turns[]{key}", "content"),
        ("image{key}", "bytes"),
        ("image.bytes", "caption as bytes"),
        ("image{key}", "path"),
        ("image.path", "a.png"),
        ("turns[0]{key}", "role"),
        ("turns[0].role", "user"),
        ("turns[0]{key}", "content"),
        ("turns[0].content", "hello there"),
    ]
    [only] = records(path, fields=("turns[].content",))
    assert [(s.path, s.text) for s in only.segments] == [
        ("{key}", "turns"),
        ("turns[]{key}", "role"),
        ("turns[]{key}", "content"),
        ("turns[0].content", "hello there"),
    ]


def test_field_names_a_binary_column_and_its_header(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"q": pa.array([b"a question"]), "n": [3]}), path)
    assert segments(records(path, fields=("q",))) == [[("{key}", "q"), ("q", "a question")]]
    with pytest.raises(InputError, match="text column 'n' has type int64, expected string"):
        records(path, fields=("n",))


def test_a_table_without_rows_still_has_its_names_read(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a column named like a leak": pa.array([], pa.string())}), path)
    assert segments(records(path)) == [[("{key}", "a column named like a leak")]]


def test_golden_reads_take_rows_only(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": ["a"], "question": ["the item"]}), path)
    for opts in ({"names": False, "fields": ("question",)}, {"detect_shape": True}, {"id_field": "id"}):
        assert [r.segments[-1].text for r in records(path, **opts)] == ["the item"]
        assert all("{key}" not in s.path for r in records(path, **opts) for s in r.segments)


def test_datasets_save_to_disk_is_one_dataset(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = {"prompt": [f"row {i}" for i in range(5)], "answer": pa.array([b"x"] * 5).to_pylist()}
    folder = tmp_path / "sft"
    datasets.Dataset.from_dict(rows).save_to_disk(str(folder), num_shards=3)
    found = records(folder)
    assert [(r.source, r.index) for r in found] == [("sft", i) for i in range(5)]
    assert [s.text for s in found[0].segments if s.path == "{key}"] == ["prompt", "answer"]
    assert all(s.path != "{key}" for r in found[1:] for s in r.segments)  # names once, not per shard
    assert [r.segments[-2].text for r in found] == [f"row {i}" for i in range(5)]
    assert datasets.load_from_disk(str(folder))["prompt"] == [f"row {i}" for i in range(5)]  # same order


def test_a_broken_datasets_folder_names_what_is_wrong(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "sft"
    datasets.Dataset.from_dict({"text": ["a"]}).save_to_disk(str(folder))
    next(folder.glob("*.arrow")).unlink()
    with pytest.raises(InputError, match=r"listed in state\.json but missing"):
        records(folder)
    (folder / "state.json").write_text('{"_data_files": [{"filename": "../../etc/passwd"}]}')
    with pytest.raises(InputError, match="not a file name in the folder"):
        records(folder)


@pytest.mark.parametrize("name", ["t.arrow", "t.orc", "t.parquet"])
def test_corrupt_and_empty_tables_are_errors(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    with pytest.raises(InputError):
        records(path)
    path.write_bytes(b"\xff\xff\xff\xff" + bytes(40))
    with pytest.raises(InputError) as info:
        records(path)
    assert info.value.path == name
