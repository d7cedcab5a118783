"""Console output (the only module that imports rich): results on stdout, progress on stderr.

rich honours ``NO_COLOR`` and drops colour when stdout is not a terminal.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:  # annotations only: importing these pulls in the engine (slow to start)
    from contam_guard.core.verdicts import Finding, Report
    from contam_guard.report.analysis import SweepRow
    from contam_guard.report.groups import Group


def _on_terminal() -> bool:
    """Whether stdout is a terminal (it may be closed: None)."""
    return sys.stdout is not None and sys.stdout.isatty()


# Wide when not a terminal, so CI logs do not wrap tables into unreadable columns.
# emoji=False: "gsm8k:question:" must not become an emoji (rich reads :name: codes everywhere).
out = Console(highlight=False, soft_wrap=True, emoji=False, width=None if _on_terminal() else 200)
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
def progress(
    total: int = 0,
    done: Callable[[], int] | None = None,
    *,
    console: Console | None = None,
    clock: Callable[[], float] | None = None,
) -> Iterator[Callable[[int], None]]:
    """A transient progress display on stderr (or ``console``); yields the function the scan
    calls after each batch with the characters it hashed.

    With ``total`` (bytes of the input files) and ``done`` (bytes read so far, such as
    ``io.readers.meter.bytes_read``): a bar with bytes done, the total, the speed and the time left.
    Without a total (nothing of known size: Parquet only, or no file): a pulse with the
    characters hashed. ``clock`` replaces the time source (tests). Off a terminal there is
    nothing, and rich's progress module is not even imported.
    """
    target = err if console is None else console
    if not target.is_terminal:
        yield _ignore
        return
    from rich import progress as rp

    if total > 0 and done is not None:
        start = done()
        columns: tuple[rp.ProgressColumn, ...] = (
            rp.TextColumn("scanning"),
            rp.BarColumn(),
            rp.DownloadColumn(),  # bytes done / total
            rp.TransferSpeedColumn(),
            rp.TimeRemainingColumn(),
        )
        with rp.Progress(*columns, console=target, transient=True, get_time=clock) as bar:
            task = bar.add_task("scan", total=total)
            yield lambda chars: bar.update(task, completed=min(done() - start, total))
        return
    pulse = (rp.TextColumn("scanning"), rp.BarColumn(), rp.TextColumn("{task.completed:,.0f} characters"))
    with rp.Progress(*pulse, console=target, transient=True, get_time=clock) as bar:
        task = bar.add_task("scan", total=None)
        yield lambda chars: bar.advance(task, chars)


def _ignore(chars: int) -> None:
    """Progress where nobody watches."""


def scan_summary(report: Report, *, to_stderr: bool = False, quiet: bool = False) -> None:
    """The scan's findings, one line each, and the verdict: on stdout, or on stderr when stdout
    carries a machine format (``--format json`` ...). ``quiet``: the failing findings only (with
    a count of the others), and no per-file lines; notices are always shown."""
    _summary(report, err if to_stderr else out, quiet)
    for text in report.notices:
        notice(text)


def summary_text(report: Report, steps: Sequence[str] = ()) -> str:
    """The text summary as plain text (no colour codes), for ``--format text --output FILE``,
    ending with a failing scan's next ``steps``."""
    buffer = io.StringIO()
    plain = Console(file=buffer, highlight=False, soft_wrap=True, emoji=False, no_color=True, width=200)
    _summary(report, plain)
    if steps:
        next_steps(list(steps), console=plain)
    notes = [f"skipped {text}" for text in report.result.skipped] + report.notices
    return buffer.getvalue() + "".join(f"notice: {text}\n" for text in notes)


def _summary(report: Report, out: Console, quiet: bool = False) -> None:
    _findings(report, out, quiet)
    guard = report.guard
    if guard is not None:  # --diff/--staged: changes of the range that weaken the guard
        style = "yellow" if guard.accepted else "red"
        label = "ACCEPTED" if guard.accepted else "GUARD"
        for line in guard.lines():
            out.print(f"[{style}]{label:7}[/] {escape(line)}")
        out.print(f"[{style}]{escape(guard.verdict())}.[/]")


def _findings(report: Report, out: Console, quiet: bool = False) -> None:
    result = report.result
    out.print(
        f"Scanned {result.records} records ({result.chars:,} characters) in "
        f"{len(result.files)} file(s) against {len(result.index.targets)} golden view(s).",
        markup=False,
    )
    for note in [] if quiet else result.fields_note():
        out.print(f"  {note}", markup=False)
    for notice_text in result.skipped:
        notice(f"skipped {notice_text}")  # stderr either way
    if result.records == 0:
        out.print("Nothing was scanned.", markup=False)
    if not report.findings:
        out.print("[green]No findings.[/]")
        return
    from contam_guard.report.groups import by_item, groups, hidden_note  # the engine: on use only

    all_groups = groups(report)
    quieted = 0
    for item in by_item(all_groups, findings=report.findings):
        for group in item.groups:
            if quiet and group.status != "fail":
                quieted += 1
                continue
            style = _STYLES.get(group.status, "dim")
            out.print(f"[{style}]{group.status.upper():7}[/] {escape(_group_line(group))}")
        if not quiet and (note := hidden_note(item)):
            out.print(f"        {note}", markup=False)
    failing = len(report.failing)
    verdict = f"[red]{failing} failing finding(s)[/]" if failing else "[green]no failing findings[/]"
    pairs = f"{len(all_groups)} (test item, training record) pair(s)"
    out.print(f"{len(report.findings)} finding(s) in {pairs}, {verdict}.")
    if quieted:
        out.print(f"{quieted} pair(s) that only warn or are allowed not shown (--quiet).", markup=False)


_STYLES = {"fail": "red", "warn": "yellow"}


def _group_line(group: Group) -> str:
    """One (test item, training record) pair after its status: ``set:view item ID (#3) in
    FILE:LINE (record 2, field text): FAIL gpt3, WARN palm llama2 gpt4; shared run of 50 words >=
    N = 13`` (the detail of a rule decided on this pair, else the longest run), then the notes of
    allowed or confirmed findings. Plain text (not markup)."""
    pair = group.pair
    line = f":{pair.line}" if pair.line is not None else ""
    by_note: dict[str, list[str]] = {}  # one note for the rules that share it (a pair's entry)
    for finding in group.findings:
        if finding.note:
            by_note.setdefault(finding.note, []).append(finding.rule)
    notes = "".join(f" [{' '.join(rules)}: {note}]" for note, rules in by_note.items())
    numbers = group.pair_detail
    return (
        f"{group.target.label} item {group.item_id} (#{group.test_index}) in "
        f"{pair.source}{line} (record {pair.record}{pair.in_field}): {group.verdicts}; "
        f"{numbers or f'shared run of {pair.longest_run} words'}{notes}"
    )


def next_steps(lines: list[str], *, to_stderr: bool = False, console: Console | None = None) -> None:
    """The last lines of a failing scan: what to do about its findings."""
    console = console or (err if to_stderr else out)
    console.print("What next:", markup=False)
    for line in lines:
        console.print(f"  - {line}", markup=False)


def review_pair(number: int, total: int, finding: Finding, golden: str | None) -> None:
    """One finding for ``contam-guard review``, on stderr (stdout stays free for results)."""
    from contam_guard.core.families import pair_numbers

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
            f"  training: {pair.source} record {pair.record}{line}{pair.in_field}: "
            + pair_numbers(pair.numbers),
            markup=False,
        )
        snip = pair.snippet
        err.print(f"    …{escape(snip.before)}[bold]«{escape(snip.run)}»[/]{escape(snip.after)}…")
    if finding.pairs and finding.records > 3:  # (a summary of unlisted records says so itself)
        err.print(f"  … and {finding.records - min(len(finding.pairs), 3)} more record(s)", markup=False)
    if golden is not None:
        err.print(f"  golden item (--show-golden): {golden}", markup=False)


def sets_table(columns: list[str], rows: list[list[str]], footer: list[str]) -> None:
    """The ``sets`` listing (rows built by ``cli.commands.manage``, bytes per set and view)."""
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
    from contam_guard.report.analysis import RULE_COLUMNS  # here, not above: it imports the engine

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
