"""The review file for people and PR comments: pair by pair, sorted, deterministic."""

from __future__ import annotations

from collections.abc import Callable

from contam_guard.findings import Finding, Report

GoldenText = Callable[[Finding], str | None]
"""Returns the golden item's text for a finding, or None (only with --show-golden)."""
MAX_PAIRS_SHOWN = 5
SUMMARY_LIMIT = 1 << 20
"""GitHub refuses a job summary over 1 MiB."""


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`").replace("*", "\\*").replace("\n", " ")


def _cell(text: str) -> str:
    """Text safe inside a table cell: escaped, and a ``|`` cannot start a new column."""
    return _escape(text).replace("|", "\\|")


def render(report: Report, golden: GoldenText | None = None) -> str:
    result = report.result
    lines = ["# contam-guard review", ""]
    failing = len(report.failing)
    lines.append(
        f"Scanned {result.records} records ({result.chars} characters) in {len(result.files)} "
        f"file(s) against {len(result.index.targets)} golden view(s). "
        f"Findings: {len(report.findings)} ({failing} failing)."
    )
    lines += [f"- {_escape(note)}" for note in result.fields_note()]
    for notice in result.skipped:
        lines.append(f"- skipped: {notice}")
    lines += [f"- notice: {_escape(notice)}" for notice in report.notices]
    lines.append("")
    if not report.findings:
        lines += ["No findings.", ""]
        return "\n".join(lines)
    lines += [
        "| # | rule | action | set:view (version) | item | training record | numbers |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [_row(number, finding) for number, finding in enumerate(report.findings, 1)]
    lines.append("")
    for number, finding in enumerate(report.findings, 1):
        lines += _section(number, finding, golden)
    return "\n".join(lines)


def _row(number: int, finding: Finding) -> str:
    return (
        f"| {number} | {finding.rule} | {_action(finding)} | {_cell(finding.target.label)} "
        f"(v{finding.target.version}) | {_cell(finding.item_id)} (#{finding.test_index}) | "
        f"{_cell(_where(finding))} | {_cell(finding.detail)} |"
    )


def _action(finding: Finding) -> str:
    if finding.allowed:
        return f"allowed ({finding.allowed_by})"
    return f"{finding.action} (confirmed leak)" if finding.confirmed else finding.action


def summary(report: Report, title: str = "contam-guard", limit: int = SUMMARY_LIMIT) -> str:
    """A job summary for ``$GITHUB_STEP_SUMMARY``: verdict, notices and the table of findings,
    cut (whole rows, with a count of the rest) to stay under ``limit`` bytes."""
    result = report.result
    failing = len(report.failing)
    verdict = f"**{failing} failing finding(s)**" if failing else "no failing findings"
    head = [
        f"## {title}",
        "",
        f"{verdict}; {len(report.findings)} finding(s) in {result.records} record(s) of "
        f"{len(result.files)} file(s), against {len(result.index.targets)} golden view(s). "
        f"Exit code {int(report.return_code)}.",
        "",
    ]
    head += [f"- skipped: {_escape(s)}" for s in result.skipped]
    head += [f"- notice: {_escape(n)}" for n in report.notices]
    if result.records == 0:
        head.append("- nothing was scanned")
    if not report.findings:
        return "\n".join([*head, "", "No findings.", ""])
    head += [
        "",
        "| # | status | rule | set:view | item | training record | detail |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    text = "\n".join(head) + "\n"
    size = len(text.encode("utf-8", "backslashreplace"))
    reserve = 200  # room for the closing line
    for number, finding in enumerate(report.findings, 1):
        row = (
            f"| {number} | {_action(finding)} | {finding.rule} | {_cell(finding.target.label)} | "
            f"{_cell(finding.item_id)} (#{finding.test_index}) | {_cell(_where(finding))} | "
            f"{_cell(finding.detail)}{' — ' + _cell(finding.note) if finding.note else ''} |\n"
        )
        if size + len(row.encode("utf-8", "backslashreplace")) > limit - reserve:  # as write_text does
            rest = len(report.findings) - number + 1
            return text + f"\n… {rest} more finding(s) not shown (summary limit); see the review file.\n"
        text += row
        size += len(row.encode("utf-8", "backslashreplace"))
    return text


def more_records(finding: Finding, shown: int) -> str:
    """``… and N more records`` after the first ``shown`` pairs of ``finding``, saying which of
    them only the JSON review lists and which are counted but listed nowhere (the cap). ""
    for a finding that lists no pair (its detail counts the records)."""
    if not finding.pairs:
        return ""
    listed = len(finding.pairs) - shown
    unlisted = finding.records - len(finding.pairs)
    if listed + unlisted <= 0:
        return ""
    where = [f"{listed} in the JSON review"] if listed else []
    where += [f"{unlisted} counted, not listed: --max-pairs-per-item"] if unlisted else []
    return f"… and {listed + unlisted} more record(s) ({'; '.join(where)})"


def _where(finding: Finding) -> str:
    if not finding.pairs:
        return "-"
    pair = finding.pairs[0]
    more = f" (+{finding.records - 1} more)" if finding.records > 1 else ""
    line = f":{pair.line}" if pair.line is not None else ""
    return f"{pair.source}{line} record {pair.record}{pair.in_field}{more}"


def _section(number: int, finding: Finding, golden: GoldenText | None) -> list[str]:
    target = finding.target
    out = [
        f"## {number}. {finding.rule} {_action(finding)}: {target.label} v{target.version}, "
        f"item {finding.item_id} (test index {finding.test_index})",
        "",
        f"- rule: **{finding.rule}**, {finding.detail}",
    ]
    if finding.note:
        out.append(f"- {_escape(finding.note)}")
    for pair in finding.pairs[:MAX_PAIRS_SHOWN]:
        line = f", line {pair.line}" if pair.line is not None else ""
        out.append(
            f"- training: `{pair.source}` record {pair.record}{line}{_escape(pair.in_field)}: longest run "
            f"{pair.longest_run} words, {pair.ngrams8_found} 8-grams, {pair.covered_l10} words "
            f"in runs of 10+, {pair.window_hits} windows"
            + (" (record marked `contam_guard: allow`)" if pair.allowed_inline else "")
        )
        snip = pair.snippet
        out.append(f"  > …{_escape(snip.before)}**«{_escape(snip.run)}»**{_escape(snip.after)}…")
    if more := more_records(finding, min(len(finding.pairs), MAX_PAIRS_SHOWN)):
        out.append(f"- {more}")
    text = golden(finding) if golden is not None else None
    if text is not None:
        out.append(f"- golden item (shown with --show-golden): {_escape(text)}")
    out.append("")
    return out
