"""index / search through the command line: JSON shape, snippets, PII, incremental add,
atomic builds, and bad inputs (exit 2, a clear message, no traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contam_guard.cli.commands.common import display_path
from contam_guard.core.spec.normalise import words
from contam_guard.search import store
from contam_guard.search.bm25 import Bm25Writer
from contam_guard.search.query import SearchIndex
from tests.helpers import Runner, write_jsonl

LONG = " ".join(f"w{n}" for n in range(1000))


def _rows(tag: str, count: int = 5) -> list[dict[str, str]]:
    text = "{tag} record number {n} says the quick brown fox jumps"
    return [{"id": f"{tag}{n}", "text": text.format(tag=tag, n=n)} for n in range(count)]


def _search(cli: Runner, index: Path, query: str, *extra: str) -> dict[str, Any]:
    result = cli("search", "--index", index, query, "--json", *extra)
    assert result.code == 0, result.err
    answer: dict[str, Any] = json.loads(result.out)
    return answer


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "a.jsonl", _rows("alpha"))
    write_jsonl(
        tmp_path / "b.jsonl",
        [{"text": "write to jane.doe@example.com about the brown fox jumps"}, {"text": LONG}],
    )
    return tmp_path


def test_json_has_the_documented_shape_and_ids(cli: Runner, corpus: Path) -> None:
    index = corpus / "idx"
    assert cli("index", corpus / "a.jsonl", corpus / "b.jsonl", "--index", index, "--field", "text").code == 0
    answer = _search(cli, index, "The QUICK brown, “fox”!", "--exact")
    assert set(answer) == {"query", "mode", "count", "documents", "hits"}
    assert (answer["mode"], answer["count"], answer["documents"]) == ("exact", 5, 5)
    hits = answer["hits"]
    assert isinstance(hits, list) and len(hits) == 5
    first = hits[0]
    assert {"file", "record", "line", "offset", "score", "snippet"} <= set(first)
    assert (first["file"], first["record"], first["line"]) == (display_path(corpus / "a.jsonl"), 0, 1)
    assert [h["record"] for h in hits] == [0, 1, 2, 3, 4]
    text = _rows("alpha")[0]["text"]
    assert first["offset"] == text.index("the quick")
    assert first["snippet"] == text.replace("the quick brown fox", "«the quick brown fox»")
    assert _search(cli, index, "brown fox jumps", "--exact", "--limit", "2")["count"] == 6
    assert len(_search(cli, index, "brown fox jumps", "--exact", "--limit", "2")["hits"]) == 2


def test_snippets_hold_at_most_128_words_around_the_match(cli: Runner, corpus: Path) -> None:
    index = corpus / "idx"
    assert cli("index", corpus / "b.jsonl", "--index", index).code == 0
    for exact in (["--exact"], []):
        hit = _search(cli, index, "w500 w501 w502", *exact)["hits"][0]
        snippet = hit["snippet"]
        assert (hit["record"], hit["offset"]) == (1, LONG.index("w500"))
        assert len(words(snippet.replace("…", ""))) <= 128
        assert snippet.startswith("… ") and snippet.endswith(" …")
        assert "«w500 w501 w502»" in snippet  # BM25 marks a run of query words as one


def test_pii_is_masked_visibly_when_asked(cli: Runner, corpus: Path) -> None:
    index = corpus / "idx"
    assert cli("index", corpus / "b.jsonl", "--index", index).code == 0
    plain = _search(cli, index, "brown fox", "--exact")["hits"][0]["snippet"]
    masked = _search(cli, index, "brown fox", "--exact", "--redact-pii")["hits"][0]["snippet"]
    assert "jane.doe@example.com" in plain
    assert "jane.doe@example.com" not in masked and "[EMAIL]" in masked and "«brown fox»" in masked


def test_incremental_add_skips_indexed_files_and_replaces_changed_ones(cli: Runner, corpus: Path) -> None:
    index = corpus / "idx"
    assert cli("index", corpus / "a.jsonl", "--index", index).code == 0
    assert (index / "CURRENT").read_text().split()[0] == "gen-000001"
    again = cli("index", corpus / "a.jsonl", "--index", index)
    assert again.code == 0 and "nothing new" in again.out
    assert (index / "CURRENT").read_text().split()[0] == "gen-000001"
    added = cli("index", corpus / "a.jsonl", corpus / "b.jsonl", "--index", index)
    assert added.code == 0 and "indexed 1 file" in added.out and "skipped" in added.out
    assert (index / "CURRENT").read_text().split()[0] == "gen-000002"
    assert sorted(p.name for p in index.iterdir()) == ["CURRENT", "gen-000002"]
    assert _search(cli, index, "brown fox jumps", "--exact")["documents"] == 6
    write_jsonl(corpus / "a.jsonl", _rows("gamma", 2))  # a.jsonl changes
    changed = cli("index", corpus / "a.jsonl", "--index", index)
    assert changed.code == 0 and "retired" in changed.err
    assert _search(cli, index, "alpha record", "--exact")["count"] == 0
    assert _search(cli, index, "gamma record", "--exact")["count"] == 2
    assert _search(cli, index, "brown fox jumps", "--exact")["documents"] == 3
    bm25 = _search(cli, index, "alpha gamma record")
    assert {h["file"] for h in bm25["hits"]} == {display_path(corpus / "a.jsonl")}
    assert all("gamma" in h["snippet"] for h in bm25["hits"])


def test_a_failed_build_leaves_the_old_index(cli: Runner, corpus: Path) -> None:
    index = corpus / "idx"
    assert cli("index", corpus / "a.jsonl", "--index", index).code == 0
    before = _search(cli, index, "quick brown", "--exact")
    (corpus / "bad.jsonl").write_text('{"text": "fine brown fox"}\n{"text": broken\n', encoding="utf-8")
    failed = cli("index", corpus / "b.jsonl", corpus / "bad.jsonl", "--index", index)
    assert failed.code == 2 and "bad.jsonl:2" in failed.err and "Traceback" not in failed.err
    assert sorted(p.name for p in index.iterdir()) == ["CURRENT", "gen-000001"]
    assert _search(cli, index, "quick brown", "--exact") == before
    fresh = corpus / "new-idx"
    assert cli("index", corpus / "bad.jsonl", "--index", fresh).code == 2
    assert not fresh.exists() and not list(corpus.glob(".new-idx*"))


def test_a_failed_build_stops_its_writer_before_it_is_removed(
    cli: Runner, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tantivy's writer threads write a segment's files as documents arrive: a build removed
    while they run can be left half removed. When the build is discarded, its writer is stopped
    (its lock is free: a second writer opens)."""
    index = corpus / "idx"
    assert cli("index", corpus / "a.jsonl", "--index", index).code == 0
    (corpus / "bad.jsonl").write_text('{"text": "fine brown fox"}\n{"text": broken\n', encoding="utf-8")
    discarded: list[Path] = []

    def discard(staged: Path, current: Path | None) -> None:
        Bm25Writer(staged / "bm25").abort()  # LockBusy while the failed build's writer lives
        discarded.append(staged)
        real_discard(staged, current)

    real_discard = store.discard
    monkeypatch.setattr(store, "discard", discard)
    failed = cli("index", corpus / "b.jsonl", corpus / "bad.jsonl", "--index", index)
    assert failed.code == 2 and "bad.jsonl:2" in failed.err and "Traceback" not in failed.err
    assert len(discarded) == 1
    assert sorted(p.name for p in index.iterdir()) == ["CURRENT", "gen-000001"]


KILLS = ["before-replace@meta.json", "before-replace@CURRENT", "after-replace@CURRENT"]


@pytest.mark.parametrize("step", KILLS)
def test_a_killed_build_leaves_a_whole_index(cli: Runner, corpus: Path, step: str) -> None:
    index = corpus / "idx"
    assert cli("index", corpus / "a.jsonl", "--index", index).code == 0
    env = {**os.environ, "CONTAM_GUARD_FAULT": step}
    run = [sys.executable, "-m", "contam_guard", "index", str(corpus / "b.jsonl"), "--index", str(index)]
    killed = subprocess.run(run, env=env, capture_output=True, text=True, check=False)
    assert killed.returncode == -9  # SIGKILL at that step
    expected = 6 if step.startswith("after") else 5
    assert _search(cli, index, "brown fox jumps", "--exact")["documents"] == expected
    assert cli("index", corpus / "b.jsonl", "--index", index).code == 0  # cleans what the kill left
    assert _search(cli, index, "brown fox jumps", "--exact")["documents"] == 6
    assert len([p for p in index.iterdir() if p.name != "CURRENT"]) == 1


def _corrupt(index: Path, how: str) -> None:
    generation = index / (index / "CURRENT").read_text().split()[0]
    if how == "pointer":
        (index / "CURRENT").write_text("gen-999999\n")
    elif how == "meta":
        (generation / "meta.json").write_text('{"format": "contam-guard-search-index", "files": [')
    elif how == "array":
        (generation / "shards" / "s000000" / "sa.npy").unlink()
    elif how == "truncated":
        path = generation / "shards" / "s000000" / "tokens.npy"
        path.write_bytes(path.read_bytes()[:100])
    elif how == "bm25":
        for part in (generation / "bm25").glob("*.term"):
            part.write_bytes(b"garbage")
        (generation / "bm25" / "meta.json").write_text("{")


@pytest.mark.parametrize("how", ["pointer", "meta", "array", "truncated", "bm25"])
def test_a_corrupt_index_is_exit_2(cli: Runner, corpus: Path, how: str) -> None:
    index = corpus / "idx"
    assert cli("index", corpus / "a.jsonl", "--index", index).code == 0
    _corrupt(index, how)
    result = cli("search", "--index", index, "quick brown")
    assert result.code == 2, result.err
    assert "corrupt search index" in result.err or "damaged search index" in result.err, result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "--index", "{tmp}/missing", "fox"], "no search index here"),
        (["search", "--index", "{tmp}/a.jsonl", "fox"], "not a search index"),
        (["search", "--index", "{tmp}/idx", "?!", "--exact"], "has no words"),
        (["search", "--index", "{tmp}/idx", "fox", "--limit", "0"], "--limit 0"),
        (["index", "{tmp}/missing.jsonl", "--index", "{tmp}/idx"], "missing.jsonl"),
        (["index", "{tmp}/a.jsonl", "--index", "{tmp}/idx", "--field", "id"], "this index holds"),
        (["index", "{tmp}/a.jsonl", "--index", "{tmp}/full"], "not an empty folder"),
        (["serve", "--index", "{tmp}/idx", "--host", "0.0.0.0"], "loopback only"),
        (["serve", "--index", "{tmp}/idx", "--host", "192.0.2.7"], "loopback only"),
    ],
)
def test_bad_input_is_exit_2_with_a_clear_message(
    cli: Runner, corpus: Path, args: list[str], message: str
) -> None:
    assert cli("index", corpus / "b.jsonl", "--index", corpus / "idx").code == 0
    (corpus / "full").mkdir()
    (corpus / "full" / "keep.txt").write_text("mine")
    result = cli(*[a.format(tmp=corpus) for a in args])
    assert result.code == 2, (result.out, result.err)
    assert message in result.err and "Traceback" not in result.err
    assert (corpus / "full" / "keep.txt").read_text() == "mine"


def test_a_walked_folder_leaves_the_index_out(cli: Runner, corpus: Path) -> None:
    index = corpus / "idx"
    assert cli("index", corpus, "--index", index).code == 0
    assert cli("index", corpus, "--index", index).code == 0  # the index's own files are not data
    meta = SearchIndex(index).meta
    assert sorted(Path(f.display).name for f in meta.files) == ["a.jsonl", "b.jsonl"]
