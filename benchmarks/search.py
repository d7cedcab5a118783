"""The search index (``contam-guard index`` / ``search``): build speed, size, query latency.

    python -m benchmarks.search              # GSM8K train x10 (about 42 MB of JSONL)
    python -m benchmarks.search --repeat 25 --no-readme

The corpus is the main benchmark's (``benchmarks.corpus``: GSM8K train question + answer as one
``text`` field, repeated). Rows:

- index build: ``contam-guard index corpus.jsonl --index DIR --field text`` as a fresh child
  process (start-up included): seconds, MB/s of file bytes (per wall second, and per CPU second:
  steadier on a shared machine), peak RSS (``os.wait4``);
- incremental add: the GSM8K test set added to that index (a new generation: the old one's
  files hard-linked, one new shard and tantivy segment);
- index size ÷ corpus size: every file under DIR over the corpus file's bytes;
- search latency: 100 exact queries (phrases of 3-9 words taken from the corpus at random,
  seeded) and 100 BM25 queries (15 consecutive words of a random record), each through
  ``SearchIndex.search`` with 10 hits and their snippets, the index opened once; p50 and p95.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.corpus import GSM8K, build_corpus

README = Path(__file__).with_name("README.md")
START, END = "<!-- search-bench:start -->", "<!-- search-bench:end -->"


def _child(args: list[str]) -> tuple[float, float, float]:
    """Run ``python -m contam_guard ARGS``; seconds, CPU seconds and peak RSS (MiB) of the child."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "contam_guard", *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"contam-guard {' '.join(args)}: exit {process.returncode}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _queries(corpus: Path, rng: random.Random) -> tuple[list[str], list[str]]:
    texts = [json.loads(line)["text"] for line in corpus.read_text(encoding="utf-8").splitlines()]
    exact: list[str] = []
    ranked: list[str] = []
    while len(exact) < 100:
        words = rng.choice(texts).split()
        size = rng.randint(3, 9)
        if len(words) > size:
            start = rng.randrange(len(words) - size)
            exact.append(" ".join(words[start : start + size]))
    while len(ranked) < 100:
        words = rng.choice(texts).split()
        if len(words) > 15:
            start = rng.randrange(len(words) - 15)
            ranked.append(" ".join(words[start : start + 15]))
    return exact, ranked


def _latency(index_dir: Path, queries: list[str], *, exact: bool) -> tuple[float, float, float]:
    from contam_guard.search.query import SearchIndex  # noqa: PLC0415 (after the build)

    index = SearchIndex(index_dir)
    times = []
    for query in queries:
        start = time.perf_counter()
        index.search(query, exact=exact, limit=10)
        times.append((time.perf_counter() - start) * 1000)
    p50, p95 = np.percentile(times, [50, 95])
    return float(p50), float(p95), float(max(times))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search", description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=10, help="copies of GSM8K train (default 10)")
    parser.add_argument("--readme", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args(argv)
    if not (GSM8K / "train.jsonl").is_file():
        raise SystemExit(f"GSM8K not found at {GSM8K}")
    work = Path(tempfile.mkdtemp(prefix="contam-guard-search-bench-"))
    try:
        corpus = build_corpus(work / "corpus.jsonl", args.repeat)
        index_dir = work / "index"
        command = ["index", str(corpus.path), "--index", str(index_dir), "--field", "text"]
        build_s, build_cpu, build_rss = _child(command)
        size = _size(index_dir)
        extra = work / "test.jsonl"  # GSM8K test in the corpus's shape (one `text` field)
        rows = [json.loads(line) for line in (GSM8K / "test.jsonl").read_text(encoding="utf-8").splitlines()]
        lines = (json.dumps({"text": r["question"] + "\n" + r["answer"]}) + "\n" for r in rows)
        extra.write_text("".join(lines), encoding="utf-8")
        add_s, add_cpu, _ = _child(["index", str(extra), "--index", str(index_dir), "--field", "text"])
        exact_q, ranked_q = _queries(corpus.path, random.Random(15))
        exact = _latency(index_dir, exact_q, exact=True)
        ranked = _latency(index_dir, ranked_q, exact=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mb = corpus.bytes / 1e6
    rows = [
        "| measure | value |",
        "| --- | --- |",
        f"| corpus | GSM8K train x{args.repeat}: {corpus.records:,} records, {mb:.1f} MB JSONL |",
        f"| index build (`contam-guard index`, one process) | {build_s:.1f} s ({build_cpu:.1f} s CPU): "
        f"**{mb / build_s:.2f} MB/s**, {mb / build_cpu:.2f} MB per CPU second; "
        f"peak RSS {build_rss:.0f} MiB |",
        f"| incremental add (GSM8K test, 1,319 records) | {add_s:.1f} s ({add_cpu:.1f} s CPU) |",
        f"| index size ÷ corpus size | **{size / corpus.bytes:.2f}** ({size / 1e6:.1f} MB) |",
        f"| exact search, 100 queries of 3-9 words | p50 **{exact[0]:.1f} ms**, p95 **{exact[1]:.1f} ms** "
        f"(max {exact[2]:.1f}) |",
        f"| BM25 search, 100 queries of 15 words | p50 **{ranked[0]:.1f} ms**, p95 **{ranked[1]:.1f} ms** "
        f"(max {ranked[2]:.1f}) |",
    ]
    block = "\n".join(rows)
    print(block)
    if args.readme:
        text = README.read_text(encoding="utf-8")
        head, start, rest = text.partition(START)
        _, end, tail = rest.partition(END)
        if not start or not end:
            raise SystemExit(f"{README}: markers {START} / {END} not found")
        README.write_text(f"{head}{START}\n{block}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
