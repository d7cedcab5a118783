"""The results table (Markdown), and its place in benchmarks/README.md between the markers."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from benchmarks.corpus import KNOWN, Corpus
from benchmarks.measure import Job

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
README = Path(__file__).resolve().parent / "README.md"
COLUMNS = [
    "tool", "configuration", "planted 5, 50, 500", "known 581, 602, 632", "other items flagged",
    "records flagged", "seconds", "CPU seconds", "MB/s", "records/s", "peak RSS MiB",
    "contam-guard GPT-3 ÷ tool (wall / CPU)", "notes",
]  # fmt: skip


def verdict(found: set[int], wanted: Iterable[int]) -> str:
    wanted = list(wanted)
    hit = [i for i in wanted if i in found]
    if len(hit) == len(wanted):
        return "✔ all"
    return "✘ none" if not hit else f"✘ only {', '.join(map(str, hit))}"


def others(found: set[int], expected: set[int]) -> str:
    extra = sorted(found - expected)
    if not extra:
        return "0"
    shown = ", ".join(map(str, extra[:8])) + (", …" if len(extra) > 8 else "")
    return f"{len(extra)} ({shown})"


def mbps(job: Job) -> float:
    return job.input_bytes / 1e6 / job.seconds


def cpu_mbps(job: Job) -> float:
    return job.input_bytes / 1e6 / job.cpu


def row(job: Job, corpus: Corpus, baseline: Job | None) -> list[str]:
    dash = "—"
    if job.skip is not None or not job.samples:
        reason = job.skip or f"error: {job.error}"
        return [job.tool, job.config, *[dash] * (len(COLUMNS) - 3), reason]
    found = job.found
    planted = [p.test_index for p in corpus.plants]
    cells = [dash] * 4
    if found is not None and job.scans_corpus:
        cells = [
            verdict(found.items, planted),
            verdict(found.items, KNOWN),
            others(found.items, set(planted) | set(KNOWN)),
            dash if found.records is None else f"{found.records:,}",
        ]
    ratio = dash
    if baseline is not None and baseline.samples and job.scans_corpus:
        ratio = f"{mbps(baseline) / mbps(job):.2f} / {cpu_mbps(baseline) / cpu_mbps(job):.2f}"
    notes = [job.note, found.note if found else "", f"a later run failed: {job.error}" if job.error else ""]
    return [
        job.tool, job.config, *cells, f"{job.seconds:.2f}", f"{job.cpu:.2f}", f"{mbps(job):.2f}",
        f"{job.records / job.seconds:,.0f}", f"{job.rss_mib:.0f}", ratio, "; ".join(filter(None, notes)),
    ]  # fmt: skip


def table(jobs: list[Job], corpus: Corpus, baseline: Job | None) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(job, corpus, baseline)) + " |" for job in jobs]
    return "\n".join(lines)


def write_readme(block: str, readme: Path = README) -> None:
    text = readme.read_text(encoding="utf-8")
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"{readme}: markers {START} / {END} not found")
    readme.write_text(f"{head}{START}\n{block.strip()}\n{END}{tail}", encoding="utf-8")
