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

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

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


_BLOCK_BYTES = 32 << 20
"""The planner reads the file in blocks of this size: its memory does not grow with the file."""


def _windows(path: Path, size: int, pieces: int) -> list[Window]:
    """Windows starting at the line starts nearest after ``i * size / pieces``."""
    # Plain reads, not a memory map: mapped pages would count as this process's memory.
    with path.open("rb") as handle:
        starts = sorted({_line_start_after(handle, size * i // pieces, size) for i in range(1, pieces)})
        starts = [start for start in starts if start < size]
        before = _lines_before(handle, size, starts)
    bounds = [*starts, size]
    windows = [Window(start=0, end=bounds[0], first_line=1, first_record=0)]
    for number, (start, (lines, blank)) in enumerate(zip(starts, before)):
        windows.append(
            Window(start=start, end=bounds[number + 1], first_line=lines + 1, first_record=lines - blank)
        )
    return windows


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


def _lines_before(handle: BinaryIO, size: int, starts: list[int]) -> list[tuple[int, int]]:
    """For each start (a line start, ascending): the lines before it, and how many were blank.

    One pass over blocks that end at a line end, so every line lies in one block; a blank line
    (whitespace only) is not a record, so record numbers need the count.
    """
    out: list[tuple[int, int]] = []
    lines = blank = 0
    pending = list(starts)
    block_start = 0
    while pending:
        block_end = _line_start_after(handle, min(block_start + _BLOCK_BYTES, size), size)
        handle.seek(block_start)
        block = np.frombuffer(handle.read(block_end - block_start), dtype=np.uint8)
        ends = np.flatnonzero(block == 10)  # line ends, relative to the block
        line_starts = np.concatenate([[0], ends[:-1] + 1])
        blank_lines = _blank_flags(block, line_starts, ends)
        while pending and pending[0] <= block_end:
            below = int(np.searchsorted(ends + block_start, pending.pop(0)))  # lines ending before it
            out.append((lines + below, blank + int(blank_lines[:below].sum())))
        lines += ends.size
        blank += int(blank_lines.sum())
        block_start = block_end
    return out


def _blank_flags(block: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether each line (``starts[k]`` to the newline at ``ends[k]``) is whitespace only."""
    flags = np.zeros(ends.size, dtype=np.bool_)
    # Most lines fail on their first byte; only those starting with whitespace are looked at.
    for line in np.flatnonzero(np.isin(block[starts], _WHITESPACE)).tolist():
        flags[line] = bytes(block[starts[line] : ends[line] + 1]).isspace()
    return flags


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
    loaded: tuple[Manifest, ManifestIndex] | None = None,
) -> ScanResult:
    """``scan`` over ``jobs`` processes; the same result as one process, in the same order.

    ``loaded``: the manifest at ``manifest_path`` and its index, when the caller has them
    already (workers on other platforms load the file themselves).
    """
    stat = os.stat(manifest_path)
    if loaded is None:
        manifest = store.load(manifest_path)
        loaded = manifest, ManifestIndex.from_manifest(manifest)
    manifest, index = loaded
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
