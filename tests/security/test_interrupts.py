"""Ctrl-C and SIGTERM: one line, no traceback, no temporary file left, no worker left running.

Real processes and real signals, sent at a point the test knows the process has reached (no
sleeping): a small wrapper holds the process there. For a write, ``os.fsync`` waits for the
signal, so the temporary file is complete and still beside its destination; for ``--jobs 2``,
every worker waits inside its first chunk until the parent's handler has run (the whole process
group is signalled, as a terminal or a CI runner does).

Before (commit 10d5861): SIGTERM killed the process at once and left the temporary file (250 MB
for a large scrub); Ctrl-C exited 130 with no word, or with one traceback per worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_jsonl

HOLD_AT_FSYNC = textwrap.dedent(
    """
    import os, signal, sys
    from contam_guard import cli

    def fsync(fd):
        signal.pause()  # the temporary file is written; the test's signal comes now

    os.fsync = fsync
    sys.argv[0] = "contam-guard"
    cli.run()
    """
)

HOLD_IN_WORKERS = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from contam_guard.io import atomic
    from contam_guard import cli
    from contam_guard.engines import parallel

    real_scan, real_handler = parallel.read_into, atomic._raise_interrupted

    def scan(*args, **kwargs):  # in each worker: say so, then wait for the parent's handler
        Path(f"worker-{os.getpid()}.started").touch()
        while not Path("handled").exists():
            time.sleep(0.005)
        return real_scan(*args, **kwargs)

    def handler(signum, frame):
        Path("handled").touch()
        real_handler(signum, frame)

    parallel.read_into, atomic._raise_interrupted = scan, handler
    sys.argv[0] = "contam-guard"
    cli.run()
    """
)

HOLD_IN_THREADS = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from contam_guard import cli
    from contam_guard.core import thread_pool
    from contam_guard.core.match import prefilter
    from contam_guard.io import atomic

    prefilter.SPLIT_BYTES = 1  # every block cut in two: a thread filters its second part
    real_pool, real_handler = thread_pool.Threads.pool, atomic._raise_interrupted

    def held(fn):  # in the pool's thread: say so, then wait for the main thread's handler
        def wrapped(*args, **kwargs):
            Path("thread.started").touch()
            while not Path("handled").exists():
                time.sleep(0.005)
            return fn(*args, **kwargs)
        return wrapped

    def pool(self):
        made = real_pool(self)
        submit = type(made).submit
        made.submit = lambda fn, *args, **kwargs: submit(made, held(fn), *args, **kwargs)
        return made

    def handler(signum, frame):
        Path("handled").touch()
        real_handler(signum, frame)

    thread_pool.Threads.pool, atomic._raise_interrupted = pool, handler
    sys.argv[0] = "contam-guard"
    cli.run()
    """
)


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """The processes a test starts; a failed test leaves none running."""
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()


def start(root: Path, wrapper: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {**{k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}, **(env or {})}
    return subprocess.Popen(
        [sys.executable, "-c", wrapper, *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, signalled as a whole
    )


def wait_for(process: subprocess.Popen[str], ready: Any) -> None:
    """Until ``ready()`` holds; fails (with the process's output) if the process ends first."""
    deadline = time.monotonic() + 120
    while not ready():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"ended (exit {process.returncode}) before it got there:\n{out}\n{err}")
        assert time.monotonic() < deadline, "never got there"
        time.sleep(0.005)


def temporaries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp")]


def signalled(
    process: subprocess.Popen[str], project: Path, signum: int, code: int, output: str = "r.json"
) -> None:
    """Signal the command's whole process group: it ends with ``code`` and one line, no
    traceback, no temporary file and no ``output``."""
    os.killpg(process.pid, signum)
    out, err = process.communicate(timeout=120)
    assert process.returncode == code, err
    assert err.splitlines() == [
        f"error: interrupted ({signal.Signals(signum).name}): nothing was concluded; "
        "no partial file was left behind"
    ]
    assert "Traceback" not in out + err
    assert temporaries(project) == [] and not (project / output).exists()


QUESTION = (
    "The lighthouse keeper at Orrin Point trimmed forty copper wicks every evening, and her apprentice "
    "polished nine brass lenses for each wick before the fog rolled across the harbour wall"
)
FILLER = "notes from the allotment society say the compost heap needs turning before winter"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    assert cli("init").code == 0
    write_jsonl(tmp_path / "golden.jsonl", [{"id": "q1", "question": QUESTION}])
    assert cli("register", "gold", "golden.jsonl", "--field", "question", "--id-field", "id").code == 0
    return tmp_path


@pytest.fixture
def big(project: Path) -> Path:
    """About 2 MB, with 8 leaks (few enough for scrub to remove them: at most 10 records each)."""
    rows = [{"id": n, "text": f"{FILLER} {QUESTION if n % 2500 == 0 else FILLER}"} for n in range(20_000)]
    return write_jsonl(project / "big.jsonl", rows)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_write_removes_the_temporary_file(
    project: Path, big: Path, started: list[subprocess.Popen[str]], signum: int, code: int
) -> None:
    process = start(project, HOLD_AT_FSYNC, "scrub", "big.jsonl", "-o", "clean.jsonl.gz")
    started.append(process)
    wait_for(process, lambda: any(p.stat().st_size > 0 for p in temporaries(project)))
    signalled(process, project, signum, code, output="clean.jsonl.gz")


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_a_parallel_scan(
    project: Path, big: Path, started: list[subprocess.Popen[str]], signum: int, code: int
) -> None:
    """The terminal signals every process of the group: the workers leave it to the parent, the
    parent says one line, and the pool ends with it (no orphan keeps running)."""
    process = start(project, HOLD_IN_WORKERS, "scan", "big.jsonl", "--jobs", "2", "--review-json", "r.json")
    started.append(process)
    # The file is one chunk: one worker scans it while the other waits for work.
    wait_for(process, lambda: any(project.glob("worker-*.started")) and len(_children(process.pid)) == 2)
    workers = _children(process.pid)
    signalled(process, project, signum, code)
    assert workers and not [pid for pid in workers if Path(f"/proc/{pid}").exists()]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_a_thread_filters_part_of_a_block(
    project: Path, big: Path, started: list[subprocess.Popen[str]], signum: int, code: int
) -> None:
    """A one-process scan's helper thread is inside its part of a block when the signal comes:
    the main thread says one line and the process ends once the thread's part is done."""
    two = {"CONTAM_GUARD_THREADS": "2"}
    process = start(project, HOLD_IN_THREADS, "scan", "big.jsonl", "--review-json", "r.json", env=two)
    started.append(process)
    wait_for(process, (project / "thread.started").exists)
    signalled(process, project, signum, code)


def test_the_report_is_not_written_on_interrupt_but_is_without(project: Path, big: Path, cli: Any) -> None:
    """The positive control: uninterrupted, the same scan writes its review."""
    result = cli("scan", "big.jsonl", "--jobs", "2", "--review-json", "r.json")
    assert result.code == 1, result.output
    assert json.loads((project / "r.json").read_text())["findings"]
