"""Diff scans on real git repositories read every staged file that may hold text: a page, an
archive (member by member), a file of any name; what cannot hold text is listed, what may but
cannot be read fails unless skipped or excluded."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

from .conftest import FILLER, GOLDEN, Repo, jsonl, leak

PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + bytes(64)
PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(32)


def write_bytes(repo: Repo, rel: str, data: bytes) -> Path:
    path = repo.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def failing(repo: Repo, *args: str) -> list[tuple[str, str]]:
    """(item id, source) of each failing finding's first pair."""
    out = repo.root.parent / "review.json"
    result = repo.cg("scan", *args, "--review-json", out)
    assert result.code == 1, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    return [(f["item_id"], f["pairs"][0]["source"]) for f in data["findings"] if f["action"] == "fail"]


def test_a_staged_html_page_is_read(repo: Repo) -> None:
    question = str(GOLDEN[0]["question"]).replace("harbour town", "harbour&nbsp;<em>town</em>")
    repo.write("site/index.html", f"<html><body><p>{FILLER}</p><p>{question}</p></body></html>\n")
    repo.git("add", "site/index.html")
    assert failing(repo, "--staged") == [("q-01", "site/index.html")]


def test_a_staged_zip_is_read_member_by_member(repo: Repo) -> None:
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("inner/clean.txt", FILLER)
        archive.writestr("inner/train.jsonl", jsonl([FILLER, leak(1)]))
    write_bytes(repo, "data/bundle.zip", sink.getvalue())
    repo.git("add", "data/bundle.zip")
    assert failing(repo, "--staged") == [("q-02", "data/bundle.zip:inner/train.jsonl")]


def test_a_diff_range_reads_a_tar_gz_and_a_file_of_any_name(repo: Repo) -> None:
    base = repo.head()
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode="w:gz") as archive:
        data = jsonl([leak(2)]).encode()
        info = tarfile.TarInfo("part/t.jsonl")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    write_bytes(repo, "data/shard.tar.gz", sink.getvalue())
    repo.write("notes/TODO", f"{FILLER}\n{leak(3)}\n")
    head = repo.commit("an archive and a note")
    assert sorted(failing(repo, "--diff", f"{base}..{head}")) == [
        ("q-03", "data/shard.tar.gz:part/t.jsonl"),
        ("q-04", "notes/TODO"),
    ]


def test_staged_binaries_listed_unreadable_ones_fail_unless_skipped_or_excluded(repo: Repo) -> None:
    write_bytes(repo, "assets/logo.png", PNG)
    repo.git("add", "assets/logo.png")
    result = repo.cg("scan", "--staged")
    assert result.code == 0, result.output
    assert "assets/logo.png: image/png: cannot hold text, not read" in result.err

    write_bytes(repo, "docs/paper.pdf", PDF)
    repo.git("add", "docs/paper.pdf")
    result = repo.cg("scan", "--staged")
    assert result.code == 2 and "docs/paper.pdf" in result.err and "scan.exclude" in result.err
    assert repo.cg("scan", "--staged", "--skip-unreadable").code == 0

    config = repo.root / ".contam-guard" / "contam-guard.yaml"
    assert config.is_file()
    config.write_text(
        config.read_text(encoding="utf-8") + "\nscan:\n  exclude: ['*.pdf']\n", encoding="utf-8"
    )
    result = repo.cg("scan", "--staged")
    assert result.code == 0, result.output
    assert "docs/paper.pdf: excluded by scan.exclude '*.pdf'" in result.err
    result = repo.cg("scan", "docs/paper.pdf")  # named on the command line: excluded as well
    assert result.code == 0 and "excluded by scan.exclude" in result.err


def test_a_staged_datasets_folder_is_read(repo: Repo) -> None:
    """``datasets``' own ``save_to_disk``, staged: its Arrow shards are read, and its JSON
    metadata files are JSON documents (read, not refused)."""
    import datasets  # noqa: PLC0415 (slow to import: this test only)

    rows = {"prompt": [FILLER, leak(0)]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(repo.root / "data" / "sft"), num_shards=2)
    repo.git("add", "data/sft")
    assert failing(repo, "--staged") == [("q-01", "data/sft/data-00001-of-00002.arrow")]
    repo.commit("the dataset")
    assert failing(repo, "data") == [("q-01", "data/sft")]  # a folder walk: one dataset
