"""When ``--jobs`` pays: more processes only where they make a scan faster.

A ``--jobs`` scan forks its workers, has the lines of every window counted before the windows
are numbered, and merges each worker's results: a fixed cost and a cost per byte that one
process does not pay. Below some amount of work they cost more than the other cores save, and
one file read whole (compressed, Parquet, JSON) is read by one worker whatever ``--jobs`` says.
Then the scan runs in one process, and the command line says so.

A scan in one process gives its compiled passes the cores it may run on (``threads``): the
prefilter and the rewording stage cut each large block between threads that share their tables,
so they need neither a fork nor a merge.
"""

from __future__ import annotations

import math
import os

from contam_guard.core.scanner import Scanner
from contam_guard.engines.local import input_bytes
from contam_guard.io.readers import detect_format
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.readers.compression import compression_of
from contam_guard.io.readers.opener import transcodes
from contam_guard.io.sources import Source

ONE_PROCESS_MB_PER_S = 60.0
"""About how fast one process scans with the n-gram rules alone (GPT-3, PaLM, Llama 2): the
benchmark's ``scan --only gpt3`` on a 2-core machine (benchmarks/README.md)."""
ONE_PROCESS_MB_PER_S_EVERY_RULE = 15.0
"""The same with GPT-4's character windows or the rewording rules (the default scan)."""
MIN_SECONDS = 3.0
"""Below about this much one-process work, ``--jobs 2`` measured slower than one process (the
pool's start, the windows' line counts, the merge): 0.83x on 39 MB with every rule."""
MIN_SECONDS_ENV = "CONTAM_GUARD_JOBS_MIN_SECONDS"
"""Overrides ``MIN_SECONDS`` (seconds; 0: the workers whenever ``--jobs`` asks for them), for a
machine whose cores change the trade, and for tests of the parallel path on small files."""


THREADS_ENV = "CONTAM_GUARD_THREADS"
"""Overrides how many threads a one-process scan gives its compiled passes (``threads``)."""
DEFAULT_THREADS_CAP = 8
"""At most this many by default (a cap chosen, not measured: the benchmark machine has 2 cores, and
the prefilter cuts a block in two parts at most)."""
MOST_THREADS = 256
"""The most ``THREADS_ENV`` may ask for."""


def threads() -> int:
    """The threads a one-process scan gives its compiled passes: ``THREADS_ENV`` when set, else
    the cores this process may run on (at most ``DEFAULT_THREADS_CAP``); ValueError when the variable is
    not a whole number from 1 to ``MOST_THREADS``."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw:
        if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MOST_THREADS:
            raise ValueError(raw)
        return int(raw)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, DEFAULT_THREADS_CAP))


def min_seconds() -> float:
    """The one-process work below which ``--jobs`` runs in one process (``MIN_SECONDS_ENV``);
    ValueError when the variable is not a number of seconds."""
    raw = os.environ.get(MIN_SECONDS_ENV, "").strip()
    if not raw:
        return MIN_SECONDS
    value = float(raw)
    if not math.isfinite(value) or value < 0:
        raise ValueError(raw)
    return value


def one_process_reason(
    scanner: Scanner, sources: list[Source], options: ReadOptions, min_seconds: float = 0.0
) -> str | None:
    """Why a ``--jobs`` scan of ``sources`` would be no faster than one process, or None when
    more processes may pay: one file that is read whole (compressed, Parquet, JSON,
    ``--group-by``: one worker would read it while the others wait), or, with ``min_seconds``,
    less input than one process scans in that time with the rules that run."""
    if len(sources) == 1 and not splittable_file(sources[0], options):
        return "one file that is read whole (not uncompressed JSONL or text)"
    if min_seconds > 0:
        size = input_bytes(sources)
        heavy = scanner.windows or scanner.reword_settings is not None
        speed = ONE_PROCESS_MB_PER_S_EVERY_RULE if heavy else ONE_PROCESS_MB_PER_S
        if size / 1e6 / speed < min_seconds:
            floor = min_seconds * speed
            return f"{size / 1e6:,.1f} MB of input, under about {floor:,.0f} MB with these rules"
    return None


def splittable_file(source: Source, options: ReadOptions) -> bool:
    """Whether ``source`` can be cut into windows that workers read apart."""
    return (
        detect_format(source.path) in ("jsonl", "text")
        and compression_of(source.path) == "plain"
        and not options.whole_file
        and options.group_by is None
        and source.path.is_file()
        and not transcodes(source.path, options.encoding)  # UTF-16/32: bytes are not lines
    )
