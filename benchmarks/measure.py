"""Run one configuration in dedicated child processes: wall time, exit code, peak RSS.

Peak RSS comes from ``os.wait4`` on the child: the kernel's ``ru_maxrss`` of that process and of
every descendant it waited for, so a tool's worker processes are covered (as the largest single
process, not a sum). Descendants the child leaves behind (PySpark never waits for its JVM, which
exits after it) are reaped here too, on Linux, where this process is their subreaper: their CPU
time adds to the row's and their peak RSS counts. Wall time is taken around the whole child, so
interpreter start-up, imports and index building count: that is what a user waits for.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Sample:
    seconds: float  # wall time
    cpu: float  # user + system time of the child and its waited-for descendants
    rss_mib: float


@dataclass(frozen=True)
class Verdict:
    """What a tool concluded: the test items it flagged, and how many training records."""

    items: set[int]
    records: int | None = None
    note: str = ""


@dataclass
class Job:
    """One row of the table: a tool in one configuration (or the reason it is skipped).

    ``steps`` run one after another in a fresh run folder (the placeholder ``{run}`` in any
    argument or environment value is replaced by it); their times add up and the peak RSS is the
    largest. ``prepare`` (untimed) runs first in that folder; ``verdict`` (untimed) reads the
    first run's folder.
    """

    tool: str
    config: str
    steps: list[list[str]] = field(default_factory=list)
    input_bytes: int = 0
    records: int = 0
    ok_codes: frozenset[int] = frozenset({0})
    env: Mapping[str, str] | None = None
    prepare: Callable[[Path], None] | None = None
    verdict: Callable[[Path], Verdict] | None = None
    note: str = ""
    scans_corpus: bool = True
    skip: str | None = None
    samples: list[Sample] = field(default_factory=list)
    found: Verdict | None = None
    error: str | None = None

    @property
    def seconds(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def cpu(self) -> float:
        return statistics.median(s.cpu for s in self.samples)

    @property
    def rss_mib(self) -> float:
        return statistics.median(s.rss_mib for s in self.samples)


_PR_SET_CHILD_SUBREAPER = 36


def _adopt_orphans() -> bool:
    """Make this process the subreaper of its descendants (Linux), so that those a child leaves
    running are reparented here, not to init; whether that worked."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0


def run_step(
    argv: Sequence[str], run_dir: Path, env: Mapping[str, str] | None, log: Path
) -> tuple[int, Sample]:
    adopted = _adopt_orphans()
    # Children this process already had (multiprocessing's resource tracker, once --scale-gb
    # built its file in a spawned process) are not the run's: waiting for them would never end.
    before = _children()
    with log.open("ab") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=run_dir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4; tell Popen so
    cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
    while adopted and (orphans := _children() - before):  # the child's orphans, until none is left
        for pid in orphans:
            try:
                _, _, left = os.wait4(pid, 0)
            except ChildProcessError:
                continue
            cpu, peak = cpu + left.ru_utime + left.ru_stime, max(peak, left.ru_maxrss)
    return proc.returncode, Sample(seconds, cpu, peak / 1024)


def _children() -> set[int]:
    """The process ids of this process's children (Linux's ``/proc``; empty elsewhere)."""
    found: set[int] = set()
    tasks = Path(f"/proc/{os.getpid()}/task")
    for task in tasks.iterdir() if tasks.is_dir() else ():
        try:
            found.update(int(pid) for pid in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def run_once(job: Job, run_dir: Path) -> Sample | str:
    """One timed run in a fresh ``run_dir``; a Sample, or an error message."""
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    if job.prepare is not None:
        job.prepare(run_dir)
    log = run_dir / "output.log"
    env = None if job.env is None else {k: v.replace("{run}", str(run_dir)) for k, v in job.env.items()}
    seconds, cpu, peak = 0.0, 0.0, 0.0
    for step in job.steps:
        argv = [arg.replace("{run}", str(run_dir)) for arg in step]
        code, sample = run_step(argv, run_dir, env, log)
        seconds += sample.seconds
        cpu += sample.cpu
        peak = max(peak, sample.rss_mib)
        if code not in job.ok_codes:
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
            return f"exit {code} from {Path(argv[0]).name}: {' | '.join(tail)[-300:]} (log: {log})"
    return Sample(seconds, cpu, peak)
