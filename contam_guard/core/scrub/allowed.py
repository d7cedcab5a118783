"""Which records scrub keeps because the allowlist allows every pair they are in.

A reviewer who marked a (test item, training record) pair a false positive (their own worked
example, a public quote) expects scrub to leave that record alone, as the scan does. Scrub
itself knows only colliding n-grams, not findings, so the command scans the same inputs first
(every pair listed: no cap) and hands scrub the records to leave out of the filter.

A record is kept when the allowlist allows at least one of its pairs as a false positive and
every pair it could be cut for is allowed: each pair sharing a run of at least scrub's ``n``
words (the only pairs a colliding n-gram can come from) has findings, all of them allowed. A
record in one allowed pair and one unreviewed leak is scrubbed as usual (the allowed text may go
with it when a window covers it). A baseline entry is not a review: it keeps a finding from failing
the build until someone looks at it, so a pair allowed only by one is scrubbed like any leak.
Kept records are left out of the filter entirely, as if they were not in the input: they are
copied unchanged and their n-grams do not count towards ``max_doc_freq``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from contam_guard.core.allowlist import PairId, allowed_by_baseline, pairs_of
from contam_guard.core.verdicts import ALLOWED_BY_ALLOWLIST, Report


@dataclass(frozen=True)
class Kept:
    """Records to leave out of the filter, by file as the report names it."""

    records: dict[str, frozenset[int]]
    pairs: int
    """The allowlisted (test item, training record) pairs of those records."""

    @property
    def count(self) -> int:
        return sum(len(records) for records in self.records.values())

    def of(self, display: str) -> frozenset[int]:
        return self.records.get(display, frozenset())


NOTHING = Kept({}, 0)


def kept_records(report: Report, n: int) -> Kept:
    """The records of ``report`` whose every pair that may hold a colliding ``n``-gram is
    allowed, with at least one allowed by the allowlist (see the module docstring). ``report``
    must list every pair (``--max-pairs-per-item 0``): an unlisted record is never kept."""
    allowed: set[PairId] = set()
    by_allowlist: set[PairId] = set()
    refused: set[PairId] = set()
    listed = report.allowlist
    for finding in report.findings:
        pairs = pairs_of(finding)
        if not finding.allowed or (listed is not None and allowed_by_baseline(finding, listed)):
            refused |= pairs
        else:
            allowed |= pairs
            if finding.allowed_by == ALLOWED_BY_ALLOWLIST:
                by_allowlist |= pairs
    candidates: dict[tuple[str, int], set[PairId]] = defaultdict(set)
    for found in sorted(by_allowlist - refused):
        candidates[(found[1], found[2])].add(found)
    for row in report.result.pairs:  # a pair that could be cut for and is not allowed
        place = (row.source, row.record)
        if place in candidates and row.longest_run >= n:
            row_pair = (row.item, row.source, row.record)
            if row_pair not in allowed or row_pair in refused:
                del candidates[place]
    records: dict[str, set[int]] = defaultdict(set)
    for source, record in candidates:
        records[source].add(record)
    count = sum(len(pairs) for pairs in candidates.values())
    return Kept({source: frozenset(numbers) for source, numbers in sorted(records.items())}, count)


__all__ = ["NOTHING", "Kept", "kept_records"]
