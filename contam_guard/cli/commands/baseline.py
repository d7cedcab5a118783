"""``contam-guard baseline``: record every current finding in the allowlist in one step.

Adopting the guard on a repository with years of data should not mean reviewing hundreds of old
findings before the first commit can pass. As with detect-secrets (``scan > .secrets.baseline``,
then ``audit``), a baseline records what is there today, so that from then on only new findings
fail; the old ones are then audited at leisure (``review --baseline``).

The scan is the one ``scan`` runs (the same inputs and options). Every finding that is neither
allowed nor a confirmed leak, and has no allowlist entry at all, becomes a false-positive entry
keyed by content like any other, with ``baseline: DATE`` and a reason saying it was not reviewed;
a warning about pairs such an entry covers needs none (it is allowed with its pair).
Nothing already in the allowlist is rewritten: a confirmed leak still fails, and an expired entry
is left for a person to renew (``review``) rather than renewed in bulk. Running it again on
unchanged data writes nothing (the file is only written when an entry is added).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from contam_guard.cli.commands.common import display_path
from contam_guard.core.allowlist import (
    FALSE_POSITIVE,
    Allowlist,
    Entry,
    Key,
    PairId,
    allowlisted_pairs,
    covered,
    entry_for,
    key_of,
    pairs_of,
    seen_in,
)
from contam_guard.core.config import LoadedConfig
from contam_guard.core.verdicts import Finding, Report
from contam_guard.engines.pipeline import ScanRequest, execute
from contam_guard.errors import ExitCode
from contam_guard.report import console

REASON = "baseline: in the data when the guard was adopted; not reviewed yet"
"""The reason every baseline entry gives (``review --baseline`` walks them to audit them)."""


@dataclass
class Counts:
    """What a baseline found, by finding (one per rule and content key)."""

    added_fail: int = 0
    added_warn: int = 0
    covered: int = 0
    """Warnings about pairs a recorded (or existing) false positive covers: allowed with it."""
    allowed: int = 0
    """Already allowed (by an entry, by its pair's entry, or by a record's marker)."""
    confirmed: int = 0
    """Confirmed leaks: they still fail."""
    expired: list[Entry] = field(default_factory=list)
    """Entries that have expired: left for a person to renew or remove."""

    @property
    def added(self) -> int:
        return self.added_fail + self.added_warn


def record(
    report: Report, allowlist: Allowlist, day: dt.date, loaded: LoadedConfig
) -> tuple[Allowlist, Counts]:
    """The allowlist with an entry for every finding of ``report`` that needs one, and the counts.

    Failing findings first: then a warning about pairs that a recorded or existing false
    positive covers needs no entry of its own (``core.allowlist.allow_pairs`` allows it with its
    pair on every scan). One entry covers every finding with the same content key.
    """
    counts = Counts()
    new: dict[Key, Entry] = {}
    pairs: dict[PairId, str] = allowlisted_pairs(report.findings)
    ordered = sorted(report.findings, key=lambda finding: finding.action != "fail")  # stable
    for finding in ordered:
        key = key_of(finding)
        existing = allowlist.entries.get(key)
        if finding.confirmed:
            counts.confirmed += 1
        elif finding.allowed:
            counts.allowed += 1
        elif existing is not None:  # expired (a live entry would have allowed or confirmed it)
            if existing not in counts.expired:
                counts.expired.append(existing)
        elif key in new:
            continue
        elif covered(finding, pairs):
            counts.covered += 1
        else:
            new[key] = _entry(report.findings, finding, day, loaded)
            pairs.update(dict.fromkeys(pairs_of(finding), REASON))
            if finding.action == "fail":
                counts.added_fail += 1
            else:
                counts.added_warn += 1
    for entry in new.values():
        allowlist = allowlist.with_entry(entry)
    return allowlist, counts


def _entry(findings: list[Finding], finding: Finding, day: dt.date, loaded: LoadedConfig) -> Entry:
    files = seen_in(findings, key_of(finding), loaded.root)
    entry = entry_for(finding, FALSE_POSITIVE, REASON, files=files)
    return entry.model_copy(update={"baseline": day})


def run(loaded: LoadedConfig, request: ScanRequest, day: dt.date, *, dry_run: bool = False) -> int:
    done = execute(loaded, request)
    report = done.report
    for text in report.notices:
        console.notice(text)
    updated, counts = record(report, done.allowlist, day, loaded)
    where = display_path(loaded.allowlist_path)
    scanned = (
        f"Scanned {report.result.records:,} record(s) in {len(report.result.files)} file(s): "
        f"{len(report.findings)} finding(s)."
    )
    console.info(scanned)
    verb = "Would record" if dry_run else "Recorded"
    with_pairs = (
        f", {counts.covered} warning(s) about the same pairs allowed with them" if counts.covered else ""
    )
    console.info(
        f"{verb} {counts.added} finding(s) as baseline entries in {where} "
        f"({counts.added_fail} failing, {counts.added_warn} warning){with_pairs}; "
        f"{counts.allowed} already allowed, {counts.confirmed} confirmed leak(s)."
    )
    if counts.confirmed:
        console.notice(
            f"{counts.confirmed} finding(s) are confirmed leaks in {where}: they still fail; "
            "scrub them (contam-guard scrub) or change their decision by hand"
        )
    for entry in counts.expired:
        console.notice(
            f"the {entry.kind} for {entry.describe()} expired on {entry.until}: a baseline does not "
            "renew it; `contam-guard review` asks about it again"
        )
    if dry_run:
        console.info("Dry run: the allowlist was not written.")
        return ExitCode.CLEAN
    if counts.added:
        updated.save()
        console.info(
            f"From now on only new findings fail. Commit {where}; audit the baseline entries with "
            "`contam-guard review --baseline` (the same paths). The commit that adds them allows "
            "findings nobody reviewed: a --diff/--staged scan reports it as weakening the guard until "
            "a reviewer accepts it (--accept-guard-change DIGEST, as the scan prints). Scrub still "
            "removes what only a baseline entry allows."
        )
    else:
        console.info(f"Nothing to add: {where} is unchanged.")
    return ExitCode.CLEAN


__all__ = ["REASON", "Counts", "record", "run"]
