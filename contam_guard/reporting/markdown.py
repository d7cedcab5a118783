"""The review file for people and PR comments: pair by pair, sorted, deterministic."""

from __future__ import annotations

from collections.abc import Callable

from contam_guard.findings import Finding, Report

GoldenText = Callable[[Finding], str | None]
"""Returns the golden item's text for a finding, or None (only with --show-golden)."""
MAX_PAIRS_SHOWN = 5


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`").replace("*", "\\*").replace("\n", " ")


def render(report: Report, golden: GoldenText | None = None) -> str:
    result = report.result
    lines = ["# contam-guard review", ""]
    failing = len(report.failing)
    lines.append(
        f"Scanned {result.records} records ({result.chars} characters) in {len(result.files)} "
        f"file(s) against {len(result.index.targets)} golden view(s). "
        f"Findings: {len(report.findings)} ({failing} failing)."
    )
    for notice in result.skipped:
        lines.append(f"- skipped: {notice}")
    lines.append("")
    if not report.findings:
        lines += ["No findings.", ""]
        return "\n".join(lines)
    lines += [
        "| # | rule | action | set:view (version) | item | training record | numbers |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for number, finding in enumerate(report.findings, 1):
        lines.append(
            f"| {number} | {finding.rule} | {_action(finding)} | {finding.target.label} "
            f"(v{finding.target.version}) | {finding.item_id} (#{finding.test_index}) | "
            f"{_where(finding)} | {finding.detail} |"
        )
    lines.append("")
    for number, finding in enumerate(report.findings, 1):
        lines += _section(number, finding, golden)
    return "\n".join(lines)


def _action(finding: Finding) -> str:
    return "allowed" if finding.allowed else finding.action


def _where(finding: Finding) -> str:
    if not finding.pairs:
        return "-"
    pair = finding.pairs[0]
    more = f" (+{len(finding.pairs) - 1} more)" if len(finding.pairs) > 1 else ""
    line = f":{pair.line}" if pair.line is not None else ""
    return f"{pair.source}{line} record {pair.record}{more}"


def _section(number: int, finding: Finding, golden: GoldenText | None) -> list[str]:
    target = finding.target
    out = [
        f"## {number}. {finding.rule} {_action(finding)}: {target.label} v{target.version}, "
        f"item {finding.item_id} (test index {finding.test_index})",
        "",
        f"- rule: **{finding.rule}**, {finding.detail}",
    ]
    for pair in finding.pairs[:MAX_PAIRS_SHOWN]:
        line = f", line {pair.line}" if pair.line is not None else ""
        out.append(
            f"- training: `{pair.source}` record {pair.record}{line}: longest run "
            f"{pair.longest_run} words, {pair.ngrams8_found} 8-grams, {pair.covered_l10} words "
            f"in runs of 10+, {pair.window_hits} windows"
            + (" (record marked `contam_guard: allow`)" if pair.allowed_inline else "")
        )
        snip = pair.snippet
        out.append(f"  > …{_escape(snip.before)}**«{_escape(snip.run)}»**{_escape(snip.after)}…")
    if len(finding.pairs) > MAX_PAIRS_SHOWN:
        out.append(f"- … and {len(finding.pairs) - MAX_PAIRS_SHOWN} more records (see the JSON review)")
    text = golden(finding) if golden is not None else None
    if text is not None:
        out.append(f"- golden item (shown with --show-golden): {_escape(text)}")
    out.append("")
    return out
