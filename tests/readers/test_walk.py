"""The folder walk: sorted, symlinks followed, loops and broken links reported once, never silent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contam_guard.errors import InputError
from contam_guard.io.walk import data_files


def touch(path: Path, text: str = '{"text": "x"}\n') -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def rel(root: Path, paths: list[Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(32)


def test_sorted_like_rglob_and_every_file_that_may_hold_text(tmp_path: Path) -> None:
    for name in ("b/z.jsonl", "b/a.txt", "a-b.csv", "a/c.json", "c.parquet", "B.tsv", "a/notes", "a/x.py"):
        touch(tmp_path / name)
    (tmp_path / "a" / "img.png").write_bytes(PNG)
    (tmp_path / "a" / "text.png").write_text("a .png name, but text: read")
    found = data_files([tmp_path])
    expected = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.name != "img.png")
    assert found.files == expected
    assert rel(tmp_path, found.files) == [
        *("B.tsv", "a/c.json", "a/notes", "a/text.png", "a/x.py"),
        *("a-b.csv", "b/a.txt", "b/z.jsonl", "c.parquet"),
    ]
    assert found.notices == []
    assert found.not_text == {"image/png": [tmp_path / "a" / "img.png"]}


def test_version_control_folders_are_not_walked(tmp_path: Path) -> None:
    touch(tmp_path / ".git" / "objects" / "ab" / "cdef")
    touch(tmp_path / "d.jsonl")
    found = data_files([tmp_path])
    assert rel(tmp_path, found.files) == ["d.jsonl"]
    assert [(n.path.name, n.reason) for n in found.notices] == [
        (".git", "version control's own folder; not read")
    ]


def test_a_datasets_folder_is_one_input(tmp_path: Path) -> None:
    """``datasets``' own ``save_to_disk``: the folder is one dataset, its JSON files not data."""
    datasets = pytest.importorskip("datasets")
    rows = {"text": ["a", "b", "c"]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "data" / "sft"), num_shards=2)
    datasets.DatasetDict({"train": datasets.Dataset.from_dict(rows)}).save_to_disk(
        str(tmp_path / "data" / "dd")
    )
    touch(tmp_path / "data" / "other.jsonl")
    assert rel(tmp_path, data_files([tmp_path / "data"]).files) == [
        "data/dd/train",  # dataset_dict.json only names the splits
        "data/other.jsonl",
        "data/sft",
    ]
    assert data_files([tmp_path / "data" / "sft"]).files == [tmp_path / "data" / "sft"]


def test_symlinked_folders_and_files_are_followed(tmp_path: Path) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside"
    touch(data / "own.jsonl")
    touch(outside / "deep" / "leak.jsonl")
    touch(outside / "file.txt")
    (data / "linked").symlink_to(outside, target_is_directory=True)
    (data / "one.txt").symlink_to(outside / "file.txt")
    found = data_files([data])
    assert rel(data, found.files) == ["linked/deep/leak.jsonl", "linked/file.txt", "one.txt", "own.jsonl"]
    assert found.notices == []


def test_a_loop_is_one_notice_naming_the_link(tmp_path: Path) -> None:
    data = tmp_path / "data"
    touch(data / "sub" / "a.jsonl")
    (data / "sub" / "up").symlink_to("..", target_is_directory=True)  # data/sub/up -> data
    (data / "sub" / "self").symlink_to(".", target_is_directory=True)
    found = data_files([data])
    assert rel(data, found.files) == ["sub/a.jsonl"]
    assert [(rel(data, [n.path])[0], n.reason.split(" (")[0]) for n in found.notices] == [
        ("sub/self", "a symlink loop"),
        ("sub/up", "a symlink loop"),
    ]
    assert f"leads back to {data}" in found.notices[1].reason


def test_two_links_to_one_folder_walk_it_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    touch(tmp_path / "shared" / "s.jsonl")
    data.mkdir()
    (data / "a").symlink_to(tmp_path / "shared", target_is_directory=True)
    (data / "b").symlink_to(tmp_path / "shared", target_is_directory=True)
    found = data_files([data])
    assert rel(data, found.files) == ["a/s.jsonl"]
    assert len(found.notices) == 1 and found.notices[0].path == data / "b"
    assert "the same folder as" in found.notices[0].reason


def test_broken_links_and_fifos_are_reported(tmp_path: Path) -> None:
    data = tmp_path / "data"
    touch(data / "ok.jsonl")
    (data / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (data / "gone-folder").symlink_to(tmp_path / "nowhere", target_is_directory=True)
    os.mkfifo(data / "pipe.jsonl")
    os.mkfifo(data / "pipe-without-suffix")  # any name may be data: said too
    found = data_files([data])
    assert rel(data, found.files) == ["ok.jsonl"]
    assert [(n.path.name, n.reason) for n in found.notices] == [
        ("gone-folder", "a broken symlink (its target does not exist); not read"),
        ("gone.jsonl", "a broken symlink (its target does not exist); not read"),
        ("pipe-without-suffix", "not a regular file (a FIFO, socket or device); not read"),
        ("pipe.jsonl", "not a regular file (a FIFO, socket or device); not read"),
    ]


def test_exclusions_prune_folders_silently_and_note_files(tmp_path: Path) -> None:
    guard, golden = tmp_path / ".contam-guard", tmp_path / "golden" / "g.jsonl"
    touch(guard / "manifest.json")
    touch(golden)
    touch(tmp_path / "data" / "d.jsonl")

    def excluded(path: Path) -> str | None:
        if path.resolve() == guard.resolve():
            return "contam-guard's own folder"
        return "a golden file" if path.resolve() == golden.resolve() else None

    found = data_files([tmp_path], excluded)
    assert rel(tmp_path, found.files) == ["data/d.jsonl"]
    assert [(n.path, n.reason) for n in found.notices] == [(golden, "a golden file; not scanned")]


def test_files_are_kept_as_given(tmp_path: Path) -> None:
    a = touch(tmp_path / "b.jsonl")
    missing = tmp_path / "missing.jsonl"
    assert data_files([a, missing]).files == [a, missing]  # the reader reports the missing one


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists every folder: no permission to take away")
def test_an_unlistable_folder_is_an_error(tmp_path: Path) -> None:
    locked = tmp_path / "data" / "locked"
    touch(locked / "a.jsonl")
    locked.chmod(0)
    try:
        with pytest.raises(InputError, match="cannot list the folder"):
            data_files([tmp_path / "data"])
    finally:
        locked.chmod(0o755)
