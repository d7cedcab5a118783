"""The review as one self-contained HTML page: one section per (test item, training record) pair
with every rule that fired on it, shared runs highlighted on the training side and, when the golden
text is shown (``--show-golden``), on the golden side too.

No server, no scripts, no external assets: open the file in any browser. Everything from the
data is HTML-escaped.
"""

from __future__ import annotations

from html import escape

from contam_guard.core.families import COLUMNS
from contam_guard.core.pairs import Pair
from contam_guard.core.spec.normalise import TextSpec
from contam_guard.core.verdicts import Finding, Report
from contam_guard.report.groups import Group, by_item, groups, hidden_note, is_per_item
from contam_guard.report.markdown import GoldenText
from contam_guard.report.spans import golden_span, marked
from contam_guard.version import __version__

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #1d1d1f; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.1rem; margin: 0 0 .4rem; }
.summary { color: #555; }
.finding { border: 1px solid #ddd; border-left: 6px solid #999; border-radius: 6px;
           padding: .8rem 1rem; margin: 1rem 0; }
.finding.fail { border-left-color: #c62828; } .finding.warn { border-left-color: #f9a825; }
.finding.allowed { border-left-color: #9e9e9e; opacity: .8; }
.pair { display: grid; grid-template-columns: 1fr 16rem; gap: 1rem; margin-top: .6rem; }
.snippet { background: #fafafa; padding: .5rem .7rem; border-radius: 4px; white-space: pre-wrap; }
mark { background: #ffe082; padding: 0 .1rem; }
mark.masked { background: #ffecb3; }
.reworded { border-bottom: 1px dashed #888; }
.numbers { font-size: .9rem; } .numbers dt { color: #666; } .numbers dd { margin: 0 0 .3rem; }
.golden { border-top: 1px dashed #bbb; margin-top: .6rem; padding-top: .4rem; }
.badge { font-weight: 600; text-transform: uppercase; font-size: .8rem; }
.rules { margin: .3rem 0; padding-left: 1.2rem; } .rules li.allowed { color: #777; }
.verdicts { font-weight: normal; color: #444; } .notice { color: #8a6d00; }
"""


def render(report: Report, golden: GoldenText | None = None) -> str:
    """The page: one section per (test item, training record) with every rule that fired on the
    pair (``report.groups``); with ``golden``, the golden item with the shared run marked."""
    result = report.result
    all_groups = groups(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>contam-guard review</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>contam-guard review</h1>",
        f'<p class="summary">Scanned {result.records} records ({result.chars} characters) in '
        f"{len(result.files)} file(s) against {len(result.index.targets)} golden view(s). "
        f"Findings: <strong>{len(report.findings)}</strong> ({len(report.failing)} failing) in "
        f"{len(all_groups)} (test item, training record) pair(s). "
        f"contam-guard {escape(__version__)}.</p>",
    ]
    parts += [f'<p class="summary">Skipped: {escape(s)}</p>' for s in result.skipped]
    parts += [f'<p class="summary notice">Notice: {escape(n)}</p>' for n in report.notices]
    if not report.findings:
        parts.append('<p id="no-findings">No findings.</p>')
    else:
        parts.append(
            '<p class="summary">One section per (test item, training record) pair, with every rule '
            "that fired on it. GPT-3's rule is decided per pair; PaLM's, Llama 2's and GPT-4's are "
            "decided per item over everything scanned (<em>per item</em>), so they are listed with "
            "each record that contributes.</p>"
        )
    number = 0
    for item in by_item(all_groups, findings=report.findings):
        for group in item.groups:
            number += 1
            parts.append(_group(number, group, golden, result.index.spec))
        if note := hidden_note(item):
            parts.append(f'<p class="hidden-records">{escape(note)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _group(number: int, group: Group, golden: GoldenText | None, spec: TextSpec) -> str:
    target = group.target
    status = group.status
    out = [
        f'<section class="finding {status}" id="finding-{number}">',
        f'<h2>{number}. <span class="badge">{escape(status)}</span> {escape(target.label)} '
        f"v{target.version}, item {escape(group.item_id)} (test index {group.test_index}): "
        f'<span class="verdicts">{escape(group.verdicts)}</span></h2>',
        '<ul class="rules">',
        *(_rule(finding) for finding in group.findings),
        *(f'<li class="per-item">{escape(note)}</li>' for note in group.per_item_notes()),
        "</ul>",
        _pair(group.pair),
    ]
    text = golden(group.findings[0]) if golden is not None else None
    if text is not None:
        shown = marked(text, golden_span(text, group.pair.snippet.run, spec), escape, "<mark>", "</mark>")
        out.append(f'<div class="golden"><strong>Golden item</strong> (--show-golden): {shown}</div>')
    out.append("</section>")
    return "\n".join(out)


def _rule(finding: Finding) -> str:
    """One rule's line in a section: its status, scope, numbers and note."""
    status = finding.status + (" (confirmed leak)" if finding.confirmed else "")
    scope = " (per item)" if is_per_item(finding) else ""
    note = f'<div class="allowed-note">{escape(finding.note)}</div>' if finding.note else ""
    return (
        f'<li class="rule {escape(finding.status)}" data-rule="{escape(finding.rule)}">'
        f"<strong>{escape(finding.rule)}</strong> {escape(status)}{scope}: "
        f"{escape(finding.detail)}{note}</li>"
    )


SHOWN_AS = {
    "run": "",
    "window": "",
    "masked": "the same words, other numbers",
    "reworded": "the item in other words: no words are known to be shared",
}
"""What a snippet's highlight means, when it is not words copied as they are."""


def _shown(run: str, kind: str) -> str:
    """The snippet's shared part: marked as copied, or (a rewording) only framed, with a note."""
    if kind == "reworded":
        note = SHOWN_AS[kind]
        return f'<span class="reworded" title="{note}">{escape(run)}</span> <em>({note})</em>'
    if kind == "masked":
        return f'<mark class="masked" title="{SHOWN_AS[kind]}">{escape(run)}</mark>'
    return f"<mark>{escape(run)}</mark>"


def _pair(pair: Pair) -> str:
    line = f", line {pair.line}" if pair.line is not None else ""
    snip = pair.snippet
    snippet = f"…{escape(snip.before)}{_shown(snip.run, snip.kind)}{escape(snip.after)}…"
    marker = "<dd>record marked contam_guard: allow</dd>" if pair.allowed_inline else ""
    return (
        '<div class="pair">'
        f"<div><div><code>{escape(pair.source)}</code> record {pair.record}{line}"
        f"{escape(pair.in_field)}</div>"
        f'<div class="snippet">{snippet}</div></div>'
        '<dl class="numbers">'
        + "".join(
            f"<dt>{escape(c.title)}</dt><dd>{escape(c.label.format(c.shown(pair.value(c.name))))}</dd>"
            for c in COLUMNS
            if pair.value(c.name)
        )
        + f"{marker}</dl></div>"
    )
