"""Bounded memory: time, peak RSS and output size of three inputs that used to blow up.

    python -m benchmarks.memory                          # all three cases, this tree
    python -m benchmarks.memory --python /other/.venv/bin/python   # another checkout: before/after
    python -m benchmarks.memory --cases deep --depth 20000

- ``files``: 10,000 one-line JSONL files (GSM8K train records), ``scan FOLDER --jobs 2``: every
  chunk's result used to be kept until the merge (6.7 GB).
- ``deep``: a JSON array nested 100,000 deep (``deep.json``) and a JSONL line nested as deep
  (``deep.jsonl``), each scanned on its own: quadratic in the streaming JSON parser (67 s, 22 GB).
- ``heavy``: the GSM8K test questions 200 times (64 MB of JSONL) against GSM8K test registered,
  with ``--review-json``: every pair was kept and written (106 s, 6 GB, a 768 MB review).

Each scan runs in a child process; peak RSS is the kernel's ``ru_maxrss`` of the largest single
process (``os.wait4``; workers are included as their own processes). A child is limited to
``--mem-limit-gb`` of address space, so a case that would take the machine's memory fails
instead (the row says so). The inputs are built under ``--work`` (default: a temporary folder)
from ``../shared/data/gsm8k``; they are never written into the repository. Nothing here asserts:
the numbers are printed (and compared by whoever runs it against another checkout).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.corpus import GSM8K
from benchmarks.envs import child_env
from benchmarks.measure import Sample, run_step

ENV = child_env(COLUMNS="200", NO_COLOR="1")
CASES = ("files", "deep", "heavy")


@dataclass(frozen=True)
class Row:
    case: str
    command: str
    code: int
    sample: Sample
    output_bytes: int | None = None
    note: str = ""


def _limit(gigabytes: float) -> Callable[[], None]:
    def apply() -> None:
        limit = int(gigabytes * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _run(python: str, args: list[str], project: Path, limit_gb: float, log: Path) -> tuple[int, Sample]:
    argv = [python, "-m", "contam_guard", *args]
    # run_step has no pre-exec hook: the limit is set by a tiny shell wrapper (prlimit would be
    # another dependency), so the measured process is still the contam-guard child itself.
    limit_kib = int(limit_gb * (1 << 20))
    wrapped = ["/bin/sh", "-c", f'ulimit -v {limit_kib} && exec "$@"', "sh", *argv]
    return run_step(wrapped, project, ENV, log)


def _project(work: Path, python: str) -> Path:
    """A project folder with GSM8K test's questions registered (the same in every case)."""
    project = work / "project"
    if (project / ".contam-guard" / "manifest.json").is_file():
        return project
    project.mkdir(parents=True, exist_ok=True)
    golden = project / "golden.jsonl"
    golden.write_bytes((GSM8K / "test.jsonl").read_bytes())
    for args in (["init"], ["register", "gsm8k", str(golden), "--field", "question"]):
        subprocess.run(
            [python, "-m", "contam_guard", *args], cwd=project, env=ENV, check=True, capture_output=True
        )
    return project


def build_files(work: Path, count: int) -> Path:
    """``count`` one-line JSONL files, GSM8K train records in turn."""
    folder = work / f"files-{count}"
    if folder.is_dir() and len(list(folder.iterdir())) == count:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    train = [json.loads(line) for line in (GSM8K / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    for k in range(count):
        row = train[k % len(train)]
        record = {"id": k, "text": row["question"] + "\n" + row["answer"]}
        (folder / f"part-{k:05d}.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    return folder


def build_deep(work: Path, depth: int) -> tuple[Path, Path]:
    """A JSON array nested ``depth`` deep, and a JSONL line holding an array nested as deep."""
    array, lines = work / f"deep-{depth}.json", work / f"deep-{depth}.jsonl"
    nested = "[" * depth + "]" * depth
    array.write_text(nested + "\n", encoding="utf-8")
    lines.write_text('{"text": "a"}\n{"text": ' + nested + "}\n", encoding="utf-8")
    return array, lines


def build_heavy(work: Path, copies: int) -> Path:
    """GSM8K test's questions ``copies`` times, one JSONL record each."""
    path = work / f"heavy-{copies}.jsonl"
    if path.is_file():
        return path
    questions = [
        json.loads(line)["question"] for line in (GSM8K / "test.jsonl").read_text("utf-8").splitlines()
    ]
    block = "".join(json.dumps({"question": q}) + "\n" for q in questions)
    with path.open("w", encoding="utf-8") as out:
        for _ in range(copies):
            out.write(block)
    return path


def _has_option(python: str, option: str) -> bool:
    out = subprocess.run(
        [python, "-m", "contam_guard", "scan", "--help"], check=False, capture_output=True, text=True, env=ENV
    )
    return option in out.stdout


def _tail(log: Path) -> str:
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1][:160] if lines else ""


def measure(args: argparse.Namespace) -> list[Row]:
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="cg-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    project = _project(work, args.python)
    rows: list[Row] = []

    def scan(case: str, scan_args: list[str], output: Path | None = None) -> None:
        log = work / f"{case}.log"
        log.write_bytes(b"")
        if output is not None:
            output.unlink(missing_ok=True)
        code, sample = _run(args.python, ["scan", *scan_args], project, args.mem_limit_gb, log)
        size = output.stat().st_size if output is not None and output.exists() else None
        shown = " ".join(a if "/" not in a else Path(a).name for a in scan_args)
        rows.append(Row(case, f"scan {shown}", code, sample, size, _tail(log)))
        print(f"  {case}: exit {code}, {sample.seconds:.1f} s, {sample.rss_mib:.0f} MiB", file=sys.stderr)

    if "files" in args.cases:
        folder = build_files(work, args.files)
        scan("files", [str(folder), "--jobs", "2"])
    if "deep" in args.cases:
        array, lines = build_deep(work, args.depth)
        scan("deep-json", [str(array)])
        scan("deep-jsonl", [str(lines)])
    if "heavy" in args.cases:
        heavy = build_heavy(work, args.copies)
        review = work / "heavy-review.json"
        scan("heavy", [str(heavy), "--review-json", str(review)], review)
        if _has_option(args.python, "--max-pairs-per-item"):
            scan(
                "heavy-uncapped",
                [str(heavy), "--review-json", str(review), "--max-pairs-per-item", "0"],
                review,
            )
    return rows


def table(rows: list[Row]) -> str:
    out = [
        "| case | command | exit | seconds | CPU seconds | peak RSS MiB | output bytes | last line |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        size = f"{r.output_bytes:,}" if r.output_bytes is not None else "—"
        out.append(
            f"| {r.case} | `{r.command}` | {r.code} | {r.sample.seconds:.2f} | {r.sample.cpu:.2f} "
            f"| {r.sample.rss_mib:,.0f} | {size} | {r.note.replace('|', '/')} |"
        )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose contam_guard runs")
    parser.add_argument("--work", help="where the inputs go (default: a new temporary folder)")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--files", type=int, default=10_000, help="one-line files for the files case")
    parser.add_argument("--depth", type=int, default=100_000, help="nesting depth for the deep case")
    parser.add_argument("--copies", type=int, default=200, help="copies of GSM8K test for the heavy case")
    parser.add_argument("--mem-limit-gb", type=float, default=10.0, help="address-space limit per child")
    args = parser.parse_args()
    print(table(measure(args)))


if __name__ == "__main__":
    main()
