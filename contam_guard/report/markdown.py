"""The review file for people and PR comments: one section per (test item, training record)
pair with every rule that fired on it (``report.groups``), sorted, deterministic."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from contam_guard.core.families import pair_numbers
from contam_guard.core.spec.normalise import TextSpec
from contam_guard.core.verdicts import Finding, Report, span_digest
from contam_guard.report.groups import Group, by_item, groups, hidden_note, is_per_item
from contam_guard.report.spans import golden_span, marked

GoldenText = Callable[[Finding], str | None]
"""Returns the golden item's text for a finding, or None (only with --show-golden)."""
SUMMARY_LIMIT = 1 << 20
"""GitHub refuses a job summary over 1 MiB."""


_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`*"} | {"\n": " ", "\r": " "})
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;"})  # no tag or entity starts without these


def _escape(text: str) -> str:
    """Training or golden text as Markdown shows it, never as markup: HTML (``<script>``,
    ``<img onerror>``) as entities, and Markdown's bold, code, link and image syntax escaped
    (``>`` stays: it opens nothing inside a line)."""
    # "](" -> "]\(": no inline link or image (a remote image loads when the review is shown)
    return text.translate(_HTML).translate(_MARKDOWN).replace("](", "]\\(")


def _code(text: str) -> str:
    """``text`` (a file name: data, too) as a code span: a fence longer than any run of backticks
    in it, so it cannot close the span early; no HTML is read inside one."""
    text = text.replace("\n", " ").replace("\r", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _escape_names(text: str) -> str:
    """A note whose file names are in backticks: escaped outside them only."""
    parts = text.split("`")
    return "`".join(part if k % 2 else _escape(part) for k, part in enumerate(parts))


def _cell(text: str) -> str:
    """Text safe inside a table cell: escaped, and a ``|`` cannot start a new column."""
    return _escape(text).replace("|", "\\|")


def render(report: Report, golden: GoldenText | None = None) -> str:
    """The review: a table with one row per (test item, training record), then one section per
    row with every rule that fired on the pair and its numbers (``report.groups``)."""
    result = report.result
    lines = ["# contam-guard review", ""]
    failing = len(report.failing)
    all_groups = groups(report)
    lines.append(
        f"Scanned {result.records} records ({result.chars} characters) in {len(result.files)} "
        f"file(s) against {len(result.index.targets)} golden view(s). "
        f"Findings: {len(report.findings)} ({failing} failing) in {len(all_groups)} "
        "(test item, training record) pair(s)."
    )
    lines += [f"- {_escape(note)}" for note in result.fields_note()]
    for notice in result.skipped:
        lines.append(f"- skipped: {_escape(notice)}")
    lines += [f"- notice: {_escape(notice)}" for notice in report.notices]
    lines.append("")
    lines += guard_section(report)
    if not report.findings:
        lines += ["No findings.", ""]
        return "\n".join(lines)
    lines += [
        "One section per (test item, training record) pair, with every rule that fired on it. "
        "GPT-3's rule is decided per pair; PaLM's, Llama 2's and GPT-4's are decided per item "
        "over everything scanned (marked *per item*), so they are listed with each record that "
        "contributes, and the section names the other records.",
        "",
        "| # | status | rules | set:view (version) | item | training record | longest run |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    items = by_item(all_groups, findings=report.findings)
    shown = [group for item in items for group in item.groups]
    lines += [_row(number, group) for number, group in enumerate(shown, 1)]
    lines.append("")
    hidden = [note for item in items if (note := hidden_note(item))]
    lines += [f"- {_escape(note)}" for note in hidden] + ([""] if hidden else [])
    spec = result.index.spec
    for number, group in enumerate(shown, 1):
        section = _section(number, group, golden, spec)
        count = report.in_training.get(span_digest(group.pair))
        if count is not None:  # scan --index
            section.insert(-1, f"- this span is in {count} training record(s) of the search index")
        lines += section
    return "\n".join(lines)


def guard_section(report: Report) -> list[str]:
    """``--diff``/``--staged``: the range's changes that weaken the guard, one bullet each."""
    guard = report.guard
    if guard is None:
        return []
    title = "The change weakens the guard" + (" (accepted)" if guard.accepted else "")
    bullets = [f"- {_escape(change.file)}: {_escape(change.what)}" for change in guard.changes]
    return [f"## {title}", "", *bullets, "", _escape(guard.verdict()) + ".", ""]


def _row(number: int, group: Group) -> str:
    target = group.target
    return (
        f"| {number} | {group.status} | {group.verdicts} | {_cell(target.label)} (v{target.version}) | "
        f"{_cell(group.item_id)} (#{group.test_index}) | {_cell(group.where)} | "
        f"{group.pair.longest_run} words |"
    )


def _action(finding: Finding) -> str:
    if finding.allowed:
        return f"allowed ({finding.allowed_by})"
    return f"{finding.action} (confirmed leak)" if finding.confirmed else finding.action


def steps_section(steps: Sequence[str]) -> str:
    """A failing scan's next steps (``cli.next_steps.steps``) as the summary's closing section: the
    commands stay in code spans, the words around them are escaped."""
    if not steps:
        return ""
    return "\n### What next\n\n" + "".join(f"- {_escape_names(step)}\n" for step in steps)


def summary(
    report: Report, title: str = "contam-guard", limit: int = SUMMARY_LIMIT, steps: Sequence[str] = ()
) -> str:
    """A job summary for ``$GITHUB_STEP_SUMMARY``: verdict, notices and the table of (test item,
    training record) pairs with the rules that fired on each, cut (whole rows, with a count of
    the rest) to stay under ``limit`` bytes, then the next ``steps`` of a failing scan (what the
    console prints under "What next")."""
    closing = steps_section(steps)
    result = report.result
    failing = len(report.failing)
    verdict = f"**{failing} failing finding(s)**" if failing else "no failing findings"
    all_groups = groups(report)
    items = by_item(all_groups, findings=report.findings)
    shown = [group for item in items for group in item.groups]
    head = [
        f"## {title}",
        "",
        f"{verdict}; {len(report.findings)} finding(s) in {len(all_groups)} (test item, training record) "
        f"pair(s), {result.records} record(s) of {len(result.files)} file(s), against "
        f"{len(result.index.targets)} golden view(s). Exit code {int(report.return_code)}.",
        "",
    ]
    head += [f"- skipped: {_escape(s)}" for s in result.skipped]
    head += [f"- notice: {_escape(n)}" for n in report.notices]
    if result.records == 0:
        head.append("- nothing was scanned")
    head += ["", *guard_section(report)] if report.guard is not None else []
    if not report.findings:
        return "\n".join([*head, "", "No findings.", ""]) + closing
    head += [
        "",
        "| # | status | rules | set:view | item | training record | detail |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    text = "\n".join(head) + "\n"
    tail = "".join(f"\n{_escape(note)}\n" for item in items if (note := hidden_note(item))) + closing
    size = len(text.encode("utf-8", "backslashreplace"))
    reserve = 200 + len(tail.encode("utf-8", "backslashreplace"))  # the closing lines
    for number, group in enumerate(shown, 1):
        detail = "; ".join(_rule_detail(f) for f in group.findings)
        row = (
            f"| {number} | {group.status} | {group.verdicts} | {_cell(group.target.label)} | "
            f"{_cell(group.item_id)} (#{group.test_index}) | {_cell(group.where)} | {_cell(detail)} |\n"
        )
        if size + len(row.encode("utf-8", "backslashreplace")) > limit - reserve:  # as write_text does
            rest = len(shown) - number + 1
            cut = f"\n… {rest} more row(s) not shown (summary limit); see the review file.\n"
            return text + cut + closing
        text += row
        size += len(row.encode("utf-8", "backslashreplace"))
    return text + tail


def _rule_detail(finding: Finding) -> str:
    """``gpt3: shared run of 50 words >= N = 13``, with its note (allowed, confirmed)."""
    scope = " (per item)" if is_per_item(finding) else ""
    note = f" — {finding.note}" if finding.note else ""
    return f"{finding.rule}{scope}: {finding.detail}{note}"


def _section(number: int, group: Group, golden: GoldenText | None, spec: TextSpec) -> list[str]:
    target = group.target
    pair = group.pair
    out = [
        f"## {number}. {_escape(target.label)} v{target.version}, item {_escape(group.item_id)} "
        f"(test index {group.test_index}) in {_code(group.where)}: {group.verdicts}",
        "",
    ]
    for finding in group.findings:
        scope = " (per item)" if is_per_item(finding) else ""
        out.append(f"- **{finding.rule}** {_action(finding)}{scope}: {_escape(finding.detail)}")
        if finding.note:
            out.append(f"  - {_escape(finding.note)}")
    out += [f"- {_escape_names(note)}" for note in group.per_item_notes(quote="`")]
    line = f", line {pair.line}" if pair.line is not None else ""
    out.append(
        f"- training: {_code(pair.source)} record {pair.record}{line}{_escape(pair.in_field)}: "
        + pair_numbers(pair.numbers)
        + (" (record marked `contam_guard: allow`)" if pair.allowed_inline else "")
    )
    snip = pair.snippet
    if snip.kind == "reworded":  # nothing is known to be copied: no mark
        out.append(f"  > {_escape(snip.run)}{_escape(snip.after)} _(the item in other words)_")
    else:
        out.append(f"  > …{_escape(snip.before)}**«{_escape(snip.run)}»**{_escape(snip.after)}…")
    text = golden(group.findings[0]) if golden is not None else None
    if text is not None:
        shown = marked(text, golden_span(text, snip.run, spec), _escape, "**«", "»**")
        out.append(f"- golden item (shown with --show-golden): {shown}")
    out.append("")
    return out
