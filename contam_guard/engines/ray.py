"""Scanning on Ray Data: the inputs cut as ``--jobs`` cuts them, each piece scanned in a task.

The driver plans the scan exactly as ``contam_guard.engines.parallel`` does (whole files, and windows of
large uncompressed JSONL/text files at line starts, each numbered from the line and record
counts of the windows before it: those counts run as Ray tasks). Each piece of work becomes one
row of a Ray dataset; ``map_batches`` hands each row to a task, which opens the driver's scanner
from a small picklable spec (the manifest's path, digest, seal and key and the settings: never
the manifest's content; once per worker process, see ``open_spec``), feeds the piece to an
accumulator through the local engine's own reader (``engines.local.read_into``) and returns the
pickled ``ScanState``. The driver merges the states as they arrive, and puts the inputs read and
skipped back in scan order (``engines.parallel.Merged``): ``Scanner.finish`` then sees what one process
would have found.

Errors are the local engine's: an ``InputError`` naming file:line (a task returns it rather
than failing, so that the driver raises the first in scan order, as one process would). The
workers must see the inputs and the manifest at the driver's paths (local mode does; on a
cluster, a shared file system).
"""

from __future__ import annotations

import logging
import os
import pickle
import warnings
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import pyarrow as pa

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.scanner import Scanner
from contam_guard.engines.local import input_bytes, read_into
from contam_guard.engines.parallel import (
    MIN_WINDOW_BYTES,
    Merged,
    ScannerSpec,
    Span,
    Task,
    count_window,
    open_spec,
    plan_tasks,
    scanner_spec,
)
from contam_guard.errors import ContamGuardError, ManifestError
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.sources import Source

_SCANNERS: dict[str, tuple[ScannerSpec, Scanner]] = {}
"""The driver's scanner in this worker process, by its spec (Ray reuses a worker process for
the tasks of a job: the second task opens nothing, and keeps the tables the first built)."""
_QUIET_LOGGERS = ("ray", "ray.data")


@dataclass(frozen=True)
class Piece:
    """What one task scans, and how (pickled into a row of the dataset)."""

    place: int
    task: Task
    options: ReadOptions
    skip_unreadable: bool


def quiet_ray() -> None:
    """No progress bars or execution banners from Ray Data in this process (contam-guard reports
    for itself; errors still reach the log)."""
    context = _data_context()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    context.enable_auto_log_stats = False
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def _data_context() -> Any:
    """This process's Ray Data context (made now if it is not yet)."""
    from ray.data import DataContext  # noqa: PLC0415 (the optional extra)

    with warnings.catch_warnings():
        # Ray Data's default context sets its own deprecated fields when it is made (Ray 2.60):
        # nothing a user of contam-guard can act on.
        warnings.simplefilter("ignore", DeprecationWarning)
        return DataContext.get_current()


def scan_sources(
    scanner: Scanner,
    sources: list[Source],
    options: ReadOptions,
    *,
    skip_unreadable: bool = False,
    min_window_bytes: int | None = None,
) -> Accumulator:
    """Scan ``sources`` on the Ray cluster this process is connected to (``ray.init`` first):
    the accumulator one local process would have filled (see the module's docstring)."""
    import ray  # noqa: PLC0415 (the optional extra)
    import ray.data  # noqa: PLC0415

    if scanner.manifest is None or (scanner.manifest.path is None and scanner.manifest_path is None):
        raise ManifestError("--engine ray scans against a manifest saved to a file (its tasks open it)")
    _data_context()
    scanner.expect(input_bytes(sources))
    # Absolute paths: a Ray worker's working folder is not the driver's.
    spec = scanner_spec(scanner, with_key=True)
    spec = replace(spec, manifest_path=os.path.abspath(spec.manifest_path), root=spec.root.absolute())
    sources = [replace(source, path=source.path.absolute()) for source in sources]
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    cpus = max(int(resources.get("CPU", 1)), 1)
    count = ray.remote(num_cpus=1)(count_window)

    def submit_count(span: Span) -> Future[tuple[int, int]]:
        done: Future[tuple[int, int]] = Future()

        def copy(counted: Future[tuple[int, int]]) -> None:
            error = counted.exception()
            if error is None:
                done.set_result(counted.result())
            else:  # the error the count raised, not Ray's wrapping of it
                done.set_exception(getattr(error, "cause", None) or error)

        count.remote(span).future().add_done_callback(copy)
        return done

    window = MIN_WINDOW_BYTES if min_window_bytes is None else min_window_bytes
    pieces = [
        pickle.dumps(Piece(place, task, replace(options, window=task[0].window), skip_unreadable))
        for place, task in plan_tasks(sources, options, cpus, window, submit_count)
    ]
    merged = Merged(scanner, sources, options)
    if not pieces:
        return merged.finish()
    dataset = ray.data.from_items([{"piece": piece} for piece in pieces], override_num_blocks=len(pieces))
    scanned = dataset.map_batches(
        partial(scan_batch, spec=spec), batch_size=1, batch_format="pyarrow", num_cpus=1
    )
    failure: tuple[int, ContamGuardError] | None = None
    for place, task, state, error in _results(scanned):
        if error is not None:
            if failure is None or place < failure[0]:
                failure = (place, error)
        elif failure is None or place < failure[0]:
            merged.add(place, task, state)
    if failure is not None:
        raise failure[1]
    return merged.finish()


def _results(scanned: Any) -> Iterator[tuple[int, Task, Any, ContamGuardError | None]]:
    """(place, task, state, error) of each task as it completes (our own tasks' pickles)."""
    for batch in scanned.iter_batches(batch_size=None, batch_format="pyarrow"):
        columns = batch.to_pydict()
        for piece, state, error in zip(columns["piece"], columns["state"], columns["error"]):
            done: Piece = pickle.loads(piece)
            yield (
                done.place,
                done.task,
                None if state is None else pickle.loads(state),
                None if error is None else pickle.loads(error),
            )


def _scanner(spec: ScannerSpec) -> Scanner:
    kept = _SCANNERS.get(spec.token)
    if kept is not None and kept[0] == spec:
        return kept[1]
    _SCANNERS.clear()  # one manifest at a time: a worker never holds two indexes
    scanner = open_spec(spec)
    _SCANNERS[spec.token] = (spec, scanner)
    return scanner


def scan_batch(batch: pa.Table, spec: ScannerSpec) -> pa.Table:
    """A Ray task: scan each piece of ``batch`` (one, as planned) against the driver's scanner;
    its pickled state, or the ``ContamGuardError`` that stopped it (pickled: raised by the
    driver, in scan order)."""
    states: list[bytes | None] = []
    errors: list[bytes | None] = []
    for blob in batch.column("piece").to_pylist():
        piece: Piece = pickle.loads(blob)
        try:
            scanner = _scanner(spec)
            acc = scanner.accumulator()
            read_into(
                acc,
                [chunk.source for chunk in piece.task],
                piece.options,
                skip_unreadable=piece.skip_unreadable,
            )
            states.append(pickle.dumps(acc.state, protocol=pickle.HIGHEST_PROTOCOL))
            errors.append(None)
        except ContamGuardError as error:
            states.append(None)
            errors.append(pickle.dumps(error))
    return pa.table(
        {
            "piece": batch.column("piece"),
            "state": pa.array(states, type=pa.binary()),
            "error": pa.array(errors, type=pa.binary()),
        }
    )
