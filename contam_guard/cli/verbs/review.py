"""The review commands: review, baseline, scrub."""

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from contam_guard.cli.app import app, leave, scan_request
from contam_guard.cli.options import (
    Read,
    Rules,
    Run,
    ScrubOverrides,
    Target,
    Where,
    grouped,
)
from contam_guard.core.config import load_config


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
    loaded = load_config(where.config)
    request = replace(scan_request(loaded, target, read, rules, run), manifest_path=where.manifest)
    options = review_cmd.ReviewOptions(
        include_warn=all_findings,
        baseline=baseline_entries,
        by=by,
        until=_parse_date(until),
        answer_timeout=answer_timeout,
    )
    leave(review_cmd.run(loaded, request, options))


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
    loaded = load_config(where.config)
    request = replace(
        scan_request(loaded, Target(paths=paths), read, rules, run), manifest_path=where.manifest
    )
    day = _parse_date(date) or dt.date.today()
    leave(baseline_cmd.run(loaded, request, day, dry_run=dry_run))


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
    leave(scrub_cmd.run(load_config(where.config), request, where.manifest))


# --- probe -------------------------------------------------------------------------
