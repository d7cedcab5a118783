"""Several processes give exactly the single-process result: records, lines, pairs, totals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from contam_guard.core.register.build import GoldenSource, build_set
from contam_guard.engines import parallel
from contam_guard.engines.parallel import plan
from contam_guard.errors import InputError
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.sources import Source
from tests.helpers import scan, scan_jobs

QUESTIONS = [
    "A baker sold 12 loaves in the morning and 30 in the afternoon, how many loaves did the baker sell today",
    "Tom has three red kites and twice as many blue kites, how many kites does Tom have in all of his boxes",
]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"question": q}) + "\n" for q in QUESTIONS))
    manifest_path = tmp_path / "manifest.json"
    built = build_set([GoldenSource(golden, "golden.jsonl")], ["question"], None, None, None)
    store.save(manifest_path, Manifest(sets={"g": built}))
    rows = []
    for number in range(3000):
        text = f"record {number}: filler words about weather and gardens number {number % 17}"
        if number % 401 == 7:
            text += " and then " + QUESTIONS[number % 2]
        rows.append(json.dumps({"text": text}))
        if number % 97 == 0:
            rows.append("   ")  # blank lines are not records: numbering must survive them
    train = tmp_path / "train.jsonl"
    train.write_bytes(("\ufeff" + "\n".join(rows) + "\n").encode())
    return manifest_path, train


@pytest.mark.parametrize("block_bytes", [1000, 32 << 20])
def test_windows_start_at_lines_and_count_records(
    setup: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    _, train = setup
    monkeypatch.setattr(parallel, "_BLOCK_BYTES", block_bytes)  # many blocks, or one
    chunks = plan([Source(train, "train.jsonl")], ReadOptions(), jobs=2, min_window_bytes=20_000)
    windows = [c.window for c in chunks]
    assert len(windows) > 2 and all(w is not None for w in windows)
    data = train.read_bytes()
    for window in windows[1:]:
        assert window is not None and data[window.start - 1 : window.start] == b"\n"
        before = data[: window.start].split(b"\n")[:-1]
        assert window.first_line == len(before) + 1
        assert window.first_record == sum(1 for line in before if not line.isspace() and line)


def test_two_processes_equal_one(setup: tuple[Path, Path]) -> None:
    manifest_path, train = setup
    sources = [Source(train, "train.jsonl")]
    options = ReadOptions(fields=("text",))
    one = scan(store.load(manifest_path), sources, options)
    two = scan_jobs(manifest_path, "CONTAM_GUARD_KEY", sources, options, jobs=2, min_window_bytes=20_000)
    assert (one.records, one.chars, one.files) == (two.records, two.chars, two.files)
    assert np.array_equal(one.totals.run, two.totals.run)
    assert np.array_equal(one.totals.window_found, two.totals.window_found)
    assert len(one.pairs) > 5
    assert one.pairs == two.pairs  # same records, lines, numbers and snippets, in the same order


def test_errors_name_the_same_line_in_a_worker(setup: tuple[Path, Path]) -> None:
    manifest_path, train = setup
    lines = train.read_bytes().split(b"\n")
    lines[2500] = b'{"text": broken'
    train.write_bytes(b"\n".join(lines))
    with pytest.raises(InputError) as error:
        scan_jobs(
            manifest_path, "K", [Source(train, "train.jsonl")], ReadOptions(), jobs=2, min_window_bytes=20_000
        )
    assert error.value.line == 2501


def test_a_bom_alone_on_the_first_line_numbers_records_as_one_process(setup: tuple[Path, Path]) -> None:
    """The readers drop a leading BOM, so a first line holding only a BOM is blank, not a
    record: the windows after it must number their records the same way."""
    manifest_path, train = setup
    data = train.read_bytes()
    train.write_bytes(b"\xef\xbb\xbf\n" + data[3:])  # the BOM now alone on line 1
    sources = [Source(train, "train.jsonl")]
    options = ReadOptions(fields=("text",))
    one = scan(store.load(manifest_path), sources, options)
    two = scan_jobs(manifest_path, "CONTAM_GUARD_KEY", sources, options, jobs=2, min_window_bytes=20_000)
    assert len(one.pairs) > 5 and one.pairs[0].line is not None and one.pairs[0].line > 1
    assert [(p.record, p.line) for p in one.pairs] == [(p.record, p.line) for p in two.pairs]
    assert one.records == two.records


def test_text_windows_start_at_paragraphs_and_equal_one_process(setup: tuple[Path, Path]) -> None:
    """Plain text is read by paragraph: windows start just after a blank line, number their
    records by paragraph, and two processes give exactly one process's pairs (the questions
    wrapped over lines, found on the line their run starts on)."""
    manifest_path, train = setup
    paragraphs = []
    for number in range(3000):
        text = f"record {number}: filler words about weather and gardens number {number % 17}"
        if number % 401 == 7:
            text += " and then " + QUESTIONS[number % 2]
        words = text.split()
        width = 3 + number % 5
        paragraphs.append("\n".join(" ".join(words[k : k + width]) for k in range(0, len(words), width)))
    notes = train.with_name("notes.txt")
    notes.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    chunks = plan([Source(notes, "notes.txt")], ReadOptions(), jobs=2, min_window_bytes=20_000)
    windows = [c.window for c in chunks]
    assert len(windows) > 2 and all(w is not None for w in windows)
    data = notes.read_bytes()
    for window in windows[1:]:
        assert window is not None and data[window.start - 2 : window.start] == b"\n\n"
        assert window.first_record == data[: window.start].count(b"\n\n")
        assert window.first_line == data[: window.start].count(b"\n") + 1
    sources = [Source(notes, "notes.txt")]
    one = scan(store.load(manifest_path), sources, ReadOptions())
    two = scan_jobs(
        manifest_path, "CONTAM_GUARD_KEY", sources, ReadOptions(), jobs=2, min_window_bytes=20_000
    )
    assert one.records == two.records == 3000
    assert len(one.pairs) > 5 and one.pairs == two.pairs
    assert sum(p.longest_run >= 13 for p in one.pairs) == 8  # each wrapped at 3-7 words a line
