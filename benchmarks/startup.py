"""Start-up: what a pre-commit hook pays for ``contam-guard scan one.jsonl``.

    python -m benchmarks.startup               # 20 runs, this tree
    python -m benchmarks.startup --runs 50 --imports 15

A project with GSM8K test registered (1,319 items, every rule) and a one-record JSONL file (a
clean GSM8K train question) are made in a temporary folder; ``contam-guard scan one.jsonl`` then
runs ``--runs`` times, each a fresh child process (as hyperfine would: one warm-up run first,
which also writes the bytecode, then the timed ones). Printed: the fastest, median and slowest
wall time and the median CPU time (user + system, which a loaded machine inflates less), beside
the same for ``python -c pass`` (the interpreter alone) and for importing the third-party
libraries the CLI needs; then the heaviest imports of one run from ``python -X importtime``
(cumulative, top-level packages and contam-guard's own modules). The goal is 0.3 s of wall time
on an idle machine; nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.corpus import GSM8K
from benchmarks.envs import child_env
from benchmarks.measure import Sample, run_step

ENV = child_env(COLUMNS="200", NO_COLOR="1")
ENV.pop("CONTAM_GUARD_KEY", None)
GOAL_SECONDS = 0.3
LIBRARIES = "numpy, pydantic, typer, yaml"


def _runs(argv: list[str], cwd: Path, runs: int) -> list[Sample]:
    log = cwd / "startup.log"
    run_step(argv, cwd, ENV, log)  # warm-up: the bytecode is written, the files are in the page cache
    samples = []
    for _ in range(runs):
        code, sample = run_step(argv, cwd, ENV, log)
        if code not in (0, 1):
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
            raise SystemExit(f"{' '.join(argv[-3:])} exited {code}: {' | '.join(tail)}")
        samples.append(sample)
    return samples


def _row(label: str, samples: list[Sample]) -> str:
    walls = sorted(s.seconds for s in samples)
    cpu = statistics.median(s.cpu for s in samples)
    rss = statistics.median(s.rss_mib for s in samples)
    return (
        f"| {label} | {walls[0]:.3f} | {statistics.median(walls):.3f} | {walls[-1]:.3f} | {cpu:.3f} "
        f"| {rss:.0f} |"
    )


def heaviest_imports(python: str, project: Path, record: Path, top: int) -> list[tuple[float, str]]:
    """(cumulative milliseconds, module) of the heaviest top-level and contam-guard imports."""
    out = subprocess.run(
        [python, "-X", "importtime", "-m", "contam_guard", "scan", str(record)],
        cwd=project, env=ENV, capture_output=True, text=True, check=False,
    )  # fmt: skip
    found: dict[str, float] = {}
    for line in out.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| *(\S+)", line)
        if match is None:
            continue
        micros, name = int(match[1]), match[2]
        if "." not in name or (name.startswith("contam_guard.") and name.count(".") <= 2):
            found[name] = max(found.get(name, 0.0), micros / 1000)
    return sorted(((ms, name) for name, ms in found.items()), reverse=True)[:top]


def measure(python: str, runs: int, top: int, work: Path) -> str:
    project = work / "project"
    project.mkdir(parents=True)
    log = project / "setup.log"
    for args in (["init"], ["register", "gsm8k", str(GSM8K / "test.jsonl"), "--field", "question"]):
        code, _ = run_step([python, "-m", "contam_guard", *args], project, ENV, log)
        if code != 0:
            raise SystemExit(f"{args[0]} exited {code} (log: {log})")
    question = json.loads((GSM8K / "train.jsonl").read_text(encoding="utf-8").splitlines()[0])["question"]
    record = work / "one.jsonl"
    record.write_text(json.dumps({"text": question}) + "\n", encoding="utf-8")
    scan = _runs([python, "-m", "contam_guard", "scan", str(record)], project, runs)
    bare = _runs([python, "-c", "pass"], project, runs)
    libs = _runs([python, "-c", f"import {LIBRARIES}"], project, runs)
    median = statistics.median(s.seconds for s in scan)
    lines = [
        f"Start-up (`python -m benchmarks.startup`): `contam-guard scan one.jsonl` (one clean record) "
        f"against GSM8K test (1,319 items, every rule); {runs} runs after a warm-up, each a fresh "
        f"process. Machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (wall times "
        f"grow with the load, CPU times much less). Goal: {GOAL_SECONDS} s wall; the median here is "
        f"{median:.3f} s ({'met' if median <= GOAL_SECONDS else 'not met'} at this load).",
        "",
        "| command | fastest s | median s | slowest s | CPU s (median) | peak RSS MiB |",
        "| --- | --- | --- | --- | --- | --- |",
        _row("`contam-guard scan one.jsonl`", scan),
        _row("`python -c pass` (the interpreter alone)", bare),
        _row(f"`python -c 'import {LIBRARIES}'` (what the CLI cannot do without)", libs),
        "",
        "Heaviest imports of one scan (`python -X importtime`, cumulative ms, one run):",
        "",
        "| module | ms |",
        "| --- | --- |",
    ]
    lines += [f"| {name} | {ms:.1f} |" for ms, name in heaviest_imports(python, project, record, top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose contam_guard runs")
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each command (default 20)")
    parser.add_argument("--imports", type=int, default=12, help="heaviest imports listed (default 12)")
    args = parser.parse_args(argv)
    if not (GSM8K / "test.jsonl").is_file():
        raise SystemExit(f"GSM8K not found at {GSM8K}: the benchmark needs ../shared/data/gsm8k")
    with tempfile.TemporaryDirectory(prefix="cg-startup-") as work:
        print(measure(args.python, args.runs, args.imports, Path(work)))


if __name__ == "__main__":
    main()
