"""The review as one self-contained HTML page: pair by pair, shared runs highlighted.

No server, no scripts, no external assets: open the file in any browser. Everything from the
data is HTML-escaped.
"""

from __future__ import annotations

from html import escape

from contam_guard import __version__
from contam_guard.findings import Finding, Report
from contam_guard.reporting.markdown import MAX_PAIRS_SHOWN, GoldenText, more_records
from contam_guard.scan import PairRow

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
.numbers { font-size: .9rem; } .numbers dt { color: #666; } .numbers dd { margin: 0 0 .3rem; }
.golden { border-top: 1px dashed #bbb; margin-top: .6rem; padding-top: .4rem; }
.badge { font-weight: 600; text-transform: uppercase; font-size: .8rem; }
"""


def render(report: Report, golden: GoldenText | None = None) -> str:
    result = report.result
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>contam-guard review</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>contam-guard review</h1>",
        f'<p class="summary">Scanned {result.records} records ({result.chars} characters) in '
        f"{len(result.files)} file(s) against {len(result.index.targets)} golden view(s). "
        f"Findings: <strong>{len(report.findings)}</strong> ({len(report.failing)} failing). "
        f"contam-guard {escape(__version__)}.</p>",
    ]
    parts += [f'<p class="summary">Skipped: {escape(s)}</p>' for s in result.skipped]
    if not report.findings:
        parts.append('<p id="no-findings">No findings.</p>')
    for number, finding in enumerate(report.findings, 1):
        parts.append(_finding(number, finding, golden))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _finding(number: int, finding: Finding, golden: GoldenText | None) -> str:
    action = "allowed" if finding.allowed else finding.action
    target = finding.target
    out = [
        f'<section class="finding {action}" id="finding-{number}">',
        f'<h2>{number}. <span class="badge">{escape(action)}</span> {escape(finding.rule)}: '
        f"{escape(target.label)} v{target.version}, item {escape(finding.item_id)} "
        f"(test index {finding.test_index})</h2>",
        f"<div>{escape(finding.detail)}</div>",
        *(
            [f'<div class="allowed-note">{escape(finding.note)}</div>']
            if finding.allowed and finding.note
            else []
        ),
    ]
    out += [_pair(pair) for pair in finding.pairs[:MAX_PAIRS_SHOWN]]
    if more := more_records(finding, min(len(finding.pairs), MAX_PAIRS_SHOWN)):
        out.append(f"<p>{escape(more)}</p>")
    text = golden(finding) if golden is not None else None
    if text is not None:
        out.append(f'<div class="golden"><strong>Golden item</strong> (--show-golden): {escape(text)}</div>')
    out.append("</section>")
    return "\n".join(out)


def _pair(pair: PairRow) -> str:
    line = f", line {pair.line}" if pair.line is not None else ""
    snip = pair.snippet
    snippet = f"…{escape(snip.before)}<mark>{escape(snip.run)}</mark>{escape(snip.after)}…"
    marker = "<dd>record marked contam_guard: allow</dd>" if pair.allowed_inline else ""
    return (
        '<div class="pair">'
        f"<div><div><code>{escape(pair.source)}</code> record {pair.record}{line}"
        f"{escape(pair.in_field)}</div>"
        f'<div class="snippet">{snippet}</div></div>'
        '<dl class="numbers">'
        f"<dt>longest shared run</dt><dd>{pair.longest_run} words</dd>"
        f"<dt>8-grams found</dt><dd>{pair.ngrams8_found}</dd>"
        f"<dt>words in runs of 10+</dt><dd>{pair.covered_l10}</dd>"
        f"<dt>50-char windows found</dt><dd>{pair.window_hits}</dd>{marker}</dl></div>"
    )
