"""contam-guard measured through its CLI in a subprocess, as users run it.

Rows: ``register`` (into a fresh ``init`` folder each run, the ``init`` untimed), ``scan --only
gpt3``, the same scan against a keyed manifest (``init --keyed``: SipHash-2-4), ``scan`` with
every rule (the default), ``scan --jobs 2`` when ``scan --help`` lists ``--jobs``, the default
scan on Spark (``local[2]``) and on Ray (``engine_jobs``), and ``scrub`` when the command exists;
with ``--scale-gb``, the two GPT-3 scans again on the scale file (``scale_jobs``). Options that
may not exist yet are detected
from ``--help``, so the suite runs against whatever the working tree has and says what it skipped.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from benchmarks.context import Context, read_json
from benchmarks.corpus import ScaleFile
from benchmarks.envs import child_env
from benchmarks.measure import Job, Verdict

CLI = Path(sys.executable).with_name("contam-guard")
TOOL = "contam-guard"
GPT3 = ("--only", "gpt3")
BASELINE = "scan --only gpt3"
JOBS_2 = "scan --only gpt3 --jobs 2"
DEFAULT_SCAN = "scan, every rule"
"""The start of the default scan's rows' names (local, Spark, Ray)."""
DEFAULT = "scan, every rule (the default)"
DEFAULT_JOBS_2 = "scan, every rule, --jobs 2"
ENV = child_env(COLUMNS="200", NO_COLOR="1")
BENCH_KEY = "contam-guard-benchmark-key-" + "0123456789abcdef" * 2
"""A fixed, public secret: the keyed rows measure speed, nothing here needs hiding."""
KEY_ENV = {**ENV, "CONTAM_GUARD_KEY": BENCH_KEY}
KEYED = "scan --only gpt3, keyed manifest (SipHash-2-4)"


def cli() -> list[str]:
    return [str(CLI)] if CLI.exists() else [sys.executable, "-m", "contam_guard"]


def help_text(*command: str) -> str | None:
    """``contam-guard COMMAND --help`` output, or None when the command does not exist."""
    out = subprocess.run([*cli(), *command, "--help"], capture_output=True, text=True, env=ENV, check=False)
    return out.stdout if out.returncode == 0 else None


def has_option(help_out: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_out) is not None


def review_verdict(run_dir: Path) -> Verdict:
    """Items with a finding, and the training records named by the findings' pairs."""
    findings = read_json(run_dir / "review.json")["findings"]
    records = {(p["source"], p["record"]) for f in findings for p in f["pairs"]}
    return Verdict({int(f["test_index"]) for f in findings}, len(records))


def register_argv(eval_path: Path, manifest: str) -> list[str]:
    return [
        *cli(),
        "register",
        "gsm8k",
        str(eval_path),
        "--field",
        "question",
        "--id-field",
        "id",
        "--manifest",
        manifest,
    ]


def build_manifest(ctx: Context) -> Path:
    """The manifest every scan uses: ``init`` + ``register`` once, outside the timed runs."""
    root = ctx.work / "contam-guard-manifest"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    manifest = root / ".contam-guard" / "manifest.json"
    subprocess.run([*cli(), "init", str(root)], check=True, capture_output=True, env=ENV)
    subprocess.run(register_argv(ctx.eval_path, str(manifest)), check=True, capture_output=True, env=ENV)
    return manifest


def keyed_jobs(ctx: Context, corpus_path: Path, input_bytes: int, records: int) -> list[Job]:
    """``scan --only gpt3`` with the set registered keyed by ``init --keyed`` + ``register``
    (SipHash-2-4, through the prefilter). The manifest is built once, outside the timed runs; the
    key is in the rows' environment."""
    rows: list[Job] = []
    root = ctx.work / "contam-guard-keyed"
    shutil.rmtree(root, ignore_errors=True)
    keyed = root / ".contam-guard" / "manifest.json"
    init_argv = [*cli(), "init", str(root), "--keyed"]
    init = subprocess.run(init_argv, check=False, capture_output=True, text=True, env=KEY_ENV)
    if init.returncode != 0:
        return [Job(TOOL, KEYED, skip=f"`contam-guard init --keyed` failed: {init.stderr.strip()[-200:]}")]
    subprocess.run(register_argv(ctx.eval_path, str(keyed)), check=True, capture_output=True, env=KEY_ENV)
    spec = read_json(keyed)["spec"]["hash"]
    note = f"hash spec {spec}; target: at least 90% of the unkeyed GPT-3 scan's speed (ratio <= 1.11)"
    rows.append(
        Job(TOOL, KEYED, [scan_argv(corpus_path, keyed, *GPT3)], input_bytes, records, env=KEY_ENV,
            verdict=review_verdict, note=note)
    )  # fmt: skip
    return rows


def _init(run_dir: Path) -> None:
    subprocess.run([*cli(), "init", str(run_dir)], check=True, capture_output=True, env=ENV)


def scan_argv(data: Path, manifest: Path, *options: str) -> list[str]:
    """``contam-guard scan`` as every scan row runs it, ``options`` (``--only``, ``--jobs``) last."""
    return [
        *cli(),
        "scan",
        str(data),
        "--field",
        "text",
        "--exit-zero",
        "--manifest",
        str(manifest),
        "--review-json",
        "{run}/review.json",
        *options,
    ]


def scan_job(
    config: str,
    argv: list[str],
    input_bytes: int,
    records: int,
    note: str = "",
    *,
    env: Mapping[str, str] = ENV,
    prepare: Callable[[Path], None] | None = None,
) -> Job:
    return Job(
        TOOL,
        config,
        [argv],
        input_bytes,
        records,
        env=env,
        prepare=prepare,
        verdict=review_verdict,
        note=note,
    )


def gpt3_jobs(data: Path, manifest: Path, input_bytes: int, records: int) -> list[Job]:
    """``scan --only gpt3`` on ``data``, and with ``--jobs 2`` (a skipped row if scan has no ``--jobs``)."""
    return _with_jobs_2(BASELINE, JOBS_2, data, manifest, input_bytes, records, GPT3)


def default_jobs(data: Path, manifest: Path, input_bytes: int, records: int) -> list[Job]:
    """The default scan (every rule) on ``data``, in one process and with ``--jobs 2``."""
    note = (
        "items: any rule's findings (GPT-4's 50-character windows add a few, the rewording rules a few more)"
    )
    rows = _with_jobs_2(DEFAULT, DEFAULT_JOBS_2, data, manifest, input_bytes, records, ())
    rows[0].note = note
    return rows


def _with_jobs_2(
    one: str, two: str, data: Path, manifest: Path, input_bytes: int, records: int, options: tuple[str, ...]
) -> list[Job]:
    rows = [scan_job(one, scan_argv(data, manifest, *options), input_bytes, records)]
    if has_option(help_text("scan") or "", "--jobs"):
        rows.append(scan_job(two, scan_argv(data, manifest, *options, "--jobs", "2"), input_bytes, records))
    else:
        rows.append(Job(TOOL, two, skip="`contam-guard scan --help` lists no `--jobs` yet"))
    return rows


def jobs(ctx: Context, manifest: Path, engines: bool = True) -> list[Job]:
    """The rows of the main table, on the corpus, with ``manifest`` (from ``build_manifest``);
    ``engines``: the Spark and Ray rows too."""
    corpus = ctx.corpus
    baseline, jobs_2 = gpt3_jobs(corpus.path, manifest, corpus.text_bytes, corpus.records)
    return [
        Job(
            TOOL,
            "register (1,319 test questions)",
            [register_argv(ctx.eval_path, "{run}/.contam-guard/manifest.json")],
            ctx.eval_bytes,
            ctx.eval_items,
            env=ENV,
            prepare=_init,
            scans_corpus=False,
            note="MB/s and records/s of the registered file",
        ),
        baseline,
        *keyed_jobs(ctx, corpus.path, corpus.text_bytes, corpus.records),
        jobs_2,
        *default_jobs(corpus.path, manifest, corpus.text_bytes, corpus.records),
        *(engine_jobs(corpus.path, manifest, corpus.text_bytes, corpus.records) if engines else []),
        _scrub_job(ctx, manifest),
    ]


SPARK = "scan, every rule, --engine spark --master local[2]"
SPARK_NO_ARCHIVE = "scan, every rule, --engine spark --master local[2], no class archive"
CLASS_ARCHIVE_ENV = "CONTAM_GUARD_SPARK_CLASS_ARCHIVE"
"""The command line's setting for Spark's class archive (``engines/spark/class_archive.py``), named
here, not imported: this module drives the command line of whichever tree it measures."""
RAY = "scan, every rule, --engine ray (Ray started on this machine)"


def engine_jobs(data: Path, manifest: Path, input_bytes: int, records: int) -> list[Job]:
    """The default scan on Spark (``local[2]``: two task threads in one JVM) and on Ray Data (a
    Ray instance started by the scan, one worker per core), when ``scan --help`` offers the
    engine and its extra is installed (else a skipped row saying why). Start-up counts, as it
    does for every row: the JVM, or Ray's processes, start in each run."""
    scan_help = help_text("scan") or ""
    rows = []
    if not has_option(scan_help, "--engine"):
        skip = "`contam-guard scan --help` lists no `--engine` yet"
        return [Job(TOOL, SPARK, skip=skip), Job(TOOL, RAY, skip=skip)]
    if importlib.util.find_spec("pyspark") is None:
        rows.append(Job(TOOL, SPARK, skip="PySpark is not installed (pip install 'contam-guard[spark]')"))
    elif shutil.which("java") is None:
        rows.append(Job(TOOL, SPARK, skip="no `java` on the PATH: Spark needs Java 17 or newer"))
    else:
        argv = scan_argv(data, manifest, "--engine", "spark", "--master", "local[2]")
        argv += ["--spark-conf", "spark.ui.enabled=false"]
        note = "the JVM's start counts; peak RSS is the largest process (the JVM or a Python worker)"
        archives = data.parent / "spark-classes"  # in the work folder: each run of the benchmark saves anew
        saved_env = {**ENV, CLASS_ARCHIVE_ENV: str(archives)}
        saved = (
            f"{note}; Spark's classes mapped from the archive that the first local scan on a machine "
            "saves (saved by an untimed scan before the first run)"
        )
        save = functools.partial(_save_classes, argv, env=saved_env, archives=archives)
        rows.append(scan_job(SPARK, argv, input_bytes, records, saved, env=saved_env, prepare=save))
        off_note = f"{note}; {CLASS_ARCHIVE_ENV}=off"
        off_env = {**ENV, CLASS_ARCHIVE_ENV: "off"}
        rows.append(scan_job(SPARK_NO_ARCHIVE, argv, input_bytes, records, off_note, env=off_env))
    if not has_option(scan_help, "--ray-address"):
        rows.append(Job(TOOL, RAY, skip="`contam-guard scan --help` lists no `--engine ray` yet"))
    elif importlib.util.find_spec("ray") is None:
        rows.append(Job(TOOL, RAY, skip="Ray is not installed (pip install 'contam-guard[ray]')"))
    else:
        note = (
            "Ray's start counts (its processes are started for each run); peak RSS: the CLI's "
            "process and the workers it waited for"
        )
        argv = scan_argv(data, manifest, "--engine", "ray")
        rows.append(scan_job(RAY, argv, input_bytes, records, note=note))
    return rows


def _save_classes(argv: list[str], run_dir: Path, *, env: dict[str, str], archives: Path) -> None:
    """Run the Spark scan once, untimed, when ``archives`` holds no class archive yet: the first
    local scan on a machine saves it (and takes some 20 s more)."""
    if any(archives.glob("*.jsa")):
        return
    subprocess.run(
        [a.replace("{run}", str(run_dir)) for a in argv],
        cwd=run_dir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


def scale_jobs(scale: ScaleFile, manifest: Path) -> list[Job]:
    """``scan --only gpt3`` and the default scan, each in one process and with ``--jobs 2``, on the
    scale file; MB/s there counts file bytes."""
    return [
        *gpt3_jobs(scale.path, manifest, scale.bytes, scale.records),
        *default_jobs(scale.path, manifest, scale.bytes, scale.records),
    ]


def scrub_verdict(run_dir: Path) -> Verdict:
    """Items named by the removal log's matches, and the records it touched."""
    lines = (run_dir / "scrub-log.jsonl").read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines if line.strip()]
    items = {int(m["item"]) for e in entries for r in e["removed"] for m in r["matches"]}
    return Verdict(items, len(entries), "records flagged: records the log says were touched")


def _scrub_job(ctx: Context, manifest: Path) -> Job:
    scrub_help = help_text("scrub")
    if scrub_help is None:
        return Job(TOOL, "scrub", skip="`contam-guard scrub --help` does not exit 0: no scrub command yet")
    outs = ("--output", "--out", "-o")
    out_option = next((o for o in outs if has_option(scrub_help, o)), None)
    if out_option is None:
        return Job(TOOL, "scrub", skip=f"`contam-guard scrub --help` names none of {', '.join(outs)}")
    argv = [*cli(), "scrub", str(ctx.corpus.path)]
    shown = ["scrub", ctx.corpus.path.name]
    for option, value in (
        ("--field", "text"),
        ("--manifest", str(manifest)),
        ("--log", "{run}/scrub-log.jsonl"),
    ):
        if has_option(scrub_help, option):
            argv += [option, value]
            shown += [option, Path(value).name]
    argv += [out_option, "{run}/scrubbed.jsonl"]
    shown += [out_option, "scrubbed.jsonl"]
    note = f"run as `{' '.join(shown)}`"
    if has_option(scrub_help, "--max-doc-freq"):
        note += (
            "; by default n-grams found in more than 10 training records are left alone "
            f"(`--max-doc-freq`, GPT-3's rule), and the corpus holds every train question "
            f"{ctx.corpus.repeat} times: an overlap shared with k train questions is in k x that many records"
        )
    return Job(
        TOOL,
        "scrub (GPT-3 rule, writes the scrubbed file)",
        [argv],
        ctx.corpus.text_bytes,
        ctx.corpus.records,
        ok_codes=frozenset({0, 1}),
        env=ENV,
        verdict=scrub_verdict if "--log" in shown else None,
        note=note,
    )
