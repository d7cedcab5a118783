"""``contam-guard review``: walk the unreviewed findings of a scan, one pair at a time.

The scan is run afresh with the same inputs and options as ``scan`` (so what is reviewed is what
CI sees). For each finding not yet in the allowlist: the pair is shown on stderr (the
training-side snippet and the rule's numbers; golden text only with ``--show-golden``), then a
line is read from stdin: ``y`` real leak, ``n`` false positive (then a reason, required), ``s``
skip, ``q`` quit (``cli.commands.answers``: off a terminal each answer must come in time and be a
line of text, or the review stops with exit 2). Both ``y`` and ``n`` are written to the
allowlist at once (atomically): ``n`` allows the finding from then on, ``y`` records a confirmed
leak that still fails the scan but is not asked about again. End of input is ``q``. Only failing
findings are walked unless ``--all`` is given (warnings too). One decision covers every finding
with the same content key, and a false positive covers the warnings about the same (test item,
training record) pairs (``core.allowlist.allow_pairs``): they are not asked about after it.
``--baseline`` walks the findings that ``contam-guard baseline`` recorded without review (the
audit step): an answer replaces the baseline entry, a skip keeps it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from contam_guard.cli.commands.answers import Answers, prompt
from contam_guard.core.allowlist import (
    FALSE_POSITIVE,
    LEAK,
    Allowlist,
    Decision,
    Entry,
    Key,
    PairId,
    allowed_by_baseline,
    covered,
    entry_for,
    key_of,
    pairs_of,
    seen_in,
)
from contam_guard.core.config import LoadedConfig
from contam_guard.core.verdicts import Finding
from contam_guard.engines.pipeline import ScanRequest, execute
from contam_guard.errors import ExitCode
from contam_guard.io.atomic import Interrupted
from contam_guard.report import console
from contam_guard.report.markdown import GoldenText

SKIP: Literal["skip"] = "skip"


@dataclass(frozen=True)
class ReviewOptions:
    include_warn: bool = False
    baseline: bool = False
    """Walk the findings allowed only by a baseline entry (``contam-guard baseline``)."""
    by: str | None = None
    until: dt.date | None = None
    answer_timeout: float = 60.0
    """Seconds to wait for each answer when standard input is not a terminal."""


@dataclass
class Tally:
    leaks: int = 0
    false_positives: int = 0
    skipped: int = 0
    covered: int = 0


def _ask(answers: Answers, question: str) -> str | None:
    """Prompt on stderr, read one line from stdin; None at end of input."""
    prompt(question)
    line = answers.line()
    return None if line is None else line.strip()


def _reason(answers: Answers) -> str | None:
    while True:
        answer = _ask(answers, "Why is it not a leak? (reason, required): ")
        if answer is None or answer:
            return answer
        console.notice("a reason is required, so that others can check the decision")


def candidates(
    findings: list[Finding], include_warn: bool, allowlist: Allowlist | None = None
) -> list[Finding]:
    """Unreviewed findings, one per content key, failing ones first, each in report order (a
    false positive then covers the warnings on its pairs); with ``allowlist``, those its baseline
    entries allow (``review --baseline``)."""
    seen: set[Key] = set()
    out: list[Finding] = []
    for finding in findings:
        if finding.action != "fail" and not include_warn:
            continue
        if allowlist is not None:
            if not allowed_by_baseline(finding, allowlist):
                continue
        elif finding.allowed or finding.confirmed:
            continue
        key = key_of(finding)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return sorted(out, key=lambda finding: finding.action != "fail")  # stable: report order kept


def _nothing(findings: list[Finding], options: ReviewOptions) -> str:
    """Why there is nothing to review, and what else could be."""
    if options.baseline:
        return "Nothing to review: no finding is allowed by a baseline entry (contam-guard baseline)."
    text = "Nothing to review: every failing finding is already in the allowlist."
    warnings = len(candidates(findings, include_warn=True))
    if warnings and not options.include_warn:
        text += f" {warnings} warning(s) are not reviewed yet: add --all to walk them too."
    return text


def run(loaded: LoadedConfig, request: ScanRequest, options: ReviewOptions) -> int:
    done = execute(loaded, request)
    allowlist = done.allowlist
    todo = candidates(done.report.findings, options.include_warn, allowlist if options.baseline else None)
    tally = Tally()
    if not todo:
        console.info(_nothing(done.report.findings, options))
        return ExitCode.CLEAN
    answers = Answers(timeout=options.answer_timeout)  # a closed stdin: exit 2 before any question
    console.info(f"{len(todo)} finding(s) to review; decisions go to {allowlist.path}")
    allowed: dict[PairId, str] = {}  # pairs answered "false positive" in this review
    try:
        for number, finding in enumerate(todo, 1):
            if not options.baseline and covered(finding, allowed):
                tally.covered += 1  # a warning about a pair just judged a false positive
                continue
            console.review_pair(number, len(todo), finding, _golden(done.golden, finding))
            decision = _decide(answers, tally)
            if decision is None:
                break
            if decision == SKIP:
                continue
            reason = "confirmed leak" if decision == LEAK else _reason(answers)
            if reason is None:
                break
            files = seen_in(done.report.findings, key_of(finding), loaded.root)
            allowlist = allowlist.with_entry(_entry(finding, decision, reason, options, files))
            allowlist.save()
            if decision == FALSE_POSITIVE:
                allowed.update(dict.fromkeys(pairs_of(finding), reason))
    except (KeyboardInterrupt, Interrupted):  # Interrupted: Ctrl-C under cli.main
        console.notice("interrupted: the decisions made so far are saved")
    covered_note = (
        f", {tally.covered} warning(s) on pairs answered false positive (allowed with them)"
        if tally.covered
        else ""
    )
    console.info(
        f"Reviewed: {tally.false_positives} false positive(s), {tally.leaks} confirmed leak(s), "
        f"{tally.skipped} skipped{covered_note}. The allowlist is {allowlist.path}: commit it."
    )
    return ExitCode.CLEAN


def _decide(answers: Answers, tally: Tally) -> Decision | Literal["skip"] | None:
    while True:
        answer = _ask(answers, "Real leak? [y]es, leak / [n]o, false positive / [s]kip / [q]uit: ")
        if answer is None or answer.lower() in ("q", "quit"):
            return None
        choice = answer.lower()[:1]
        if choice == "y":
            tally.leaks += 1
            return LEAK
        if choice == "n":
            tally.false_positives += 1
            return FALSE_POSITIVE
        if choice == "s":
            tally.skipped += 1
            return SKIP
        console.notice(f"{answer!r}: answer y, n, s or q")


def _golden(golden: GoldenText | None, finding: Finding) -> str | None:
    return golden(finding) if golden is not None else None


def _entry(
    finding: Finding, decision: Decision, reason: str, options: ReviewOptions, files: tuple[str, ...]
) -> Entry:
    # the entry records the files it was seen in, so stale notices know its data
    return entry_for(finding, decision, reason, by=options.by, until=options.until, files=files)


__all__ = ["ReviewOptions", "candidates", "run"]
