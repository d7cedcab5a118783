"""``contam-guard scan``: check training files (or what a commit adds) against every registered set.

The work is ``contam_guard.engines.pipeline``'s (the same steps as ``review`` and ``sweep``); this
command checks the outputs first, writes them (``report.outputs``) and says what to do next.
"""

from __future__ import annotations

from contam_guard.core.config import LoadedConfig
from contam_guard.engines.pipeline import Engine, Prepared, ScanRequest, execute, scan_local
from contam_guard.io.sources import Source
from contam_guard.report.outputs import Outputs, write


def run(
    loaded: LoadedConfig,
    request: ScanRequest,
    outputs: Outputs,
    engine: Engine = scan_local,
    accept: tuple[str, ...] = (),
) -> int:
    """Scan with ``engine`` (the local one, or Spark's), write ``outputs``; the exit code. A
    ``--diff``/``--staged`` scan also reports the range's changes that weaken the guard
    (``guard_changes``: a failing finding unless their digest is in ``accept``)."""
    from contam_guard.cli import next_steps, overlap_guard
    from contam_guard.io import sources

    def check_outputs(prepared: Prepared, found: list[Source]) -> None:
        # Against the very files the engine is about to read (no output may replace an input).
        read = sources.originals(found, request.changes)
        overlap_guard.check_scan(loaded, prepared.manifest_path, outputs, read)

    done = execute(loaded, request, engine, before_scan=check_outputs)
    if request.changes is not None:
        from contam_guard.guard import changes as guard_changes

        manifest_path = request.manifest_path or loaded.manifest_path
        done.report.guard = guard_changes.compare(loaded, request.changes, manifest_path, accept)
    done.report.notices += next_steps.unreachable_rules(loaded, request, done.report)
    steps = next_steps.steps(loaded, request, outputs, done.report)  # a failure says what to do next
    code = write(done.report, done.golden, outputs, steps)  # the job summary ends with them too
    next_steps.show(steps, outputs)
    return code
