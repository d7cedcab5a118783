"""contam-guard against its peers on one GSM8K corpus: verdicts, MB/s, records/s, peak RSS.

    python -m benchmarks.run                 # full size (GSM8K train x25), medians of 3 runs
    python -m benchmarks.run --quick         # x2 corpus, 1 run, README left alone
    python -m benchmarks.run --tools contam-guard toolkit-mmqa --runs 1
    python -m benchmarks.run --scale-gb 2    # and contam-guard's GPT-3 scans of a 2 GB file
    python -m benchmarks.run --engines       # contam-guard's GPT-3, default, Spark and Ray rows only

Runs are interleaved (run 1 of every configuration, then run 2, ...), each a fresh child
process; a configuration whose first run takes over a minute is not run again (one sample:
the slow peers would otherwise take most of an hour). The table goes to stdout and, except for
--quick, into benchmarks/README.md.

Why x25 (98 MB of text) by default: every tool pays a start-up cost before it reads a byte
(contam-guard about half a second: Python, numpy, the index), and a ratio of throughputs on a
small file measures start-ups more than scanning. At x25 the slowest peers still finish in a
few minutes; `--repeat 10` gives the earlier 39 MB corpus.

--scale-gb X (through make: `make bench BENCH_ARGS="--scale-gb 2"`) adds a scale measurement:
`scale.jsonl` in the work folder is the corpus (the same bytes, planted leaks included) followed
by clean filler up to X GB of file bytes (GB = 10^9): GSM8K train documents with their words
shuffled within each document (seeded, the same bytes every build; about a minute for 2 GB).
contam-guard alone (peers would take hours) runs `scan --only gpt3` on it, in one process and
with `--jobs 2`, --runs times like every row, with the same manifest and options as the main
table's `scan --only gpt3`. A second table, after the main one, shows both scans on the corpus
and on the scale file: seconds, CPU seconds, MB/s of file bytes, peak RSS, peak RSS divided by
that of `scan --only gpt3` on the corpus (flat memory: close to 1 at every size), the `--jobs 2`
speed-up (one process's seconds / `--jobs 2`'s, on the same file) and whether the scale scan
flags the same items and records as the corpus scan (it should: the filler is clean).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks import manifest as manifest_bench
from benchmarks import ours, peers
from benchmarks.context import Context
from benchmarks.corpus import (
    FILLER_SEED,
    GSM8K,
    KNOWN,
    Corpus,
    ScaleFile,
    build_corpus,
    build_scale,
    write_eval,
)
from benchmarks.envs import cache_root, find_python, full_version
from benchmarks.measure import Job, run_once
from benchmarks.report import scale_table, table, write_readme

TOOLS = [ours.TOOL, *peers.PEERS]
MARKER = ".contam-guard-bench-work"  # only a folder holding it is ever emptied


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description=__doc__.split("\n")[0],
        epilog=__doc__[__doc__.index("--scale-gb X") :],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--repeat", type=int, help="copies of GSM8K train in the corpus (default 25; 2 with --quick)"
    )
    parser.add_argument("--runs", type=int, help="timed runs per configuration (default 3; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="small corpus, one run, README untouched")
    parser.add_argument(
        "--tools",
        nargs="+",
        choices=TOOLS,
        default=TOOLS,
        metavar="TOOL",
        help=f"which tools to run (default all: {' '.join(TOOLS)})",
    )
    parser.add_argument(
        "--work", type=Path, help="work folder, emptied first (default <cache>/work, removed afterwards)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the work folder (corpus, run outputs, logs)"
    )
    parser.add_argument(
        "--readme",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write the table into benchmarks/README.md (default: yes unless --quick)",
    )
    parser.add_argument(
        "--scale-gb",
        type=float,
        default=0.0,
        metavar="X",
        help="also scan (contam-guard only, --only gpt3, 1 process and --jobs 2) the corpus followed by "
        "clean filler up to X GB (10^9 bytes) of file, and print a second table (default 0: off)",
    )
    parser.add_argument(
        "--skip-engines",
        action="store_true",
        help="leave out the Spark and Ray rows (the default scan on one machine only)",
    )
    parser.add_argument(
        "--manifest-items",
        type=int,
        default=manifest_bench.ITEMS,
        metavar="N",
        help="also register N generated items (20 sets) and measure the manifest's size, a one-record "
        "scan's start-up and peak RSS (python -m benchmarks.manifest; default 100,000; 0: off)",
    )
    parser.add_argument(
        "--engines",
        action="store_true",
        help="only contam-guard's `scan --only gpt3` and default-scan rows (local, Spark, Ray); "
        "no peers, no manifest benchmark, README untouched",
    )
    args = parser.parse_args(argv)
    if args.engines:
        args.tools, args.manifest_items = [ours.TOOL], 0
        args.readme = False
    if args.scale_gb < 0:
        parser.error("--scale-gb must be 0 (off) or more")
    if args.scale_gb and ours.TOOL not in args.tools:
        parser.error(f"--scale-gb measures {ours.TOOL}: add it to --tools")
    args.repeat = args.repeat or (2 if args.quick else 25)
    args.runs = args.runs or (1 if args.quick else 3)
    args.readme = (not args.quick) if args.readme is None else args.readme
    return args


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def describe(corpus: Corpus, runs: int, items: int) -> str:
    planted = "; ".join(f"test {p.test_index} in record `{p.record_id}`" for p in corpus.plants)
    known = ", ".join(f"{i} ({n} words)" for i, n in KNOWN.items())
    newer = find_python((3, 12))
    where = f"; corpus-assay and decon on Python {full_version(newer)}" if newer else ""
    timing = (
        f"Medians of {runs} interleaved runs (one run for a configuration whose first took over "
        f"{SLOW_RUN_SECONDS:.0f} s)"
        if runs > 1
        else "One run"
    )
    return "\n".join(
        [
            f"Corpus: GSM8K train question + answer x{corpus.repeat}: {corpus.records:,} JSONL records, "
            f"{corpus.text_bytes / 1e6:.1f} MB of text ({corpus.bytes / 1e6:.1f} MB file); "
            "MB/s counts the text.  ",
            f"Planted verbatim: {planted}. Known natural overlaps (longest shared run with a train "
            f"question): {known}.  ",
            f"Registered set: the {items:,} GSM8K test questions.  ",
            f"Machine: {os.cpu_count()} cores (`os.cpu_count()`), {platform.system()} {platform.machine()}; "
            f"contam-guard and the other peers on Python {platform.python_version()}{where}.  ",
            f"{timing}; wall time of the whole child process(es), start-up and index building included; "
            "peak RSS is the largest single process (`os.wait4`).",
        ]
    )


def describe_scale(scale: ScaleFile) -> str:
    base = scale.base
    return "\n".join(
        [
            f"Scale: `{scale.path.name}` is the corpus above ({base.bytes / 1e6:,.1f} MB file, "
            f"{base.records:,} records, planted leaks included) followed by {scale.filler_records:,} "
            f"clean filler records (GSM8K train documents, words shuffled within each document, "
            f"seed {FILLER_SEED}): {scale.bytes / 1e6:,.1f} MB, {scale.records:,} records. "
            "contam-guard only, same manifest and options as above.  ",
            "MB/s counts file bytes here. Peak RSS ÷: the row's peak RSS over that of `scan --only gpt3` "
            "on the corpus. `--jobs 2` speed-up: seconds of the same scan in one process, on the same "
            "file, ÷ the row's. Same findings: the items and record count the same configuration "
            "flags on the corpus (the default scan's rewording rule also finds the filler: shuffled "
            "train documents are rewordings).",
        ]
    )


def build_scale_apart(path: Path, corpus: Corpus, target_bytes: int) -> ScaleFile:
    """``build_scale`` in a spawned process, so that this one's peak RSS stays small.

    Linux starts a child's ``ru_maxrss`` from its parent's peak RSS (the high-water mark of the
    memory it replaces at exec), so filler arrays built here would show up as every row's peak.
    """
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(build_scale, path, corpus, target_bytes).result()


SLOW_RUN_SECONDS = 60.0
"""A configuration whose first run takes longer is measured once."""


def measure(jobs: list[Job], runs: int, work: Path) -> None:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    log(f"this process's peak RSS: {own:.0f} MiB (on Linux, no row's peak RSS can show less)")
    for run in range(runs):
        log(f"load average before run {run + 1}: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for number, job in enumerate(jobs):
            if job.skip is not None or (job.error and not job.samples):
                continue
            if run > 0 and job.samples and job.samples[0].seconds > SLOW_RUN_SECONDS:
                continue
            run_dir = work / "runs" / f"{number:02d}"
            log(f"run {run + 1}/{runs}: {job.tool}, {job.config} ({job.input_bytes / 1e6:,.1f} MB) ...")
            result = run_once(job, run_dir)
            if isinstance(result, str):
                job.error = result
                log(f"  failed: {result}")
                continue
            job.samples.append(result)
            log(
                f"  {result.seconds:.2f} s ({result.cpu:.2f} s CPU), "
                f"{job.input_bytes / 1e6 / result.seconds:.2f} MB/s, "
                f"{result.rss_mib:.0f} MiB"
            )
            if job.found is None and job.verdict is not None:
                try:
                    job.found = job.verdict(run_dir)
                except Exception as error:  # a verdict that cannot be read is a note, not a crash
                    job.note = f"{job.note}; verdict unreadable: {error!r}".lstrip("; ")


def goals(jobs: list[Job], scaled: list[Job]) -> str:
    """The default scan against the goals it is held to, as ratios of this run's rows (wall / CPU)."""
    by = {(j.tool, j.config): j for j in jobs if j.skip is None and j.samples}
    scale_by = {j.config: j for j in scaled if j.skip is None and j.samples}
    default = by.get((ours.TOOL, ours.DEFAULT))
    lines = []

    def ratio(slow: Job, fast: Job) -> str:
        return f"{slow.seconds / fast.seconds:.2f} / {slow.cpu / fast.cpu:.2f}"

    janitor = next((j for (tool, _), j in by.items() if tool.startswith("lm-eval janitor")), None)
    gpt3 = by.get((ours.TOOL, ours.BASELINE))
    if default is not None and janitor is not None:
        lines.append(f"- janitor ÷ default scan: {ratio(janitor, default)} (goal: at least 30, on x10)")
    if janitor is not None and gpt3 is not None:
        # The default scan runs GPT-3's rule and five more over the same reading of the corpus:
        # the GPT-3-only scan's ratio is the most the line above can reach.
        lines.append(f"- janitor ÷ `--only gpt3` (the ceiling of the line above): {ratio(janitor, gpt3)}")
    if default is not None and gpt3 is not None:
        lines.append(f"- default scan ÷ `--only gpt3`: {ratio(default, gpt3)} (goal: at most 1.5, on x25)")
    ours_by = {c: j for (tool, c), j in by.items() if tool == ours.TOOL}
    for label, rows in (("corpus", ours_by), ("scale file", scale_by)):
        one, two = rows.get(ours.DEFAULT), rows.get(ours.DEFAULT_JOBS_2)
        if one is not None and two is not None:
            lines.append(
                f"- {label}: default scan, one process ÷ `--jobs 2` (wall): {one.seconds / two.seconds:.2f} "
                "(goal: never below 1; at least 1.7 at 1 GB)"
            )
    return "Goals (wall / CPU ratios of the rows above):\n\n" + ("\n".join(lines) or "- (rows missing)")


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if not (GSM8K / "train.jsonl").is_file():
        raise SystemExit(f"GSM8K not found at {GSM8K}: the benchmark needs ../shared/data/gsm8k")
    work = args.work or cache_root() / "work"
    if args.work and work.exists() and any(work.iterdir()) and not (work / MARKER).exists():
        raise SystemExit(f"{work} is not empty and not a benchmark work folder: choose another --work")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / MARKER).touch()
    try:
        log(f"building the corpus (GSM8K train x{args.repeat}) in {work}")
        corpus = build_corpus(work / "corpus.jsonl", args.repeat)
        eval_path = work / "gsm8k-test-questions.jsonl"
        ctx = Context(work, corpus, eval_path, write_eval(eval_path))
        manifest = ours.build_manifest(ctx) if ours.TOOL in args.tools else None
        jobs = ours.jobs(ctx, manifest, not args.skip_engines) if manifest is not None else []
        if args.engines:
            jobs = [j for j in jobs if j.config == ours.BASELINE or j.config.startswith(ours.DEFAULT_SCAN)]
        scale, scaled = None, []
        if args.scale_gb and manifest is not None:
            log(f"building {work / 'scale.jsonl'}: the corpus + clean filler up to {args.scale_gb:g} GB")
            start = time.perf_counter()
            try:
                scale = build_scale_apart(work / "scale.jsonl", corpus, round(args.scale_gb * 1e9))
            except ValueError as error:
                raise SystemExit(f"--scale-gb {args.scale_gb:g}: {error}") from None
            seconds = time.perf_counter() - start
            log(f"  {scale.bytes / 1e6:,.1f} MB, {scale.records:,} records in {seconds:.0f} s")
            scaled = ours.scale_jobs(scale, manifest)
        log(f"peers' virtualenvs: {cache_root()}")
        jobs += peers.jobs(ctx, [t for t in args.tools if t in peers.PEERS])
        measure(jobs + scaled, args.runs, work)
        baseline = next((j for j in jobs if j.tool == ours.TOOL and j.config == ours.BASELINE), None)
        block = describe(corpus, args.runs, ctx.eval_items) + "\n\n" + table(jobs, corpus, baseline)
        if scale is not None:
            scaled_configs = (ours.BASELINE, ours.JOBS_2, ours.DEFAULT, ours.DEFAULT_JOBS_2)
            on_corpus = [j for j in jobs if j.tool == ours.TOOL and j.config in scaled_configs]
            inputs = [(corpus.path.name, corpus.bytes, on_corpus), (scale.path.name, scale.bytes, scaled)]
            pairs = {ours.JOBS_2: ours.BASELINE, ours.DEFAULT_JOBS_2: ours.DEFAULT}
            block += "\n\n" + describe_scale(scale) + "\n\n" + scale_table(inputs, corpus, baseline, pairs)
        block += "\n\n" + goals(jobs, scaled)
        if args.manifest_items and ours.TOOL in args.tools:
            log(f"manifest: {args.manifest_items:,} generated items (python -m benchmarks.manifest)")
            rows = manifest_bench.run(
                sys.executable, None, work / "manifest", args.runs, args.manifest_items, corpus.path
            )
            block += "\n\nManifest at scale (`python -m benchmarks.manifest`): " + rows
        print(block)
        if args.readme:
            write_readme(block)
            log("table written to benchmarks/README.md")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
