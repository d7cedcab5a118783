"""Scanning with several processes: whole files, and windows of large files, spread over workers.

One large JSONL or text file is the common case (a single training dump), so such files are cut
into windows at line starts; each worker reads only its windows. The planner counts the lines
and records before each cut in one vectorised pass over a memory map, so that every worker
names records and lines (and reports errors) exactly as a single-process read would.

Workers load the manifest themselves (it is checked again) and rebuild the index once per
process; results come back as per-item totals (merged with max / or) and notable pairs, in
chunk order, so the merged result equals the single-process one.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from contam_guard.engine.index import ManifestIndex
from contam_guard.engine.matcher import ItemTotals
from contam_guard.keys import key_for
from contam_guard.manifest import store
from contam_guard.manifest.model import Manifest
from contam_guard.readers import detect_format
from contam_guard.readers.base import ReadOptions, Window
from contam_guard.readers.opener import compression_of
from contam_guard.scan import ScanResult, Source, order_pairs, scan

MIN_WINDOW_BYTES = 4 << 20
"""Smaller windows cost more in start-up and merging than they gain."""
_WHITESPACE = np.frombuffer(b" \t\n\r\x0b\x0c", dtype=np.uint8)


@dataclass(frozen=True)
class Chunk:
    source: Source
    window: Window | None


def plan(
    sources: list[Source], options: ReadOptions, jobs: int, min_window_bytes: int = MIN_WINDOW_BYTES
) -> list[Chunk]:
    """Split every large uncompressed JSONL/text file into about ``2 * jobs`` windows."""
    chunks: list[Chunk] = []
    for source in sources:
        splittable = (
            detect_format(source.path) in ("jsonl", "text")
            and compression_of(source.path) == "plain"
            and not options.whole_file
            and source.path.is_file()
        )
        size = source.path.stat().st_size if splittable else 0
        pieces = min(2 * jobs, size // min_window_bytes)
        if pieces < 2:
            chunks.append(Chunk(source, None))
            continue
        chunks += [Chunk(source, window) for window in _windows(source.path, size, pieces)]
    return chunks


def _windows(path: Path, size: int, pieces: int) -> list[Window]:
    """Windows starting at the line starts nearest after ``i * size / pieces``."""
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        data = np.frombuffer(mapped, dtype=np.uint8)
        try:
            newlines = np.flatnonzero(data == 10)
            cuts = np.unique(np.searchsorted(newlines, [size * i // pieces for i in range(1, pieces)]))
            cuts = cuts[cuts < newlines.size]
            starts = (newlines[cuts] + 1).tolist()
            starts = [s for s in starts if s < size]
            windows: list[Window] = [
                Window(start=0, end=starts[0] if starts else size, first_line=1, first_record=0)
            ]
            bounds = [*starts, size]
            for number, start in enumerate(starts):
                lines_before = int(np.searchsorted(newlines, start))  # newlines before ``start``
                blank = _blank_lines(data, newlines[:lines_before])
                windows.append(
                    Window(
                        start=start,
                        end=bounds[number + 1],
                        first_line=lines_before + 1,
                        first_record=lines_before - blank,
                    )
                )
            return windows
        finally:
            del data  # release the buffer before the map closes


def _blank_lines(data: np.ndarray, newlines: np.ndarray) -> int:
    """Lines made only of whitespace among the lines ending at ``newlines`` (the reader skips them)."""
    if newlines.size == 0:
        return 0
    starts = np.concatenate([[0], newlines[:-1] + 1])
    first = data[starts]
    # A line is blank when it has no byte but whitespace; most lines fail on their first byte.
    candidates = np.flatnonzero(np.isin(first, _WHITESPACE))
    blank = 0
    for line in candidates.tolist():
        if bytes(data[starts[line] : newlines[line] + 1]).isspace():
            blank += 1
    return blank


_WORKER_STATE: dict[tuple[str, int, int], tuple[Manifest, ManifestIndex]] = {}


def _scan_chunk(
    manifest_path: str,
    key_env: str,
    chunk: Chunk,
    options: ReadOptions,
    windows: bool,
    batch_chars: int,
    skip_unreadable: bool,
) -> ScanResult:
    """One chunk in a worker process (the manifest is loaded and indexed once per process)."""
    stat = os.stat(manifest_path)
    state_key = (manifest_path, stat.st_mtime_ns, stat.st_size)
    if state_key not in _WORKER_STATE:
        manifest = store.load(Path(manifest_path))
        _WORKER_STATE[state_key] = (manifest, ManifestIndex.from_manifest(manifest))
    manifest, index = _WORKER_STATE[state_key]
    read = replace(options, window=chunk.window)
    key = key_for(manifest, key_env)
    return scan(
        index,
        [chunk.source],
        read,
        key=key,
        windows=windows,
        batch_chars=batch_chars,
        skip_unreadable=skip_unreadable,
    )


def scan_parallel(
    manifest_path: Path,
    key_env: str,
    sources: list[Source],
    options: ReadOptions,
    *,
    jobs: int,
    windows: bool = True,
    batch_chars: int = 1 << 20,
    min_window_bytes: int = MIN_WINDOW_BYTES,
    skip_unreadable: bool = False,
) -> ScanResult:
    """``scan`` over ``jobs`` processes; the same result as one process, in the same order."""
    stat = os.stat(manifest_path)
    manifest = store.load(manifest_path)
    index = ManifestIndex.from_manifest(manifest)
    # On Linux, forked workers inherit the loaded manifest and its index (and every imported
    # module): no start-up cost per worker. This process runs no threads at this point (no
    # progress bar in parallel mode), which is what makes fork safe. Elsewhere: spawn.
    _WORKER_STATE[(str(manifest_path), stat.st_mtime_ns, stat.st_size)] = (manifest, index)
    chunks = plan(sources, options, jobs, min_window_bytes)
    method = "fork" if sys.platform == "linux" else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [
            pool.submit(
                _scan_chunk,
                str(manifest_path),
                key_env,
                chunk,
                options,
                windows,
                batch_chars,
                skip_unreadable,
            )
            for chunk in chunks
        ]
        parts = [future.result() for future in futures]
    merged = ScanResult(index=index, totals=ItemTotals.empty(index))
    for chunk, part in zip(chunks, parts):
        np.maximum(merged.totals.run, part.totals.run, out=merged.totals.run)
        merged.totals.window_found |= part.totals.window_found
        merged.pairs += part.pairs
        merged.records += part.records
        merged.chars += part.chars
        merged.skipped += part.skipped
        if chunk.window is None or chunk.window.start == 0:  # name each file once
            merged.files += part.files
    order_pairs(merged)
    return merged
