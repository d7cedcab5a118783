"""Scanning with several processes: whole files, and windows of large files, spread over workers.

One large JSONL or text file is the common case (a single training dump), so such files are cut
into windows at record starts (a line start; in plain text, a paragraph's start: after a blank
line); each worker reads only its windows. Before the scan, the workers count each window's
lines and records (in parallel), so that every worker names records and lines (and reports
errors) exactly as a single-process read would. A ``--group-by`` scan reads each file whole (a
window could cut a group).

Every worker uses the manifest the parent loaded, never the file: a ``register`` or ``remove``
during the scan would otherwise give the workers another manifest than the parent's (forked
workers inherit the parent's manifest and index, its files mapped; spawned ones map the same
files from their path and check the index's digest, in the pool's initializer). Results come
back as the positions each chunk found (merged into the per-item totals with max / or), its
listed pairs and the counts of the others (merged through a ``PairStore``, which lists the same
pairs whatever order they arrive in), and are merged as each task (a window, or up to
``TASK_FILES`` small files) completes: memory holds one merged result and the tasks in flight (a
few per worker), not every chunk's result (10,000 one-line files took 6.7 GB when each kept a
manifest-sized copy of the totals until the end). Files, notices and errors come out in scan
order, as one process gives them.

Workers ignore Ctrl-C (the terminal sends it to the whole process group): the parent alone
handles it, cancels what has not started and removes its temporary files.
"""

from __future__ import annotations

import itertools
import multiprocessing
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.config import Config
from contam_guard.core.scanner import Scanner
from contam_guard.core.spec import native
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.state import Census, ScanState
from contam_guard.engines.local import file_size, input_bytes, read_into
from contam_guard.engines.policy import splittable_file
from contam_guard.errors import ContamGuardError, ManifestError
from contam_guard.io.atomic import signals_held
from contam_guard.io.keys import key_for
from contam_guard.io.manifest import store
from contam_guard.io.manifest.sealing import SealKey
from contam_guard.io.readers import detect_format
from contam_guard.io.readers.base import ReadOptions, Window
from contam_guard.io.readers.blocks import last_line_end, line_blocks
from contam_guard.io.readers.opener import open_binary
from contam_guard.io.readers.paragraphs import count_records, first_blank_end, text_block_end
from contam_guard.io.sources import Source

MIN_WINDOW_BYTES = 4 << 20
"""Smaller windows cost more in start-up and merging than they gain."""
WINDOWS_PER_JOB = 8
"""Windows per worker: workers take the next window when they finish one, so many windows even
out the ones that cost more (text with many hits is slower than clean text)."""
IN_FLIGHT_PER_JOB = 4
"""Tasks submitted and not yet merged, per worker: enough that no worker waits for the next
one, few enough that their arguments and results take little memory."""
TASK_FILES = 64
"""Whole files scanned by one task at most (with at most ``min_window_bytes`` between them): a
task per one-line file cost more in hand-offs than its scan (10,000 files: twice one process)."""


@dataclass(frozen=True)
class Chunk:
    source: Source
    window: Window | None


Task = tuple[Chunk, ...]
"""What one worker call scans: a window of a file, or whole files in scan order."""


Span = tuple[Path, int, int, bool]
"""A file, a byte range [start, end) of it, and whether its records are paragraphs (plain text)."""
SubmitCount = Callable[[Span], "Future[tuple[int, int]]"]
"""How the planner has a window's lines counted: at once, or by a process pool."""


def plan(
    sources: list[Source], options: ReadOptions, jobs: int, min_window_bytes: int = MIN_WINDOW_BYTES
) -> list[Chunk]:
    """Every source as chunks, in order: large uncompressed JSONL/text files as windows."""
    return [
        chunk for _, chunk in sorted(planned(sources, options, jobs, min_window_bytes), key=lambda x: x[0])
    ]


def planned(
    sources: list[Source],
    options: ReadOptions,
    jobs: int,
    min_window_bytes: int = MIN_WINDOW_BYTES,
    submit_count: SubmitCount | None = None,
) -> Iterator[tuple[int, Chunk]]:
    """(place, chunk) for every chunk, as soon as its numbering is known: whole files and each
    file's first window at once, each later window when the counts before it have come in.

    Every large uncompressed JSONL/text file is cut into about ``WINDOWS_PER_JOB * jobs``
    windows at line starts (a few small reads). Numbering a window's lines and records needs
    the line and blank-line counts of the windows before it: ``submit_count`` has them counted
    (a pool counts them while the first windows are already being scanned).
    """
    count = submit_count or _count_now
    cuts: list[tuple[int, Source, list[int], bool]] = []
    place = 0
    for source in sources:
        splittable = splittable_file(source, options)
        paragraphs = detect_format(source.path) == "text" and not options.lines
        size = source.path.stat().st_size if splittable else 0
        pieces = min(WINDOWS_PER_JOB * jobs, size // min_window_bytes)
        bounds = _cut_points(source.path, size, pieces, paragraphs) if pieces >= 2 else []
        if not bounds:
            yield place, Chunk(source, None)
            place += 1
            continue
        yield place, Chunk(source, Window(bounds[0], bounds[1], first_line=1, first_record=0))
        cuts.append((place, source, bounds, paragraphs))
        place += len(bounds) - 1
    # Every window but each file's last is counted (nothing after the last needs its numbers).
    counts = [
        [count((s.path, a, b, paragraphs)) for a, b in itertools.pairwise(bounds[:-1])]
        for _, s, bounds, paragraphs in cuts
    ]
    for (first, source, bounds, _), file_counts in zip(cuts, counts):
        lines = records = 0
        for k, counted in enumerate(file_counts, start=1):
            window_lines, window_records = counted.result()
            lines += window_lines
            records += window_records
            yield first + k, Chunk(source, Window(bounds[k], bounds[k + 1], lines + 1, records))


def _count_now(span: Span) -> Future[tuple[int, int]]:
    done: Future[tuple[int, int]] = Future()
    done.set_result(count_window(span))
    return done


_BLOCK_BYTES = 8 << 20
"""Windows are counted in blocks of this size: memory does not grow with the file."""


def _cut_points(path: Path, size: int, pieces: int, paragraphs: bool) -> list[int]:
    """0, the record starts nearest after ``i * size / pieces``, and ``size``."""
    after = _paragraph_start_after if paragraphs else _line_start_after
    with path.open("rb") as handle:
        starts = {after(handle, size * i // pieces, size) for i in range(1, pieces)}
    return [0, *sorted(start for start in starts if 0 < start < size), size]


def _line_start_after(handle: BinaryIO, offset: int, size: int) -> int:
    """The first line start at or after ``offset`` (``size`` if there is none)."""
    position = offset - 1
    handle.seek(position)
    while chunk := handle.read(1 << 16):
        found = chunk.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(chunk)
    return size


_PARAGRAPH_SEARCH = 4 << 20
"""How far the planner looks for a blank line after a cut point (then it cuts there no more)."""


def _paragraph_start_after(handle: BinaryIO, offset: int, size: int) -> int:
    """The line start just past the first blank line at or after ``offset`` (a record starts
    there), or ``size`` if there is none within ``_PARAGRAPH_SEARCH`` bytes. (Text without blank
    lines is read in records cut by size from its last blank line: it is not cut there.)"""
    start = _line_start_after(handle, offset, size)
    handle.seek(start)
    end = first_blank_end(handle.read(_PARAGRAPH_SEARCH))
    return size if end is None else start + end


def count_window(span: Span) -> tuple[int, int]:
    """The lines and records of ``[start, end)`` (which ends at a record's end), read as the scan
    will read them (a BOM dropped): each line not blank (whitespace only) is a record, or in
    plain text each paragraph (``io.readers.paragraphs``)."""
    path, start, end, paragraphs = span
    lines = records = 0
    with open_binary(path, str(path), window=Window(start, end, first_line=1, first_record=0)) as src:
        for block in line_blocks(src.stream, _BLOCK_BYTES, text_block_end if paragraphs else last_line_end):
            block_lines, block_blank = native.module().count_lines(block)
            lines += block_lines
            records += count_records(block) if paragraphs else block_lines - block_blank
    return lines, records


_WORKER_STATE: dict[str, Scanner] = {}
"""The parent's scanner by its manifest's digest: set before the pool forks (so workers inherit
it, its manifest mapped and its tables built), or by ``_init_worker`` (spawned workers)."""
_WORKER_ERROR: dict[str, ContamGuardError] = {}
"""Why a spawned worker could not open the parent's manifest (raised by its tasks)."""


@dataclass(frozen=True)
class ScannerSpec:
    """How a spawned worker opens the parent's manifest as the parent did (never its content:
    the files' path, the settings, the seal, and the digest to check they did not change)."""

    token: str
    manifest_path: str
    seal: SealKey | None
    config: Config
    root: Path
    max_pairs: int
    large: bool
    expected_bytes: int
    """The input the parent expects (``ScanPass.expect``): it decides the rewording stage too."""
    key: HashKey | None = None
    """The hashing key of a keyed manifest, for processes that do not share the parent's
    environment (Ray's workers on other machines); None: from the environment, as the parent."""


def scanner_spec(scanner: Scanner, *, with_key: bool = False) -> ScannerSpec:
    """How another process opens ``scanner`` again (``open_spec``); ``with_key``: the key
    travels with it (else the process takes it from its environment)."""
    manifest = scanner.manifest
    return ScannerSpec(
        manifest.digest or f"in-memory-{id(manifest)}",
        str(manifest.path or scanner.manifest_path),
        manifest.seal,
        scanner.config,
        scanner.root,
        scanner.max_pairs,
        scanner.large,
        scanner.expected_bytes,
        scanner.key if with_key else None,
    )


def _init_worker(spec: ScannerSpec, spawned: bool) -> None:
    """A worker's start: leave Ctrl-C to the parent, and have the parent's scanner."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if spec.token in _WORKER_STATE or not spawned:
        return
    # An error is kept for the worker's first task to raise: raised here, it would break the
    # pool (BrokenProcessPool, a crash) instead of reaching the user as the message it is.
    try:
        _WORKER_STATE[spec.token] = open_spec(spec)
    except ContamGuardError as error:
        _WORKER_ERROR[spec.token] = error


def open_spec(spec: ScannerSpec) -> Scanner:
    """The parent's scanner, opened again from ``spec`` in another process (a spawned worker,
    a Ray task); ``ManifestError`` if the manifest is no longer the parent's."""
    manifest = store.load(Path(spec.manifest_path), seal=spec.seal)
    if manifest.digest != spec.token:
        raise ManifestError(
            f"{spec.manifest_path}: the manifest changed after the scan started (a register or "
            "remove ran meanwhile)",
            hint="run the scan again",
        )
    key = spec.key if spec.key is not None else key_for(manifest, spec.config.key_env)
    scanner = Scanner(manifest, spec.config, key, root=spec.root, max_pairs=spec.max_pairs)
    scanner.large = spec.large
    scanner.expect(spec.expected_bytes)
    return scanner


def _worker_scanner(token: str) -> Scanner:
    if token in _WORKER_ERROR:
        raise _WORKER_ERROR[token]
    return _WORKER_STATE[token]


def _ready() -> None:
    """The task that starts the workers."""


def _scan_chunk(token: str, task: Task, options: ReadOptions, skip_unreadable: bool) -> ScanState:
    """One task in a worker process, against the parent's manifest: what it found."""
    acc = _worker_scanner(token).accumulator()
    read = replace(options, window=task[0].window)
    read_into(acc, [chunk.source for chunk in task], read, skip_unreadable=skip_unreadable)
    return acc.state


class Merged:
    """The tasks' results merged as they complete (in any order) into one accumulator; the
    inputs read and skipped are put back in scan order at the end."""

    def __init__(self, scanner: Scanner, sources: list[Source], options: ReadOptions):
        self.acc = scanner.accumulator()
        self.acc.state.census.asked = options.fields
        for source in sources:  # scan order ranks the inputs, as in one process
            self.acc.note_input(source.display)
        self.censuses: dict[int, Census] = {}

    def add(self, place: int, task: Task, part: ScanState) -> None:
        self.acc.state.merge_found(part)
        if task[0].window is not None and task[0].window.start != 0:  # name each input once
            part.census.files = []
        self.censuses[place] = part.census

    def finish(self) -> Accumulator:
        census = self.acc.state.census
        for place in sorted(self.censuses):
            census.merge(self.censuses[place])
        return self.acc


def scan_parallel(
    scanner: Scanner,
    sources: list[Source],
    options: ReadOptions,
    *,
    jobs: int,
    min_window_bytes: int = MIN_WINDOW_BYTES,
    skip_unreadable: bool = False,
) -> Accumulator:
    """``engines.local.scan_sources`` over ``jobs`` processes: the same result as one process,
    in the same order, and the same error when a chunk fails (the first in scan order)."""
    token = scanner_spec(scanner).token
    # The in-memory tables of a large scan (the prefilter's, the compiled rewording stage's) are
    # built once, here, and forked workers share them (built in each worker, they would cost
    # memory and time once per worker).
    scanner.expect(input_bytes(sources))
    if scanner.large:
        scanner.index.build_tables(windows=scanner.windows)
        _ = scanner.prefilter
    if scanner.compiled_reword:
        _ = scanner.reword
    # On Linux, forked workers inherit the scanner (and every imported module): no start-up
    # cost per worker. This process runs no threads at this point (no progress bar in parallel
    # mode), which is what makes fork safe. Elsewhere: spawn, and each worker maps the
    # manifest's files from their path.
    _WORKER_STATE[token] = scanner
    method = "fork" if sys.platform == "linux" else "spawn"
    context = multiprocessing.get_context(method)
    spec = scanner_spec(scanner)
    merged = Merged(scanner, sources, options)
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_init_worker, initargs=(spec, method != "fork")
    ) as pool:
        try:
            with signals_held():
                # The first task forks every worker: a signal then would interrupt os.fork()'s
                # own bookkeeping (where Python only prints the exception), so it waits a moment.
                pool.submit(_ready)
            chunks = planned(
                sources, options, jobs, min_window_bytes, lambda span: pool.submit(count_window, span)
            )

            def submit(task: Task) -> Future[ScanState]:
                return pool.submit(_scan_chunk, token, task, options, skip_unreadable)

            _run_tasks(_tasks(chunks, min_window_bytes), submit, merged, IN_FLIGHT_PER_JOB * jobs)
        except BaseException:
            # An error or Ctrl-C: drop the chunks not yet started and wait for the running ones
            # only (at most a window per worker); the workers end with the pool, none is orphaned.
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return merged.finish()


def plan_tasks(
    sources: list[Source],
    options: ReadOptions,
    jobs: int,
    min_window_bytes: int = MIN_WINDOW_BYTES,
    submit_count: SubmitCount | None = None,
) -> Iterator[tuple[int, Task]]:
    """(place, task) for every task of a scan over ``jobs`` workers, in scan order as soon as
    its numbering is known (``planned``, grouped as ``scan_parallel`` groups them): what any
    engine that runs the local reader on pieces of the inputs (``engines.ray``) hands out."""
    return _tasks(planned(sources, options, jobs, min_window_bytes, submit_count), min_window_bytes)


def _tasks(chunks: Iterator[tuple[int, Chunk]], max_bytes: int) -> Iterator[tuple[int, Task]]:
    """(place of the first chunk, task) for the chunks: consecutive whole files together, up to
    ``TASK_FILES`` files and ``max_bytes`` bytes (a larger file alone), each window alone."""
    group: list[Chunk] = []
    first = size = 0
    for place, chunk in chunks:
        if chunk.window is not None:
            if group:
                yield first, tuple(group)
                group = []
            yield place, (chunk,)
            continue
        grows = file_size(chunk.source.path)
        if group and (place != first + len(group) or len(group) == TASK_FILES or size + grows > max_bytes):
            yield first, tuple(group)
            group = []
        if not group:
            first, size = place, 0
        group.append(chunk)
        size += grows
    if group:
        yield first, tuple(group)


def _run_tasks(
    tasks: Iterator[tuple[int, Task]],
    submit: Callable[[Task], Future[ScanState]],
    merged: Merged,
    limit: int,
) -> None:
    """Run every (place, task), at most ``limit`` at a time, merging each as it completes.

    When tasks fail, the error raised is that of the first in scan order, as in one process:
    the tasks before it still run (one process reads them first), those after it do not start.
    """
    in_flight: dict[Future[ScanState], tuple[int, Task]] = {}
    failure: tuple[int, Exception] | None = None

    def collect() -> None:
        nonlocal failure
        done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
        for future in done:
            place, task = in_flight.pop(future)
            try:
                part = future.result()
            except Exception as exc:  # raised below, once the tasks before it are done
                if failure is None or place < failure[0]:
                    failure = (place, exc)
                continue
            merged.add(place, task, part)

    for place, task in tasks:
        if failure is not None and place > failure[0]:
            continue
        while len(in_flight) >= limit:
            collect()
        in_flight[submit(task)] = (place, task)
    while in_flight:
        collect()
    if failure is not None:
        raise failure[1]
