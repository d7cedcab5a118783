"""Console output (the only module that imports rich): results on stdout, progress on stderr.

rich honours ``NO_COLOR`` and drops colour when stdout is not a terminal.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:  # annotations only: importing these pulls in the engine (slow to start)
    from contam_guard.analysis import SweepRow
    from contam_guard.findings import Finding, Report

# Wide when not a terminal, so CI logs do not wrap tables into unreadable columns.
# emoji=False: "gsm8k:question:" must not become an emoji (rich reads :name: codes everywhere).
out = Console(highlight=False, soft_wrap=True, emoji=False, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def error(message: str) -> None:
    # escape: a message is plain text; "[plot]" in a hint or "[1]" in a path is not markup
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False)


def notice(message: str) -> None:
    err.print(f"[yellow]notice:[/] {escape(message)}", markup=True)


def info(message: str) -> None:
    out.print(message, markup=False)


def raw(text: str) -> None:
    """Write a machine format to stdout exactly as given (no markup, no wrapping, no colour).

    A file name that is not UTF-8 arrives as surrogate escapes: written as backslash text
    (``\\udcff``), as the report files write it, never a crash."""
    encoding = sys.stdout.encoding or "utf-8"
    sys.stdout.write(text.encode(encoding, "backslashreplace").decode(encoding))
    sys.stdout.flush()


@contextmanager
def progress() -> Iterator[Callable[[int], None]]:
    """A transient progress bar on stderr; yields the function that advances it (characters
    hashed). Off a terminal there is no bar, and rich's progress module is not even imported."""
    if not err.is_terminal:
        yield _ignore
        return
    from rich.progress import BarColumn, Progress, TextColumn, TransferSpeedColumn

    bar = Progress(TextColumn("scanning"), BarColumn(), TransferSpeedColumn(), console=err, transient=True)
    with bar:
        task = bar.add_task("scan", total=None)
        yield lambda chars: bar.advance(task, chars)


def _ignore(chars: int) -> None:
    """Progress where nobody watches."""


def scan_summary(report: Report, *, to_stderr: bool = False) -> None:
    """The scan's findings, one line each, and the verdict: on stdout, or on stderr when stdout
    carries a machine format (``--format json`` ...)."""
    _summary(report, err if to_stderr else out)
    for text in report.notices:
        notice(text)


def summary_text(report: Report) -> str:
    """The text summary as plain text (no colour codes), for ``--format text --output FILE``."""
    buffer = io.StringIO()
    plain = Console(file=buffer, highlight=False, soft_wrap=True, emoji=False, no_color=True, width=200)
    _summary(report, plain)
    notes = [f"skipped {text}" for text in report.result.skipped] + report.notices
    return buffer.getvalue() + "".join(f"notice: {text}\n" for text in notes)


def _summary(report: Report, out: Console) -> None:
    result = report.result
    out.print(
        f"Scanned {result.records} records ({result.chars:,} characters) in "
        f"{len(result.files)} file(s) against {len(result.index.targets)} golden view(s).",
        markup=False,
    )
    for note in result.fields_note():
        out.print(f"  {note}", markup=False)
    for notice_text in result.skipped:
        notice(f"skipped {notice_text}")  # stderr either way
    if result.records == 0:
        out.print("Nothing was scanned.", markup=False)
    if not report.findings:
        out.print("[green]No findings.[/]")
        return
    for finding in report.findings:
        action = finding.status
        style = {"fail": "red", "warn": "yellow"}.get(action, "dim")
        where = ""
        if finding.pairs:
            pair = finding.pairs[0]
            line = f":{pair.line}" if pair.line is not None else ""
            more = f" (+{len(finding.pairs) - 1} more)" if len(finding.pairs) > 1 else ""
            where = f" in {pair.source}{line} (record {pair.record}{pair.in_field}){more}"
        out.print(
            f"[{style}]{action.upper():7}[/] {finding.rule:6} {finding.target.label} item "
            f"{escape(finding.item_id)} (#{finding.test_index}){escape(where)}: {escape(finding.detail)}"
            + (escape(f" [{finding.note}]") if finding.note else "")
        )
    failing = len(report.failing)
    verdict = f"[red]{failing} failing finding(s)[/]" if failing else "[green]no failing findings[/]"
    out.print(f"{len(report.findings)} finding(s), {verdict}.")


def next_steps(lines: list[str], *, to_stderr: bool = False) -> None:
    """The last lines of a failing scan: what to do about its findings."""
    console = err if to_stderr else out
    console.print("What next:", markup=False)
    for line in lines:
        console.print(f"  - {line}", markup=False)


def review_pair(number: int, total: int, finding: Finding, golden: str | None) -> None:
    """One finding for ``contam-guard review``, on stderr (stdout stays free for results)."""
    target = finding.target
    err.print(
        f"\n[bold]{number}/{total}[/] {finding.action.upper()} {finding.rule}: "
        f"{escape(target.label)} v{target.version}, item {escape(finding.item_id)} "
        f"(test index {finding.test_index})"
    )
    err.print(f"  rule: {escape(finding.detail)}", markup=False)
    for pair in finding.pairs[:3]:
        line = f", line {pair.line}" if pair.line is not None else ""
        err.print(
            f"  training: {pair.source} record {pair.record}{line}{pair.in_field}: longest run "
            f"{pair.longest_run} words, {pair.ngrams8_found} 8-grams, {pair.covered_l10} words in "
            f"runs of 10+, {pair.window_hits} windows",
            markup=False,
        )
        snip = pair.snippet
        err.print(f"    …{escape(snip.before)}[bold]«{escape(snip.run)}»[/]{escape(snip.after)}…")
    if len(finding.pairs) > 3:
        err.print(f"  … and {len(finding.pairs) - 3} more record(s)", markup=False)
    if golden is not None:
        err.print(f"  golden item (--show-golden): {golden}", markup=False)


def sets_table(columns: list[str], rows: list[list[str]], footer: list[str]) -> None:
    """The ``sets`` listing (issue 13: rows built by ``commands.manage``, bytes per set and view)."""
    if not rows:
        out.print("No sets registered. Add one with: contam-guard register NAME FILE...", markup=False)
        return
    from rich.table import Table

    table = Table()
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    out.print(table)
    for line in footer:
        out.print(line, markup=False)


def sweep_table(rows: list[SweepRow], title: str) -> None:
    from contam_guard.analysis import RULE_COLUMNS  # here, not above: it imports the engine

    if not rows:
        out.print("No golden sets are registered.", markup=False)
        return
    from rich.table import Table

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
