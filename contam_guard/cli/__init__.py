"""The command line: parse, call a command, map errors to exit codes in one place.

Exit codes (docs/reference/exit-codes.md): 0 clean, 1 a failing rule fired, 2 usage, config, input
or manifest error, 3 internal error (a bug; never 0).

Each command imports its module when it runs: the engine with numpy, pyarrow and matplotlib take
a good part of a second to import, which `--help`, `verify` and a hook on a code-only commit
should not pay.
"""

import contextlib
import datetime as dt
import os
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from contam_guard import __version__
from contam_guard.cli import process  # noqa: F401  (first: sets the process's defaults)
from contam_guard.cli.options import (
    EngineName,
    Read,
    Rules,
    Run,
    ScrubOverrides,
    Spark,
    Target,
    Where,
    grouped,
)
from contam_guard.cli.probe_options import ModelAccess, ProbeBackendName, ProbeOutputs, parse_methods
from contam_guard.core.config import LoadedConfig, load_config
from contam_guard.errors import ContamGuardError, ExitCode
from contam_guard.impact import RULE_CHOICES
from contam_guard.io.readers.base import ReadOptions
from contam_guard.report import console
from contam_guard.report.outputs import Outputs

if TYPE_CHECKING:
    from contam_guard.engines.pipeline import ScanRequest
    from contam_guard.io.git import Range as GitRange

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,  # help text as written ("[spark]" is an extra, not markup), no "<bool>"
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    help="Guard training data against benchmark test-set contamination.",
)


def _exit(code: int) -> NoReturn:
    """Leave with a command's exit code (typer's standalone mode turns this into sys.exit)."""
    raise typer.Exit(int(code))


def _config(path: Path | None) -> LoadedConfig:
    return load_config(path)


def _version(value: bool) -> None:
    if value:
        console.info(f"contam-guard {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Guard training data against benchmark test-set contamination."""


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(metavar="DIRECTORY", help="Project root.")] = Path("."),
    keyed: Annotated[bool, typer.Option(help="Key every hash with the secret in $CONTAM_GUARD_KEY.")] = False,
    key_env: Annotated[
        str, typer.Option(help="Environment variable holding the secret.")
    ] = "CONTAM_GUARD_KEY",
) -> None:
    """Create .contam-guard/ with a commented config and an empty manifest."""
    from contam_guard.cli.commands import init as init_cmd

    _exit(init_cmd.run(directory, keyed=keyed, key_env=key_env))


@app.command()
@grouped
def register(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the golden set.")],
    where: Where,
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FILE",
            help="Golden test files (JSONL, JSON, CSV, Parquet, text); with --benchmark, files or folders.",
            show_default=False,
        ),
    ] = None,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field", help="Text field; repeat for several views (question, answer).", show_default=False
        ),
    ] = None,
    id_field: Annotated[str | None, typer.Option("--id-field", help="Field holding each item's id.")] = None,
    benchmark: Annotated[
        str | None,
        typer.Option(
            "--benchmark",
            metavar="KEY",
            help="A catalogued benchmark (contam-guard benchmarks): its views, id field and data.",
        ),
    ] = None,
    n: Annotated[
        int | None,
        typer.Option("--n", min=5, max=1_000_000, metavar="N", help="This set's own GPT-3 N (words)."),
    ] = None,
    rules: Annotated[  # a set registered without GPT-4's rule stores no window hashes
        str | None,
        typer.Option(
            "--rules",
            metavar="RULE,RULE",
            help="Rules the set is registered for (default: every rule); window hashes are stored "
            "only for gpt4, e.g. --rules gpt3,palm,llama2.",
            show_default=False,
        ),
    ] = None,
    template_share: Annotated[  # template n-grams
        float | None,
        typer.Option(
            "--template-share",
            min=0.0,
            max=0.999999,
            help="An n-gram in more than this share of the set's items (and in --template-min-items) "
            "is template: runs of it alone are ignored. Default 0.01, or the set's.",
            show_default=False,
        ),
    ] = None,
    template_min_items: Annotated[
        int | None,
        typer.Option(
            "--template-min-items",
            min=1,
            help="... and in at least this many items. Default 5, or the set's.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Hash a golden test set into the manifest (a new version when its content changed)."""
    from contam_guard.cli.commands import register as register_cmd

    config, fields = _config(where.config), field or []
    _exit(
        register_cmd.register(
            config,
            name,
            files or [],
            fields,
            id_field,
            where.manifest,
            n=n,
            benchmark=benchmark,
            rules=rules,
            template_share=template_share,
            template_min_items=template_min_items,
        )
    )


@app.command()
@grouped
def benchmarks(where: Where) -> None:
    """List the benchmarks register --benchmark knows: source, split, id, views, data found."""
    from contam_guard.cli.commands import catalogue

    _exit(catalogue.run(_config(where.config)))


@app.command()
@grouped
def remove(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the golden set.")], where: Where
) -> None:
    """Remove a golden set from the manifest."""
    from contam_guard.cli.commands import manage

    _exit(manage.remove(_config(where.config), name, where.manifest))


@app.command("sets")
@grouped
def list_sets(where: Where) -> None:
    """List sets, versions, item counts, bytes per set and view, and items too short for each rule."""
    from contam_guard.cli.commands import manage

    _exit(manage.sets(_config(where.config), where.manifest))


@app.command()
@grouped
def verify(where: Where) -> None:
    """Check the manifest's integrity (format, schema, every file's digest, spec, array sizes) and its key."""
    from contam_guard.cli.commands import manage

    _exit(manage.verify(_config(where.config), where.manifest))


@app.command()
@grouped
def upgrade(where: Where) -> None:
    """Re-hash every set under the current spec from its registered golden files when the spec
    is older; bring the files of a manifest written by an earlier contam-guard up to date."""
    from contam_guard.cli.commands import upgrade as upgrade_command

    _exit(upgrade_command.run(_config(where.config), where.manifest))


def _parse_ns(value: str | None) -> tuple[int, ...]:
    from contam_guard.report.analysis import DEFAULT_NS

    if not value:
        return DEFAULT_NS
    try:
        ns = tuple(sorted({int(part) for part in value.split(",") if part.strip()}))
    except ValueError:
        raise typer.BadParameter("--ns takes a comma-separated list of word counts, e.g. 5,8,13") from None
    if not ns or ns[0] < 5:
        raise typer.BadParameter("every n must be at least 5 (runs under 5 words are not measured)")
    return ns


NsOpt = Annotated[
    str | None,
    typer.Option("--ns", metavar="N,N,...", help="Comma-separated n values (default 5,6,8,10,13,20,30,50)."),
]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="Write the any-hit-at-n curve as a PNG.")]
CsvOpt = Annotated[Path | None, typer.Option("--csv", help="Write the table as CSV.")]


def _scan_request(loaded: LoadedConfig, target: Target, read: Read, rules: Rules, run: Run) -> "ScanRequest":
    """The options ``scan``, ``review`` and ``sweep`` share, checked and gathered."""
    from contam_guard.engines.pipeline import ScanRequest

    if target.staged and target.diff is not None:
        raise typer.BadParameter("use --staged or --diff, not both")
    if not target.paths and not target.staged and target.diff is None:
        raise typer.BadParameter(
            "give training files or folders to scan, or --staged, or --diff BASE[..HEAD]"
        )
    return ScanRequest(
        paths=list(target.paths or []),
        read=ReadOptions(
            fields=tuple(read.field or loaded.config.scan.fields),
            whole_file=read.whole_file,
            group_by=read.group_by,
            encoding=read.encoding,
            errors=read.errors.value,
        ),
        rule_overrides=rules.overrides(),
        show_golden=run.show_golden,
        changes=_git_range(target.staged, target.diff),
        use_allowlist=not run.no_allowlist,
        jobs=run.jobs,
        skip_unreadable=run.skip_unreadable,
        redact_pii=run.redact_pii,
        max_pairs_per_item=run.max_pairs_per_item,
    )


@app.command()
@grouped
def scan(
    target: Target,
    read: Read,
    rules: Rules,
    run: Run,
    outputs: Outputs,
    spark: Spark,
    where: Where,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Report findings but exit 0.")] = False,
    index_dir: Annotated[
        Path | None,
        typer.Option("--index", metavar="DIR", help="Count the search index's records holding each run."),
    ] = None,
    accept_guard_change: Annotated[
        list[str] | None,
        typer.Option(
            "--accept-guard-change",
            metavar="DIGEST",
            help="--diff/--staged: accept the reviewed changes that weaken the guard (the manifest, "
            "config or allowlist) with the digest the report printed for them.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Scan training files (or what a commit adds) against every registered set; exit 1 when a
    failing rule fires on a finding that is not allowlisted, or when the range weakens the guard."""
    from dataclasses import replace

    from contam_guard.cli.commands import scan as scan_cmd

    loaded = _config(where.config)
    request = replace(
        _scan_request(loaded, target, read, rules, run),
        exit_zero=exit_zero,
        manifest_path=where.manifest,
        index=index_dir,
    )
    if index_dir is not None:
        from contam_guard.cli.commands.search import need_extra

        need_extra()
    accept = tuple(accept_guard_change or ())
    conf = spark.conf()
    if spark.engine is EngineName.SPARK:
        from contam_guard.cli.commands.spark_scan import check, spark_engine

        check(request)
        _exit(scan_cmd.run(loaded, request, outputs, spark_engine(spark.master, conf), accept))
    if spark.engine is EngineName.RAY:
        from contam_guard.cli.commands.ray_scan import check as check_ray
        from contam_guard.cli.commands.ray_scan import ray_engine

        check_ray(request)
        _exit(scan_cmd.run(loaded, request, outputs, ray_engine(spark.ray_address), accept))
    _exit(scan_cmd.run(loaded, request, outputs, accept=accept))


@app.command("report-merge")
@grouped
def report_merge(
    outputs: Outputs,
    where: Where,
    folder: Annotated[
        Path,
        typer.Argument(
            metavar="FOLDER", help="Where a datatrove pipeline's ContamGuardFilter saved each rank's scan."
        ),
    ],
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Report findings but exit 0.")] = False,
    no_allowlist: Annotated[
        bool,
        typer.Option("--no-allowlist", help="Audit: ignore the allowlist and the records' allow markers."),
    ] = False,
    redact_pii: Annotated[
        bool,
        typer.Option(
            "--redact-pii", help="Mask e-mails, phone numbers, IPs and keys in training-side snippets."
        ),
    ] = False,
) -> None:
    """Merge the scans of a datatrove pipeline's ranks (contam_guard.engines.datatrove) into one
    report, as scan reports; exit 1 when a failing rule fires on a finding that is not allowlisted."""
    from contam_guard.cli.commands import report_merge as merge_cmd
    from contam_guard.engines.pipeline import ScanRequest

    loaded = _config(where.config)
    request = ScanRequest(
        paths=[],
        read=ReadOptions(),
        exit_zero=exit_zero,
        use_allowlist=not no_allowlist,
        redact_pii=redact_pii,
        manifest_path=where.manifest,
    )
    _exit(merge_cmd.run(loaded, folder, request, outputs))


@app.command()
@grouped
def sweep(
    target: Target,
    read: Read,
    rules: Rules,
    run: Run,
    where: Where,
    ns: NsOpt = None,
    plot: PlotOpt = None,
    csv: CsvOpt = None,
) -> None:
    """One scan (the files and options of `scan`); the share of items sharing a run of at least
    n words, and each rule's share."""
    from dataclasses import replace

    from contam_guard.cli.commands import analysis as analysis_cmd

    loaded = _config(where.config)
    request = replace(_scan_request(loaded, target, read, rules, run), manifest_path=where.manifest)
    _exit(analysis_cmd.run_sweep(loaded, request, _parse_ns(ns), csv_path=csv, plot_path=plot))


@app.command()
@grouped
def dupes(
    name: Annotated[str, typer.Argument(metavar="SET", help="Name of a registered golden set.")],
    where: Where,
    view: Annotated[str | None, typer.Option("--view", help="Only this view (default: every view).")] = None,
    ns: NsOpt = None,
    plot: PlotOpt = None,
    csv: CsvOpt = None,
    review: Annotated[
        Path | None, typer.Option("--review", help="Write a Markdown review of the pairs.")
    ] = None,
    items_csv: Annotated[Path | None, typer.Option("--items-csv", help="Write one row per item.")] = None,
    pairs_csv: Annotated[
        Path | None, typer.Option("--pairs-csv", help="Write one row per notable pair.")
    ] = None,
) -> None:
    """A registered set against its own other items: one problem asked twice."""
    from contam_guard.cli.commands import analysis as analysis_cmd
    from contam_guard.report.outputs import Outputs

    files = {"review": review, "items_csv": items_csv, "pairs_csv": pairs_csv}
    outputs = Outputs(files={k: v for k, v in files.items() if v is not None})
    _exit(
        analysis_cmd.run_dupes(
            _config(where.config),
            name,
            view,
            _parse_ns(ns),
            outputs=outputs,
            csv_path=csv,
            plot_path=plot,
            manifest_path=where.manifest,
        )
    )


def _parse_date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)") from None


@app.command()
@grouped
def review(
    target: Target,
    read: Read,
    rules: Rules,
    run: Run,
    where: Where,
    all_findings: Annotated[bool, typer.Option("--all", help="Also review warn-level findings.")] = False,
    baseline_entries: Annotated[
        bool,
        typer.Option(
            "--baseline", help="Audit the findings `contam-guard baseline` recorded (not yet reviewed)."
        ),
    ] = False,
    by: Annotated[str | None, typer.Option("--by", help="Your name, recorded with each decision.")] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar="YYYY-MM-DD", help="Decisions stop applying after this date."),
    ] = None,
    answer_timeout: Annotated[
        float,
        typer.Option(
            "--answer-timeout",
            min=0.1,
            max=86_400,
            metavar="SECONDS",
            help="When standard input is not a terminal: how long to wait for each answer.",
        ),
    ] = 60.0,
) -> None:
    """Walk the unreviewed findings of a scan: y real leak, n false positive (with a reason),
    s skip, q quit. Decisions go to the allowlist (.contam-guard/allowlist.yaml)."""
    from dataclasses import replace

    from contam_guard.cli.commands import review as review_cmd

    if run.no_allowlist:
        raise typer.BadParameter("review writes the allowlist: --no-allowlist does not apply")
    loaded = _config(where.config)
    request = replace(_scan_request(loaded, target, read, rules, run), manifest_path=where.manifest)
    options = review_cmd.ReviewOptions(
        include_warn=all_findings,
        baseline=baseline_entries,
        by=by,
        until=_parse_date(until),
        answer_timeout=answer_timeout,
    )
    _exit(review_cmd.run(loaded, request, options))


@app.command()
@grouped
def baseline(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATH", help="Training files or folders (what scan is given).")
    ],
    read: Read,
    rules: Rules,
    run: Run,
    where: Where,
    date: Annotated[
        str | None,
        typer.Option("--date", metavar="YYYY-MM-DD", help="The day the entries record (default: today)."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count; do not write the allowlist.")] = False,
) -> None:
    """Adopt the guard on existing data: record every current finding in the allowlist (as
    baseline entries, with the counts), so that only new findings fail; audit them later with
    review --baseline."""
    from dataclasses import replace

    from contam_guard.cli.commands import baseline as baseline_cmd

    if run.no_allowlist:
        raise typer.BadParameter("baseline writes the allowlist: --no-allowlist does not apply")
    loaded = _config(where.config)
    request = replace(
        _scan_request(loaded, Target(paths=paths), read, rules, run), manifest_path=where.manifest
    )
    day = _parse_date(date) or dt.date.today()
    _exit(baseline_cmd.run(loaded, request, day, dry_run=dry_run))


@app.command()
@grouped
def scrub(
    inputs: Annotated[list[Path], typer.Argument(metavar="INPUT", help="JSONL or text files to scrub.")],
    settings: ScrubOverrides,
    where: Where,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Output file (a folder for several inputs).")
    ] = None,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            metavar="PATH",
            help="Read only this field (repeatable; default: every string of every record).",
            show_default=False,
        ),
    ] = None,
    id_field: Annotated[
        str | None, typer.Option("--id-field", help="Field holding each record's id (else id).")
    ] = None,
    log: Annotated[
        Path | None, typer.Option("--log", help="Write one JSON line per touched record here.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would be removed; write nothing.")
    ] = False,
    in_place: Annotated[bool, typer.Option("--in-place", help="Replace each input (atomically).")] = False,
    no_allowlist: Annotated[
        bool,
        typer.Option(
            "--no-allowlist",
            help="Also scrub records whose every pair is allowlisted as a false positive (kept by default).",
        ),
    ] = False,
) -> None:
    """Remove colliding n-grams with a window around them (GPT-3's filter); log every removal.
    Records whose every pair the allowlist allows as a false positive are kept unchanged."""
    from contam_guard.cli.commands import scrub as scrub_cmd

    request = scrub_cmd.ScrubRequest(
        inputs=inputs,
        output=output,
        log=log,
        dry_run=dry_run,
        in_place=in_place,
        fields=list(field or []),
        id_field=id_field,
        settings=settings.values,
        use_allowlist=not no_allowlist,
    )
    _exit(scrub_cmd.run(_config(where.config), request, where.manifest))


# --- probe -------------------------------------------------------------------------


@app.command()
@grouped
def probe(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE",
            help="Golden files (JSONL, JSON, CSV, Parquet, text): the probe reads the "
            "text itself, not the manifest, which holds only hashes.",
        ),
    ],
    backend: Annotated[
        ProbeBackendName,
        typer.Option("--backend", help="transformers (a local model) or openai (an endpoint)."),
    ],
    model: Annotated[
        str,
        typer.Option("--model", metavar="NAME_OR_PATH", help="A model folder or name (openai: as served)."),
    ],
    access: ModelAccess,
    compare: ProbeOutputs,
    where: Where,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            metavar="PATH",
            help="Text field (repeatable: joined by newlines in this order; "
            "default: the usual shapes' text).",
            show_default=False,
        ),
    ] = None,
    id_field: Annotated[str | None, typer.Option("--id-field", help="Field holding each item's id.")] = None,
    set_name: Annotated[
        str | None,
        typer.Option("--set", metavar="NAME", help="Name in the CSV's set column (default: FILE's stem)."),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option(
            "--methods",
            metavar="M,M,...",
            help="Of loss,zlib,lowercase,mink,minkpp (default: every one "
            "the backend can compute; minkpp needs transformers).",
        ),
    ] = None,
    k: Annotated[float, typer.Option("--k", help="Min-K%'s share of tokens, 0 < k <= 1.")] = 0.2,
) -> None:
    """Score each item of a golden set with a model (loss, zlib, lowercase, Min-K% Prob, Min-K%++):
    when the training data is not at hand. With --reference (non-members) or --labels: AUROC, TPR
    at 5%/1% FPR and a one-sided Mann-Whitney test of the set against the reference."""
    from contam_guard.cli.commands import probe as probe_cmd

    if not 0 < k <= 1:
        raise typer.BadParameter("k is a share of the tokens: 0 < k <= 1 (Min-K% uses 0.2)", param_hint="--k")
    request = probe_cmd.ProbeRequest(
        files=files,
        backend=backend.value,
        model=model,
        fields=tuple(field or ()),
        id_field=id_field,
        set_name=set_name,
        methods=parse_methods(methods),
        k=k,
        reference=list(compare.reference or []),
        labels=compare.labels,
        alpha=compare.alpha,
        items_csv=compare.items_csv,
        summary=compare.summary,
        summary_json=compare.summary_json,
        roc=compare.roc,
        device=access.device,
        batch_size=access.batch_size,
        endpoint=probe_cmd.Endpoint(
            access.base_url, access.api_key_env, access.timeout, access.retries, access.concurrency
        ),
    )
    _exit(probe_cmd.run(_config(where.config), request, where.manifest))


# --- index, search, serve ------------------------------------------------------------

IndexDirOpt = Annotated[Path, typer.Option("--index", metavar="DIR", help="The search index folder.")]


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(metavar="PATH", help="Training files or folders.")],
    index_dir: IndexDirOpt,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            help="Index only this field (repeatable; default: every string).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build a search index of training files, or add new files to one (atomically)."""
    from contam_guard.cli.commands import search as search_cmd

    _exit(search_cmd.run_index(index_dir, paths, field or []))


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Words to look for.")],
    index_dir: IndexDirOpt,
    exact: Annotated[bool, typer.Option("--exact", help="Count the normalised phrase (else BM25).")] = False,
    limit: Annotated[int, typer.Option("--limit", help="Hits to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    redact_pii: Annotated[bool, typer.Option("--redact-pii", help="Mask personal data in snippets.")] = False,
) -> None:
    """Search an index: exact phrase counts (--exact) or BM25 ranking, with snippets."""
    from contam_guard.cli.commands import search as search_cmd

    _exit(
        search_cmd.run_search(index_dir, query, exact=exact, limit=limit, as_json=as_json, redact=redact_pii)
    )


@app.command()
def serve(
    index_dir: IndexDirOpt,
    host: Annotated[str, typer.Option("--host", help="Loopback address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: any free one).")] = 8765,
) -> None:
    """A local, read-only search page over an index (loopback only; personal data masked)."""
    from contam_guard.cli.commands import search as search_cmd

    _exit(search_cmd.run_serve(index_dir, host, port))


# --- impact ---------------------------------------------------------------------------

ImpactRule = Enum("ImpactRule", {name: name for name in RULE_CHOICES}, type=str)  # type: ignore[misc]


@app.command()
def impact(
    scores: Annotated[
        Path,
        typer.Option(
            "--scores",
            help="Per-item scores: lm-evaluation-harness samples_*.jsonl, OpenAI evals records, "
            "or a JSONL/CSV of item_id or test_index and score.",
        ),
    ],
    items: Annotated[Path, typer.Option("--items", help="The items CSV of `scan --items-csv`.")],
    rule: Annotated[
        ImpactRule, typer.Option("--rule", help="Clean = not flagged by this rule (any: by no rule).")
    ] = ImpactRule.any,  # type: ignore[attr-defined]
    metric: Annotated[
        str | None, typer.Option("--metric", help="The score's field (acc, exact_match ...; default score).")
    ] = None,
    filter_name: Annotated[
        str | None, typer.Option("--filter", help="lm-evaluation-harness filter (strict-match ...).")
    ] = None,
    set_name: Annotated[
        str | None, typer.Option("--set", help="The set, when the CSV holds several.")
    ] = None,
    view: Annotated[str | None, typer.Option("--view", help="One view only (default: all combined).")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Random seed (same seed, same numbers).")] = 0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON.")] = None,
    markdown: Annotated[Path | None, typer.Option("--markdown", help="Write the report as Markdown.")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw the subsets' scores as a PNG.")] = None,
) -> None:
    """Report both scores: full, clean and flagged, clean - full with a bootstrap interval,
    GPT-3's relative change and Llama 2's four subsets with their Z test."""
    from contam_guard.cli.commands import impact as impact_cmd

    _exit(
        impact_cmd.run(
            scores,
            items,
            rule=rule.value,
            metric=metric,
            filter_name=filter_name,
            set_name=set_name,
            view=view,
            draws=bootstrap,
            seed=seed,
            json_path=json_out,
            markdown_path=markdown,
            plot_path=plot,
        )
    )


def _git_range(staged: bool, diff: str | None) -> "GitRange | None":
    """What a --staged or --diff scan covers (git is imported only then)."""
    if not staged and diff is None:
        return None
    from contam_guard.io.git import Range

    return Range(staged=True) if staged else Range.parse(diff or "")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn every outcome into a documented exit code.

    typer handles usage errors (exit 2) and ``typer.Exit``; everything else lands here. Ctrl-C
    and SIGTERM become an exception (``io.atomic.Interrupted``), so that every temporary file is
    removed on the way out; they end with one line and exit 128 + the signal number (130, 143).
    """
    from contam_guard.io.atomic import Interrupted, raise_on_signals

    try:
        with raise_on_signals():
            app(args=argv)
    except Interrupted as exc:
        console.error(f"interrupted ({exc.name}): nothing was concluded; no partial file was left behind")
        sys.exit(128 + exc.signum)
    except ContamGuardError as exc:
        console.error(str(exc))
        sys.exit(int(exc.exit_code))
    except Exception as exc:  # a bug: say so, never exit 0
        console.error(
            f"internal error ({type(exc).__name__}); this is a bug in contam-guard "
            f"{__version__}, please report it with the command you ran"
        )
        if os.environ.get("CONTAM_GUARD_DEBUG"):
            raise
        sys.exit(int(ExitCode.INTERNAL))
    finally:
        _kernel_notices()


def _kernel_notices() -> None:
    """Show the kernels' notice (numpy fallback) once, if a command loaded them."""
    native = sys.modules.get("contam_guard.core.spec.native")
    if native is not None:
        for text in native.take_notices():
            console.notice(text)


def run() -> NoReturn:
    """The console script and ``python -m contam_guard``: ``main``, then a quick exit.

    Python's own shutdown frees every object of every imported module one by one: a tenth of a
    second here, a tenth of a whole scan of 100 MB. Once ``main`` has returned nothing is left to
    do (outputs are written atomically and closed, worker pools shut down), so the standard
    streams are flushed and the process ends. A run that started Spark is left to the normal
    shutdown, whose exit hook stops the JVM.
    """
    from contam_guard.cli import streams

    streams.guard()
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = _exit_status(exc.code)
    failed = streams.flush()
    if failed is not None and code in (int(ExitCode.CLEAN), int(ExitCode.CONTAMINATED)):
        with contextlib.suppress(OSError, ValueError):
            console.error(str(failed))
        code = int(ExitCode.USAGE)
    if "pyspark" in sys.modules:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, ContamGuardError):  # said above, if at all
            stream.flush()
    os._exit(code)


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` gives: None is 0, a number itself, anything else printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
