"""Console output (the only module that imports rich): results on stdout, progress on stderr.

rich honours ``NO_COLOR`` and drops colour when stdout is not a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TransferSpeedColumn
from rich.table import Table

from contam_guard.analysis import RULE_COLUMNS, SweepRow
from contam_guard.findings import Report
from contam_guard.manifest.model import Manifest

# Wide when not a terminal, so CI logs do not wrap tables into unreadable columns.
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def error(message: str) -> None:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)


def notice(message: str) -> None:
    err.print(f"[yellow]notice:[/] {message}", markup=True)


def info(message: str) -> None:
    out.print(message, markup=False)


@contextmanager
def progress(total_chars: int | None) -> Iterator[Progress]:
    """A transient progress bar on stderr (characters hashed)."""
    bar = Progress(
        TextColumn("scanning"),
        BarColumn(),
        TransferSpeedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    with bar:
        yield bar


def scan_summary(report: Report) -> None:
    result = report.result
    out.print(
        f"Scanned {result.records} records ({result.chars:,} characters) in "
        f"{len(result.files)} file(s) against {len(result.index.targets)} golden view(s).",
        markup=False,
    )
    for notice_text in result.skipped:
        notice(f"skipped {notice_text}")
    if result.records == 0:
        out.print("Nothing was scanned.", markup=False)
    if not report.findings:
        out.print("[green]No findings.[/]")
        return
    for finding in report.findings:
        action = "allowed" if finding.allowed else finding.action
        style = {"fail": "red", "warn": "yellow"}.get(action, "dim")
        where = ""
        if finding.pairs:
            pair = finding.pairs[0]
            line = f":{pair.line}" if pair.line is not None else ""
            more = f" (+{len(finding.pairs) - 1} more)" if len(finding.pairs) > 1 else ""
            where = f" in {pair.source}{line} (record {pair.record}){more}"
        out.print(
            f"[{style}]{action.upper():7}[/] {finding.rule:6} {finding.target.label} item "
            f"{escape(finding.item_id)} (#{finding.test_index}){escape(where)}: {escape(finding.detail)}"
        )
    failing = len(report.failing)
    verdict = f"[red]{failing} failing finding(s)[/]" if failing else "[green]no failing findings[/]"
    out.print(f"{len(report.findings)} finding(s), {verdict}.")


def sets_table(manifest: Manifest, too_short: dict[tuple[str, str], dict[str, int]]) -> None:
    if not manifest.sets:
        out.print("No sets registered. Add one with: contam-guard register NAME FILE...", markup=False)
        return
    table = Table()
    for column in ("set", "version", "items", "view", "too short: gpt3", "palm", "llama2", "gpt4", "digest"):
        table.add_column(column)
    for name in sorted(manifest.sets):
        golden = manifest.sets[name]
        for view in sorted(golden.views):
            short = too_short[(name, view)]
            table.add_row(
                name,
                str(golden.version),
                str(golden.items),
                view,
                str(short["gpt3"]),
                str(short["palm"]),
                str(short["llama2"]),
                str(short["gpt4"]),
                golden.digest[:12],
            )
    out.print(table)


def sweep_table(rows: list[SweepRow], title: str) -> None:
    if not rows:
        out.print("No golden sets are registered.", markup=False)
        return
    table = Table(title=title)
    table.add_column("set:view")
    table.add_column("items", justify="right")
    for n in rows[0].any_hit:
        table.add_column(f"n={n}", justify="right")
    for name in RULE_COLUMNS:
        table.add_column(name, justify="right")
    for row in rows:
        cells = [f"{100 * v:.1f}%" for v in row.any_hit.values()]
        cells += [f"{100 * row.rules[name]:.1f}%" for name in RULE_COLUMNS]
        table.add_row(row.label, str(row.items), *cells)
    out.print(table)
