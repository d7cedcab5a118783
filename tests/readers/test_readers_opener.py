"""Path problems, format detection and dispatch."""

from __future__ import annotations

import errno
import os
from pathlib import Path, PurePath
from typing import NoReturn

import pytest

from contam_guard.errors import InputError
from contam_guard.io.readers import READERS, ReadOptions, Record, detect_format, read_records
from contam_guard.io.readers import opener as opener_module


def read(path: Path, display: str = "shown/name", fmt: str | None = None) -> list[Record]:
    return list(read_records(path, display, ReadOptions(detect_shape=True), format_name=fmt))


def fail(path: Path, fmt: str | None = None) -> InputError:
    with pytest.raises(InputError) as info:
        read(path, fmt=fmt)
    assert info.value.path == "shown/name"
    return info.value


@pytest.mark.parametrize("name", ["d.jsonl", "d.json", "d.csv", "d.txt", "d.parquet"])
def test_directory_passed_as_file(tmp_path: Path, name: str) -> None:
    (tmp_path / name).mkdir()
    assert fail(tmp_path / name).problem == "is a directory, not a file"


@pytest.mark.parametrize("name", ["gone.jsonl", "gone.json.gz", "gone.tsv", "gone.parquet"])
def test_missing_path(tmp_path: Path, name: str) -> None:
    assert fail(tmp_path / name).problem == "no such file"


@pytest.mark.parametrize("name", ["loop.jsonl", "loop.parquet"])
def test_symlink_loop(tmp_path: Path, name: str) -> None:
    a, b = tmp_path / name, tmp_path / f"other-{name}"
    a.symlink_to(b)
    b.symlink_to(a)
    assert "symlink loop" in fail(a).problem


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_not_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert "not a regular file" in fail(fifo).problem


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="running as root: chmod 000 does not stop root from reading",
)
@pytest.mark.parametrize("name", ["secret.jsonl", "secret.parquet"])
def test_unreadable_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b'{"text": "x"}\n')
    path.chmod(0)
    try:
        assert fail(path).problem == "permission denied"
    finally:
        path.chmod(0o600)


def test_permission_error_on_open_is_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Works as root too: simulate the EACCES that open() gives an unprivileged user.
    def deny(*args: object, **kwargs: object) -> NoReturn:
        raise PermissionError(errno.EACCES, "Permission denied")

    path = tmp_path / "secret.jsonl"
    path.write_bytes(b'{"text": "x"}\n')
    monkeypatch.setattr(opener_module, "open", deny, raising=False)
    assert fail(path).problem == "permission denied"


def test_read_error_mid_file_is_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"text": "x"}\n' * 10)
    real_open = open

    class FailingFile:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self._file = real_open(path, "rb", buffering=0)
            self._calls = 0

        def readinto(self, buffer: bytearray) -> int:
            self._calls += 1
            if self._calls > 2:  # two 20-byte reads (of the head sniff), then a failure
                raise OSError(errno.EIO, "Input/output error")
            return self._file.readinto(memoryview(buffer)[:20])

        def __enter__(self) -> FailingFile:
            return self

        def __exit__(self, *exc: object) -> None:
            self._file.close()

    monkeypatch.setattr(opener_module, "open", FailingFile, raising=False)
    err = fail(path)
    assert "read error" in err.problem and "Input/output error" in err.problem
    assert err.line == 40 // 14 + 1  # two whole 14-byte lines were read: reading stopped on line 3


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.jsonl", "jsonl"),
        ("a.ndjson", "jsonl"),
        ("a.JSONL", "jsonl"),
        ("a.jsonl.gz", "jsonl"),
        ("a.jsonl.zst", "jsonl"),
        ("a.ndjson.zst", "jsonl"),
        ("a.json", "json"),
        ("a.json.gz", "json"),
        ("a.csv", "csv"),
        ("a.csv.zst", "csv"),
        ("a.tsv", "tsv"),
        ("a.tsv.gz", "tsv"),
        ("a.parquet", "parquet"),
        ("a.txt", "text"),
        ("a.md", "text"),
        ("a.text", "text"),
        ("a.txt.gz", "text"),
        ("a.md.zst", "text"),
        ("dir.v2/a.b.jsonl", "jsonl"),
        ("a.parquet.gz", "parquet"),  # decompressed to a spool: Parquet needs random access
        ("a.parquet.zst", "parquet"),
        ("a.gz", "sniff"),  # no inner suffix: the decompressed bytes say what it is
        ("a.zst", "sniff"),
        ("a.jsonl.bz2", "jsonl"),
        ("a.jsonl.xz", "jsonl"),
        ("a.jsonl.lz4", "jsonl"),
        ("a.jsonl.gzip", "jsonl"),
        ("a.jsonl.zstd", "jsonl"),
        ("a.py", "text"),
        ("a.YAML", "text"),
        ("a.html", "markup"),
        ("a.xml", "markup"),
        ("a.ipynb", "notebook"),
        ("a.arrow", "arrow"),
        ("a.feather", "arrow"),
        ("a.orc", "orc"),
        ("a.zip", "zip"),
        ("a.tar", "tar"),
        ("a.tar.gz", "tar"),
        ("a.tgz", "tar"),
        ("a.tar.zst", "tar"),
        ("Makefile", "sniff"),
        (".jsonl", "sniff"),  # a dotfile's name has no suffix
        ("a.jsonl.gz.zst", "sniff"),  # compressed twice: the bytes say it
        ("a.png", "sniff"),  # an image by its bytes, not its name
    ],
)
def test_detect_format(name: str, fmt: str | None) -> None:
    assert detect_format(Path(name)) == fmt
    assert detect_format(PurePath(name)) == fmt


def test_every_detected_format_has_a_reader() -> None:
    assert set(READERS) == {
        *("jsonl", "json", "csv", "tsv", "parquet", "text"),
        *("arrow", "orc", "zip", "tar", "markup", "notebook", "sniff"),
    }


def test_an_unknown_format_name_is_input_error(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("print()\n")
    err = fail(path, fmt="pdf")
    assert err.problem == "unknown format 'pdf'"
    assert err.hint is not None and "jsonl" in err.hint


def test_format_override(tmp_path: Path) -> None:
    path = tmp_path / "data.log"
    path.write_bytes(b'{"text": "x"}\n')
    assert [r.joined() for r in read(path, fmt="jsonl")] == ["x"]
    assert [r.joined() for r in read(path, fmt="text")] == ['{"text": "x"}']
    assert fail(path, fmt="yaml").problem == "unknown format 'yaml'"


def test_unreadable_parquet_is_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Works as root too: simulate what os.access reports to an unprivileged user.
    path = tmp_path / "secret.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    assert fail(path).problem == "permission denied"
