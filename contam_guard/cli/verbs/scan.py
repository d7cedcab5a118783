"""The scanning commands: scan, report-merge, sweep, dupes."""

from pathlib import Path
from typing import Annotated

import typer

from contam_guard.cli.app import app, leave, scan_request
from contam_guard.cli.options import (
    EngineName,
    Read,
    Rules,
    Run,
    Spark,
    Target,
    Where,
    grouped,
)
from contam_guard.core.config import load_config
from contam_guard.io.readers.base import ReadOptions
from contam_guard.report.outputs import Outputs


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

    loaded = load_config(where.config)
    request = replace(
        scan_request(loaded, target, read, rules, run),
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
        leave(scan_cmd.run(loaded, request, outputs, spark_engine(spark.master, conf), accept))
    if spark.engine is EngineName.RAY:
        from contam_guard.cli.commands.ray_scan import check as check_ray
        from contam_guard.cli.commands.ray_scan import ray_engine

        check_ray(request)
        leave(scan_cmd.run(loaded, request, outputs, ray_engine(spark.ray_address), accept))
    leave(scan_cmd.run(loaded, request, outputs, accept=accept))


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

    loaded = load_config(where.config)
    request = ScanRequest(
        paths=[],
        read=ReadOptions(),
        exit_zero=exit_zero,
        use_allowlist=not no_allowlist,
        redact_pii=redact_pii,
        manifest_path=where.manifest,
    )
    leave(merge_cmd.run(loaded, folder, request, outputs))


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

    loaded = load_config(where.config)
    request = replace(scan_request(loaded, target, read, rules, run), manifest_path=where.manifest)
    leave(analysis_cmd.run_sweep(loaded, request, _parse_ns(ns), csv_path=csv, plot_path=plot))


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
    leave(
        analysis_cmd.run_dupes(
            load_config(where.config),
            name,
            view,
            _parse_ns(ns),
            outputs=outputs,
            csv_path=csv,
            plot_path=plot,
            manifest_path=where.manifest,
        )
    )
