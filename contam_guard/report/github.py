"""GitHub Actions workflow commands: one annotation per finding, on the training file's line.

``::error file=F,line=L,title=T::message`` for a failing finding, ``::warning ...`` for a
warning. GitHub shows at most 10 error and 10 warning annotations per step, so at most that
many are written, then one ``::notice::`` with the count of the rest (they are all in the job
summary and the review file). Allowed findings are not annotated; the report's notices (stale or
expired allowlist entries, an empty range) become ``::notice`` lines. The message data is escaped
(``%``, CR, LF) and so are the properties (also ``:`` and ``,``), so a file name or an item id
can neither end the command early nor inject another one.
"""

from __future__ import annotations

from contam_guard.core.verdicts import Finding, Report

MAX_PER_LEVEL = 10
COMMANDS = {"fail": "error", "warn": "warning"}


def escape_data(text: str) -> str:
    """Escape a command's message (what follows ``::``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (``file=``, ``title=``): the message escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    command = COMMANDS[finding.action]
    target = finding.target
    props = []
    message = f"{finding.rule}: {finding.detail}"
    if finding.pairs:
        pair = finding.pairs[0]
        props.append(f"file={escape_property(pair.source)}")
        if pair.line is not None:
            props.append(f"line={pair.line}")
        message += f" (record {pair.record}{pair.in_field}"
        more = finding.records - 1
        message += f", and {more} more record(s))" if more else ")"
    if finding.confirmed:
        message += f"; {finding.note}"
    title = f"contam-guard {finding.rule}: {target.label} item {finding.item_id} (#{finding.test_index})"
    props.append(f"title={escape_property(title)}")
    return f"::{command} {','.join(props)}::{escape_data(message)}"


def render(report: Report) -> str:
    """The workflow commands, one per line (empty when nothing is to be annotated)."""
    # Notices (stale or expired allowlist entries, an empty range) first: they explain the rest.
    lines = [f"::notice title=contam-guard::{escape_data(text)}" for text in report.notices]
    guard = report.guard
    if guard is not None:  # the range weakens the guard: on the file that changed
        command = "warning" if guard.accepted else "error"
        title = escape_property("contam-guard: the change weakens the guard")
        for change in guard.changes[:MAX_PER_LEVEL]:
            where = escape_property(change.file)
            lines.append(f"::{command} file={where},title={title}::{escape_data(change.what)}")
        lines.append(f"::{command} title={title}::{escape_data(guard.verdict())}")
    shown = {"fail": 0, "warn": 0}
    rest = 0
    for finding in report.findings:
        if finding.allowed:
            continue
        if shown[finding.action] >= MAX_PER_LEVEL:
            rest += 1
            continue
        shown[finding.action] += 1
        lines.append(annotation(finding))
    if rest:
        lines.append(
            f"::notice::contam-guard: {rest} more finding(s) not annotated (GitHub shows "
            f"{MAX_PER_LEVEL} errors and {MAX_PER_LEVEL} warnings per step); see the job summary "
            "and the review file"
        )
    return "".join(line + "\n" for line in lines)
