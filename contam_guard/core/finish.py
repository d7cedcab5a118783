"""The one post-scan step: from a scan's state to its report (``Scanner.finish``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

from contam_guard.core.allowlist import Allowlist, apply
from contam_guard.core.match.pairs import run_span
from contam_guard.core.match.stats import RewordStats
from contam_guard.core.pairs import Snippet
from contam_guard.core.result import ScanResult
from contam_guard.core.scan_pass import ScanPass
from contam_guard.core.spec import native
from contam_guard.core.state import ScanState
from contam_guard.core.verdicts import Report, evaluate


@dataclass(frozen=True)
class FinishOptions:
    """What ``Scanner.finish`` applies (the command line's options)."""

    exit_zero: bool = False
    """Exit 0 even with failing findings (``--exit-zero``)."""
    use_allowlist: bool = True
    """False (``--no-allowlist``): ignore the allowlist and the records' inline markers."""
    check_stale: bool = True
    """Note allowlist entries this scan did not use (off for a diff, which reads a part only)."""
    redact_pii: bool = False
    """Mask e-mail addresses, phone numbers, keys ... in the training-side snippets."""
    today: dt.date | None = None


def finish(scanner: ScanPass, state: ScanState, options: FinishOptions) -> Report:
    """Redaction, the rules, the records' markers and the allowlist."""
    reword = None
    if state.reword is not None and scanner.reword is not None:
        content_words = scanner.reword.reword_index.content_words
        reword = RewordStats(state.reword.numbers_run, state.reword.reworded, content_words)
    result = ScanResult(
        index=scanner.index,
        totals=state.ngram.totals,
        pairs=state.store.pairs(),
        unlisted=state.store.unlisted(),
        max_pairs=scanner.max_pairs,
        reword=reword,
        census=state.census,
    )
    if options.redact_pii:
        result.pairs = [replace(p, snippet=redacted(p.snippet)) for p in result.pairs]
    markers = options.use_allowlist and scanner.config.allowlist.markers
    report = evaluate(result, scanner.rules, exit_zero=options.exit_zero, honour_markers=markers)
    report.notices += scanner.notices + scanner.reword_notices()
    report.environment = native.pending_notices()
    report.allowlist = Allowlist(scanner.allowlist_path, {}) if scanner.allowlist_path else None
    if options.use_allowlist and scanner.allowlist_path is not None:
        report.allowlist = Allowlist.load(scanner.allowlist_path)
        today = options.today or dt.date.today()
        apply(report, report.allowlist, today, check_stale=options.check_stale, root=scanner.root)
    return report


def redacted(snippet: Snippet) -> Snippet:
    """A training-side snippet with e-mail addresses, phone numbers, IPs and keys masked."""
    from contam_guard.core.redact import redact  # noqa: PLC0415

    return replace(
        snippet,
        before=redact(snippet.before),
        run=redact(snippet.run),
        after=redact(snippet.after),
        span=snippet.span or run_span(snippet.run),  # the allowlist key of what was shared
    )
