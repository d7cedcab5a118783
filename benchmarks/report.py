"""The results tables (Markdown), and their place in benchmarks/README.md between the markers."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from benchmarks.corpus import KNOWN, Corpus
from benchmarks.measure import Job, Verdict

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
README = Path(__file__).resolve().parent / "README.md"
COLUMNS = [
    "tool", "configuration", "planted 5, 50, 500", "known 581, 602, 632", "other items flagged",
    "records flagged", "seconds", "CPU seconds", "MB/s", "records/s", "peak RSS MiB",
    "contam-guard GPT-3 ÷ tool (wall / CPU)", "notes",
]  # fmt: skip
SCALE_COLUMNS = [
    "input", "configuration", "planted 5, 50, 500", "known 581, 602, 632", "other items flagged",
    "records flagged", "same findings as on the corpus", "seconds", "CPU seconds", "MB/s (file bytes)",
    "peak RSS MiB", "peak RSS ÷ corpus GPT-3 scan's", "`--jobs 2` speed-up", "notes",
]  # fmt: skip
DASH = "—"


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


def verdict_cells(found: Verdict, corpus: Corpus) -> list[str]:
    """The planted, known, other-items and records columns for what a tool found."""
    planted = [p.test_index for p in corpus.plants]
    return [
        verdict(found.items, planted),
        verdict(found.items, KNOWN),
        others(found.items, set(planted) | set(KNOWN)),
        DASH if found.records is None else f"{found.records:,}",
    ]


def same_findings(found: Verdict, reference: Verdict) -> str:
    """``✔ same`` when ``found`` names the same items and record count as ``reference``."""
    differences = []
    if extra := sorted(found.items - reference.items):
        differences.append(f"also {', '.join(map(str, extra))}")
    if missing := sorted(reference.items - found.items):
        differences.append(f"not {', '.join(map(str, missing))}")
    if found.records != reference.records:
        differences.append(f"records {reference.records} → {found.records}")
    return f"✘ {'; '.join(differences)}" if differences else "✔ same"


def mbps(job: Job) -> float:
    return job.input_bytes / 1e6 / job.seconds


def cpu_mbps(job: Job) -> float:
    return job.input_bytes / 1e6 / job.cpu


def row(job: Job, corpus: Corpus, baseline: Job | None) -> list[str]:
    if job.skip is not None or not job.samples:
        return [job.tool, job.config, *[DASH] * (len(COLUMNS) - 3), not_run(job)]
    found = job.found
    cells = [DASH] * 4
    if found is not None and job.scans_corpus:
        cells = verdict_cells(found, corpus)
    ratio = DASH
    if baseline is not None and baseline.samples and job.scans_corpus:
        ratio = f"{mbps(baseline) / mbps(job):.2f} / {cpu_mbps(baseline) / cpu_mbps(job):.2f}"
    notes = notes_of(job)
    return [
        job.tool, job.config, *cells, f"{job.seconds:.2f}", f"{job.cpu:.2f}", f"{mbps(job):.2f}",
        f"{job.records / job.seconds:,.0f}", f"{job.rss_mib:.0f}", ratio, notes,
    ]  # fmt: skip


def not_run(job: Job) -> str:
    return job.skip or f"error: {job.error}"


def notes_of(job: Job) -> str:
    found = job.found
    notes = [job.note, found.note if found else "", f"a later run failed: {job.error}" if job.error else ""]
    return "; ".join(filter(None, notes))


def measured(job: Job | None) -> bool:
    return job is not None and job.skip is None and bool(job.samples)


def scale_row(
    label: str, size: int, job: Job, one: Job, corpus: Corpus, reference: Job | None, same_as: Job | None
) -> list[str]:
    """A row of the scale table: ``job`` on a file of ``size`` bytes; ``one`` is its one-process
    row, ``same_as`` the corpus row whose findings it should repeat."""
    if not measured(job):
        return [label, job.config, *[DASH] * (len(SCALE_COLUMNS) - 3), not_run(job)]
    found, cells, same = job.found, [DASH] * 4, DASH
    if found is not None:
        cells = verdict_cells(found, corpus)
        if same_as is not None and same_as.found is not None:
            same = same_findings(found, same_as.found)
    rss = f"{job.rss_mib / reference.rss_mib:.2f}" if reference is not None and measured(reference) else DASH
    speedup = f"{one.seconds / job.seconds:.2f}" if job is not one and measured(one) else DASH
    return [
        label, job.config, *cells, same, f"{job.seconds:.2f}", f"{job.cpu:.2f}",
        f"{size / 1e6 / job.seconds:.2f}", f"{job.rss_mib:.0f}", rss, speedup, notes_of(job),
    ]  # fmt: skip


def scale_table(
    inputs: list[tuple[str, int, list[Job]]],
    corpus: Corpus,
    reference: Job | None,
    one_process: dict[str, str] | None = None,
) -> str:
    """contam-guard's scans as the input grows.

    ``inputs`` are (file name, file bytes, rows): the rows run on that file, the corpus first.
    ``one_process`` maps a ``--jobs 2`` row's configuration to its one-process row's (the
    speed-up divides that row's seconds by its own). ``reference`` is ``scan --only gpt3`` on the
    corpus: the peak RSS ratio divides by its peak RSS; "same findings" compares a row with the
    corpus row of the same one-process configuration (``reference`` when there is none).
    """
    pairs = one_process or {}
    on_corpus = {job.config: job for job in inputs[0][2]} if inputs else {}
    lines = ["| " + " | ".join(SCALE_COLUMNS) + " |", "|" + " --- |" * len(SCALE_COLUMNS)]
    for name, size, jobs in inputs:
        label = f"{name}, {size / 1e6:,.1f} MB"
        by_config = {job.config: job for job in jobs}
        for job in jobs:
            base = pairs.get(job.config, job.config)
            same = on_corpus.get(base, reference)
            row = scale_row(label, size, job, by_config.get(base, job), corpus, reference, same)
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


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
