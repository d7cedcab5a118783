"""``--jobs`` on many small files: each chunk merged as it completes, a few in flight, and the
result (files, notices, counts, totals, pairs listed and unlisted, the error) that of one process."""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pytest

from contam_guard.core.register.build import GoldenSource, build_set
from contam_guard.core.result import ScanResult
from contam_guard.core.state import ScanState
from contam_guard.engines import parallel
from contam_guard.engines.parallel import Chunk, Task
from contam_guard.errors import InputError
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers.base import ReadOptions, Window
from contam_guard.io.sources import Source
from tests.helpers import scan, scan_jobs

QUESTIONS = [
    "A baker sold 12 loaves in the morning and 30 in the afternoon, how many loaves did the baker sell today",
    "Tom has three red kites and twice as many blue kites, how many kites does Tom have in all of his boxes",
]


@pytest.fixture
def manifest_path(tmp_path: Path) -> Path:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"question": q}) + "\n" for q in QUESTIONS))
    path = tmp_path / "manifest.json"
    built = build_set([GoldenSource(golden, "golden.jsonl")], ["question"], None, None, None)
    store.save(path, Manifest(sets={"g": built}))
    return path


def many_files(folder: Path) -> list[Source]:
    """300 small files (most one line; every third leaks a question, some with the allow marker),
    a file of a type not read, and one that cannot be read (a bad JSON line)."""
    folder.mkdir()
    sources = []
    for number in range(300):
        rows = [{"text": f"file {number}: filler about gardens and weather {number % 13}"}]
        if number % 3 == 0:
            rows.append(
                {"text": f"copy {number}: {QUESTIONS[number % 2]}", "contam_guard": "allow"}
                if number % 9 == 0
                else {"text": f"copy {number}: {QUESTIONS[number % 2]}"}
            )
        if number % 50 == 0:
            rows += [{"text": QUESTIONS[0][: 40 + number // 10]}] * 3  # shorter runs
        path = folder / f"part-{number:03d}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        sources.append(Source(path, f"data/{path.name}"))
        if number == 120:
            image = folder / "picture.png"
            image.write_bytes(b"\x89PNG")
            sources.append(Source(image, "data/picture.png"))
        if number == 200:
            bad = folder / "bad.jsonl"
            bad.write_text(json.dumps({"text": QUESTIONS[1]}) + "\n{broken\n")
            sources.append(Source(bad, "data/bad.jsonl"))
    return sources


def same(one: ScanResult, two: ScanResult) -> None:
    assert two.files == one.files
    assert two.skipped == one.skipped
    assert (two.records, two.chars, two.fields) == (one.records, one.chars, one.fields)
    assert np.array_equal(two.totals.run, one.totals.run)
    assert np.array_equal(two.totals.window_found, one.totals.window_found)
    assert two.pairs == one.pairs  # the same pairs listed, in the same order
    assert two.unlisted == one.unlisted  # and the same ones counted


@pytest.mark.parametrize("cap", [0, 1, 7])
def test_many_small_files_give_one_process_result(manifest_path: Path, tmp_path: Path, cap: int) -> None:
    sources = many_files(tmp_path / "data")
    options = ReadOptions()
    one = scan(store.load(manifest_path), sources, options, skip_unreadable=True, max_pairs=cap)
    two = scan_jobs(manifest_path, "K", sources, options, jobs=2, skip_unreadable=True, max_pairs=cap)
    same(one, two)
    assert len(one.files) == 300 and len(one.skipped) == 2
    if cap:
        assert {p.item for p in one.pairs} == {0, 1} and len(one.pairs) == 2 * cap
        assert sum(u.records for u in one.unlisted.values()) == 100 + 6 * 3 + 1 - 2 * cap
    else:
        assert len(one.pairs) == 100 + 6 * 3 + 1 and one.unlisted == {}


def test_the_error_is_that_of_the_first_failing_file(manifest_path: Path, tmp_path: Path) -> None:
    """The first broken file fails late (a long file), a later one at once: one process stops at
    the first, and so must the workers' merge, whichever fails first in time."""
    folder = tmp_path / "data"
    folder.mkdir()
    slow = folder / "a-slow.jsonl"
    slow.write_text(
        "".join(json.dumps({"text": f"line {k} " * 20}) + "\n" for k in range(30_000)) + "{broken\n"
    )
    quick = [folder / f"b-{k}.jsonl" for k in range(6)]
    for path in quick:
        path.write_text("{broken too\n")
    sources = [Source(slow, "a-slow.jsonl"), *(Source(p, p.name) for p in quick)]
    with pytest.raises(InputError) as one:
        scan(store.load(manifest_path), sources, ReadOptions())
    with pytest.raises(InputError) as two:
        scan_jobs(manifest_path, "K", sources, ReadOptions(), jobs=2, min_window_bytes=1 << 30)
    assert (two.value.path, two.value.line) == (one.value.path, one.value.line) == ("a-slow.jsonl", 30_001)


class _Recorder:
    def __init__(self) -> None:
        self.places: list[int] = []

    def add(self, place: int, task: Task, part: ScanState) -> None:
        self.places.append(place)


def test_few_tasks_are_in_flight(tmp_path: Path) -> None:
    """10,000 tasks are not all submitted at once (each holds its arguments, then its result
    until merged): at most ``limit`` are submitted and not yet merged."""
    outstanding: list[Future[ScanState]] = []
    most = 0
    recorder = _Recorder()

    def submit(task: Task) -> Future[ScanState]:
        nonlocal most
        future: Future[ScanState] = Future()
        future.set_result(None)  # type: ignore[arg-type]  # a stand-in: the recorder never reads it
        outstanding.append(future)
        most = max(most, len(outstanding) - len(recorder.places))
        return future

    source = Source(tmp_path / "a.jsonl", "a.jsonl")
    tasks = ((place, (Chunk(source, None),)) for place in range(10_000))
    parallel._run_tasks(tasks, submit, recorder, limit=8)  # type: ignore[arg-type]
    assert most == 8
    assert sorted(recorder.places) == list(range(10_000))


def test_small_files_are_scanned_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Consecutive whole files share a task, up to TASK_FILES files and the byte budget; a
    window is a task of its own; the task is placed at its first chunk."""
    monkeypatch.setattr(parallel, "TASK_FILES", 3)
    sizes = [10, 10, 10, 10, 10, 95, 10, 10]
    chunks = []
    for place, size in enumerate(sizes):
        path = tmp_path / f"{place}.jsonl"
        path.write_bytes(b"x" * size)
        chunks.append((place, Chunk(Source(path, path.name), None)))
    window = Chunk(Source(tmp_path / "big.jsonl", "big.jsonl"), Window(0, 100, 1, 0))
    chunks.insert(7, (8, window))  # a big file's first window between two small files
    chunks.append((9, Chunk(Source(tmp_path / "gone.jsonl", "gone.jsonl"), None)))  # missing: size 0
    tasks = list(parallel._tasks(iter(chunks), max_bytes=100))
    assert [(place, [c.source.display for c in task]) for place, task in tasks] == [
        (0, ["0.jsonl", "1.jsonl", "2.jsonl"]),  # TASK_FILES
        (3, ["3.jsonl", "4.jsonl"]),  # the next would pass 100 bytes
        (5, ["5.jsonl"]),
        (6, ["6.jsonl"]),
        (8, ["big.jsonl"]),
        (7, ["7.jsonl"]),  # places 7 and 9 are not consecutive
        (9, ["gone.jsonl"]),
    ]
