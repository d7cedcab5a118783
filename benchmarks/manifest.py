"""The manifest at the scale of twenty benchmarks: register, size, start-up, memory.

    python -m benchmarks.manifest                                   # this tree
    python -m benchmarks.manifest --before /other/.venv/bin/python  # and another checkout beside it

100,000 generated items (``benchmarks.golden_sets``: three GSM8K-train sentences each, about 50
words) are registered as 20 sets of 5,000 (one ``register`` each, as a project adds benchmarks
one by one; every view and rule, so window hashes too). Then, each a fresh child process:

- **register**: the wall time of the 20 ``register`` commands together;
- **bytes per golden character**: every file of the manifest (the index and the sets' binary
  files; format 1: its one JSON file) over the characters of the items' text;
- **start-up**: ``scan`` of a one-record JSONL file whose record is one generated item verbatim
  (median of ``--runs``; wall time, and CPU time, which a loaded machine inflates less): what
  every pre-commit hook pays; the same with GSM8K test alone;
- **peak RSS** of that scan (``os.wait4``) against the bytes it maps: the manifest's binary files,
  each mapped whole (format 1 maps nothing: it reads its JSON file);
- **planted item found**: the scan exits 1 and names the planted item's id;
- with ``--corpus``, the default scan of that file against as many items and against GSM8K test
  alone, then against the items again with the reworded rule's ``report_floor`` at its
  threshold (a tree without that setting leaves the row empty); and the default scan of the
  corpus's first ``HEAD_RECORDS`` records, a fine-tuning file's size, against both (the scan
  whose stages and tables a large manifest makes dearest to choose: too small to build the
  in-memory tables, too large for the numpy stage).

Inputs are built under ``--work`` (default: a new temporary folder), never in the repository.
Nothing asserts: the numbers are printed as a Markdown table (``make bench`` adds it to its own).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.corpus import GSM8K
from benchmarks.envs import child_env
from benchmarks.golden_sets import WORDS, GoldenSets, write_sets
from benchmarks.measure import Sample, run_step

ENV = child_env(COLUMNS="200", NO_COLOR="1")
ENV.pop("CONTAM_GUARD_KEY", None)
ITEMS = 100_000
SETS = 20
PLANTED = (7, 1234)  # (set, item): the item planted verbatim in the one-record file
HEAD_RECORDS = 200


@dataclass(frozen=True)
class Result:
    label: str
    register_seconds: float
    manifest_bytes: int
    mapped_bytes: int
    startup: float
    startup_cpu: float
    rss_mib: float
    found: bool
    gsm8k_startup: float
    gsm8k_startup_cpu: float
    gsm8k_rss_mib: float
    gsm8k_mapped: int
    corpus_scan: Sample | None = None
    gsm8k_corpus_scan: Sample | None = None
    floored_corpus_scan: Sample | None = None
    """The corpus scan again with the reworded rule's report floor at its threshold (None: not
    measured, or a tree without that setting)."""
    head_scan: Sample | None = None
    """The default scan of the corpus's first ``HEAD_RECORDS`` records against the items."""
    gsm8k_head_scan: Sample | None = None


def _cli(python: str, args: list[str], project: Path, log: Path) -> tuple[int, Sample]:
    return run_step([python, "-m", "contam_guard", *args], project, ENV, log)


def _checked(python: str, args: list[str], project: Path, log: Path) -> Sample:
    code, sample = _cli(python, args, project, log)
    if code != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        raise SystemExit(f"{' '.join(args[:2])} exited {code}: {' | '.join(tail)} (log: {log})")
    return sample


def _guard_files(project: Path) -> tuple[int, int]:
    """(bytes of the whole manifest, bytes of its binary files)."""
    guard = project / ".contam-guard"
    index = (guard / "manifest.json").stat().st_size
    mapped = (
        sum(p.stat().st_size for p in (guard / "sets").rglob("*.bin")) if (guard / "sets").is_dir() else 0
    )
    return index + mapped, mapped


def _startup(
    python: str, project: Path, record: Path, runs: int, expect: str | None
) -> tuple[float, float, float, bool]:
    """Median wall and CPU seconds and peak RSS (MiB) of ``scan RECORD``, and whether it found
    ``expect``."""
    samples: list[Sample] = []
    found = expect is None
    for run in range(runs):
        log = project / f"scan-{run}.log"
        log.write_bytes(b"")
        code, sample = _cli(python, ["scan", str(record)], project, log)
        if code not in (0, 1):
            raise SystemExit(f"scan exited {code} (log: {log})")
        samples.append(sample)
        if expect is not None:
            found = code == 1 and expect in log.read_text(encoding="utf-8", errors="replace")
    return (
        statistics.median(s.seconds for s in samples),
        statistics.median(s.cpu for s in samples),
        statistics.median(s.rss_mib for s in samples),
        found,
    )


def _corpus_scan(python: str, project: Path, corpus: Path, runs: int) -> Sample:
    """The default scan (every rule) of ``corpus`` against ``project``'s manifest: median wall,
    median CPU and the largest peak RSS of ``runs`` runs."""
    samples = []
    for run in range(runs):
        log = project / f"corpus-scan-{run}.log"
        log.write_bytes(b"")
        args = ["scan", str(corpus), "--field", "text", "--exit-zero", "--quiet"]
        samples.append(_checked(python, args, project, log))
    return Sample(
        statistics.median(s.seconds for s in samples),
        statistics.median(s.cpu for s in samples),
        max(s.rss_mib for s in samples),
    )


def floor_at_threshold(project: Path) -> bool:
    """Set the reworded rule's ``report_floor`` to its threshold in ``project``'s config as
    ``init`` wrote it; False where the tree has no such setting (an older checkout)."""
    config = project / ".contam-guard" / "contam-guard.yaml"
    text = config.read_text(encoding="utf-8")
    line = re.search(r"reworded: \{[^}]*threshold: ([0-9.]+), report_floor: [0-9.]+\}", text)
    if line is None:
        return False
    floored = re.sub(r"report_floor: [0-9.]+", f"report_floor: {line.group(1)}", line.group(0))
    config.write_text(text.replace(line.group(0), floored), encoding="utf-8")
    return True


def measure(
    python: str,
    label: str,
    work: Path,
    golden: GoldenSets,
    runs: int,
    corpus: Path | None = None,
    corpus_items: str = "drawn",
) -> Result:
    print(f"{label}: registering {golden.items:,} items in {len(golden.files)} sets ...", file=sys.stderr)
    project = work / label / "project"
    project.mkdir(parents=True)
    log = project / "register.log"
    _checked(python, ["init"], project, log)
    register = 0.0
    for path in golden.files:
        register += _checked(
            python,
            ["register", path.stem, str(path), "--field", "question", "--id-field", "id"],
            project,
            log,
        ).seconds
    total, mapped = _guard_files(project)
    number, item = PLANTED
    rows = golden.files[number].read_text(encoding="utf-8").splitlines()
    planted = json.loads(rows[item % len(rows)])
    record = work / label / "one-record.jsonl"
    record.write_text(json.dumps({"text": planted["question"]}) + "\n", encoding="utf-8")
    startup, startup_cpu, rss, found = _startup(python, project, record, runs, planted["id"])

    alone = work / label / "gsm8k"
    alone.mkdir()
    _checked(python, ["init"], alone, alone / "register.log")
    _checked(
        python,
        ["register", "gsm8k", str(GSM8K / "test.jsonl"), "--field", "question"],
        alone,
        alone / "register.log",
    )
    _, gsm8k_mapped = _guard_files(alone)
    gsm8k_startup, gsm8k_cpu, gsm8k_rss, _ = _startup(python, alone, record, runs, None)
    scans: tuple[Sample | None, Sample | None] = (None, None)
    heads: tuple[Sample | None, Sample | None] = (None, None)
    floored: Sample | None = None
    if corpus is not None:
        what = f"{golden.items:,} {corpus_items} items"
        print(f"  {label}: default scan of {corpus.name}, {what}", file=sys.stderr)
        clean = write_sets(work / label / f"{corpus_items}-golden", golden.items, SETS, words=corpus_items)
        many = work / label / corpus_items
        many.mkdir()
        _checked(python, ["init"], many, many / "register.log")
        for path in clean.files:
            args = ["register", path.stem, str(path), "--field", "question", "--id-field", "id"]
            _checked(python, args, many, many / "register.log")
        scans = (_corpus_scan(python, many, corpus, runs), _corpus_scan(python, alone, corpus, runs))
        head = work / label / "corpus-head.jsonl"
        head.write_bytes(corpus_head(corpus, HEAD_RECORDS))
        heads = (_corpus_scan(python, many, head, runs), _corpus_scan(python, alone, head, runs))
        if floor_at_threshold(many):
            floored = _corpus_scan(python, many, corpus, runs)
    print(
        f"  {label}: register {register:.1f} s, start-up {startup:.2f} s / {gsm8k_startup:.2f} s",
        file=sys.stderr,
    )
    return Result(
        label,
        register,
        total,
        mapped,
        startup,
        startup_cpu,
        rss,
        found,
        gsm8k_startup,
        gsm8k_cpu,
        gsm8k_rss,
        gsm8k_mapped,
        *scans,
        floored,
        *heads,
    )


def corpus_head(corpus: Path, records: int) -> bytes:
    """The first ``records`` lines of ``corpus``."""
    with corpus.open("rb") as f:
        return b"".join(itertools.islice(f, records))


def _scan_cell(sample: Sample | None) -> str:
    return "—" if sample is None else f"{sample.seconds:.2f} / {sample.cpu:.2f} / {sample.rss_mib:,.0f} MiB"


def _scan_ratio(big: Sample | None, small: Sample | None) -> str:
    if big is None or small is None:
        return "—"
    return f"{big.seconds / small.seconds:.2f} / {big.cpu / small.cpu:.2f}"


def table(
    results: list[Result],
    golden: GoldenSets,
    runs: int,
    corpus: Path | None = None,
    corpus_items: str = "drawn",
) -> str:
    def mib(n: int) -> str:
        return f"{n / (1 << 20):,.1f} MiB"

    def ratio(rss: float, mapped: int) -> str:
        return f"{rss / (mapped / (1 << 20)):.2f}x" if mapped else "— (maps nothing)"

    rows = [
        (
            f"register {golden.items:,} items ({len(golden.files)} `register` runs, wall s)",
            [f"{r.register_seconds:.1f}" for r in results],
        ),
        ("manifest on disk", [mib(r.manifest_bytes) for r in results]),
        ("bytes per golden character", [f"{r.manifest_bytes / golden.chars:.2f}" for r in results]),
        (
            f"start-up: scan of a one-record file (wall s / CPU s, median of {runs})",
            [f"{r.startup:.2f} / {r.startup_cpu:.2f}" for r in results],
        ),
        ("peak RSS of that scan", [f"{r.rss_mib:,.0f} MiB" for r in results]),
        ("bytes it maps (the sets' binary files)", [mib(r.mapped_bytes) for r in results]),
        ("peak RSS ÷ bytes mapped", [ratio(r.rss_mib, r.mapped_bytes) for r in results]),
        ("planted item found", ["yes" if r.found else "NO" for r in results]),
        (
            "start-up with GSM8K test alone (1,319 items; wall s / CPU s)",
            [f"{r.gsm8k_startup:.2f} / {r.gsm8k_startup_cpu:.2f}" for r in results],
        ),
        ("peak RSS, GSM8K test alone", [f"{r.gsm8k_rss_mib:,.0f} MiB" for r in results]),
    ]
    if corpus is not None:
        size = f"{corpus.stat().st_size / 1e6:,.1f} MB" if corpus.exists() else "the corpus"
        rows += [
            (
                f"default scan of `{corpus.name}` ({size}), as many items, {WORDS[corpus_items]} "
                "(wall s / CPU s / peak RSS)",
                [_scan_cell(r.corpus_scan) for r in results],
            ),
            ("the same scan, GSM8K test alone", [_scan_cell(r.gsm8k_corpus_scan) for r in results]),
            (
                "ratio (goal: at most 2, and under 500 MB)",
                [_scan_ratio(r.corpus_scan, r.gsm8k_corpus_scan) for r in results],
            ),
            (
                "the first scan with the reworded rule's `report_floor` at its threshold (the same "
                "findings, no near misses; docs/decisions.md, Performance Q10)",
                [_scan_cell(r.floored_corpus_scan) for r in results],
            ),
            (
                "its ratio to GSM8K test alone",
                [_scan_ratio(r.floored_corpus_scan, r.gsm8k_corpus_scan) for r in results],
            ),
            (
                f"default scan of the corpus's first {HEAD_RECORDS} records, as many items (wall s / CPU s "
                "/ peak RSS)",
                [_scan_cell(r.head_scan) for r in results],
            ),
            ("the same scan, GSM8K test alone", [_scan_cell(r.gsm8k_head_scan) for r in results]),
            ("its ratio", [_scan_ratio(r.head_scan, r.gsm8k_head_scan) for r in results]),
        ]
    head = f"| manifest, {golden.items:,} generated items | " + " | ".join(r.label for r in results) + " |"
    out = [head, "| --- |" + " --- |" * len(results)]
    out += [f"| {name} | " + " | ".join(values) + " |" for name, values in rows]
    note = (
        f"{golden.items:,} items, {golden.chars:,} characters of text "
        f"({golden.chars / golden.items:.0f} per item), "
        f"in {SETS} sets; the one-record file holds one item verbatim (set {PLANTED[0]}). "
        f"Machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end (wall times "
        "grow with the load; CPU times much less)."
    )
    return note + "\n\n" + "\n".join(out)


def run(
    python: str,
    before: str | None,
    work: Path,
    runs: int,
    items: int = ITEMS,
    corpus: Path | None = None,
    corpus_items: str = "drawn",
) -> str:
    """Build the sets in ``work``, measure this tree (and ``before``), return the table. With
    ``corpus``, also the default scan of it against all the items and against GSM8K test alone."""
    golden = write_sets(work / "golden", items, SETS)
    results = []
    if before is not None:
        results.append(measure(before, "before", work, golden, runs, corpus, corpus_items))
    label = "after" if before else "this tree"
    results.append(measure(python, label, work, golden, runs, corpus, corpus_items))
    return table(results, golden, runs, corpus, corpus_items)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose contam_guard runs")
    parser.add_argument("--before", help="another checkout's interpreter, measured the same way beside it")
    parser.add_argument("--work", type=Path, help="where the inputs go (default: a new temporary folder)")
    parser.add_argument("--runs", type=int, default=3, help="scans per start-up measurement (median)")
    parser.add_argument("--items", type=int, default=ITEMS, help="generated items (default 100,000)")
    parser.add_argument(
        "--corpus",
        type=Path,
        help="also scan this JSONL file (field text; e.g. the benchmark corpus) with every rule against "
        "all the items and against GSM8K test alone",
    )
    parser.add_argument(
        "--corpus-items",
        choices=sorted(WORDS),
        default="drawn",
        help="how the corpus scan's items are written: drawn (clean against a GSM8K corpus, the default), "
        "shuffled (the rewording rule finds every record in them), as-written",
    )
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="cg-manifest-"))
    work.mkdir(parents=True, exist_ok=True)
    print(run(args.python, args.before, work, args.runs, args.items, args.corpus, args.corpus_items))


if __name__ == "__main__":
    main()
