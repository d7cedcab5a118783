"""From scan statistics to findings: apply each enabled rule with its settings and action.

A rule decided per pair (GPT-3's: a run of N words with one record; ``RuleResult.pair_bar``)
makes each pair that reaches its bar a finding of its own. The others (PaLM's, Llama 2's and
GPT-4's) are decided per item over everything scanned (an 8-gram "seen at least once"
anywhere), so each fired item is one finding that lists the pairs contributing to it. At most
``max_pairs`` pairs per item are listed (``core.match.pairs``): beyond that, a per-item finding
counts the others, and per-pair findings are summed up per shared run.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from contam_guard.core.config import Rules
from contam_guard.core.match.index import Target
from contam_guard.core.match.pairs import Unlisted, run_span
from contam_guard.core.match.stats import ItemStats
from contam_guard.core.pairs import Pair
from contam_guard.core.result import ScanResult
from contam_guard.core.rules import RULES, RuleResult
from contam_guard.core.spec.hashing import digest
from contam_guard.errors import ExitCode

if TYPE_CHECKING:
    from contam_guard.core.weakenings import GuardChanges

ALLOWED_BY_MARKER = "marker"
ALLOWED_BY_ALLOWLIST = "allowlist"


def span_digest(pair: Pair) -> str:
    """Digest of the normalised words of the training-side shared run of ``pair``
    (``core.match.pairs.run_span``; taken before any redaction of the snippet)."""
    return pair.snippet.span or run_span(pair.snippet.run)


@dataclass(frozen=True)
class Finding:
    rule: str
    action: str
    target: Target
    item: int
    item_id: str
    test_index: int
    detail: str
    pairs: tuple[Pair, ...]
    allowed: bool = False
    """Set when every contributing record carries the inline allow marker, or a reviewed
    allowlist entry marks the finding a false positive."""
    allowed_by: str | None = None
    """``"marker"`` or ``"allowlist"`` when ``allowed``."""
    reason: str | None = None
    """The allowlist entry's reason (a false positive, or a confirmed leak)."""
    confirmed: bool = False
    """Reviewed as a real leak (``contam-guard review``, answer ``y``): it still fails."""
    unlisted: Unlisted | None = None
    """Records the finding counts but does not list (beyond ``--max-pairs-per-item``)."""

    @property
    def set(self) -> str:
        """The test item's set (``target.set_name``)."""
        return self.target.set_name

    @property
    def view(self) -> str:
        return self.target.view

    @property
    def source(self) -> str | None:
        """The training input of the finding's first record (None: none is listed)."""
        return self.pairs[0].source if self.pairs else None

    @property
    def record(self) -> int | None:
        """The finding's first training record (a per-pair rule's finding has exactly one)."""
        return self.pairs[0].record if self.pairs else None

    @property
    def field(self) -> str | None:
        return self.pairs[0].field if self.pairs else None

    @property
    def numbers(self) -> dict[str, float]:
        """The first pair's numbers, by column (``core.families.COLUMNS``)."""
        return dict(self.pairs[0].numbers) if self.pairs else {}

    @property
    def records(self) -> int:
        """Every training record behind the finding, listed or not."""
        return len(self.pairs) + (self.unlisted.records if self.unlisted is not None else 0)

    @cached_property
    def span(self) -> str:
        """The content key of the finding: a digest over the shared runs of its pairs.

        One pair (every GPT-3 finding): a digest of that pair's shared words. Per-item rules
        list every contributing record, so a new record sharing another run changes the key.
        """
        spans = {span_digest(p) for p in self.pairs} | (self.unlisted.spans if self.unlisted else set())
        return digest(*(s.encode("ascii") for s in sorted(spans)))

    @property
    def status(self) -> str:
        """What a report shows: ``allowed``, else the rule's action (``fail`` or ``warn``)."""
        return "allowed" if self.allowed else self.action

    @property
    def note(self) -> str:
        """Why a finding is allowed or was reviewed, for reports ("" when neither)."""
        if self.allowed and self.allowed_by == ALLOWED_BY_MARKER:
            return 'allowed by marker ("contam_guard": "allow" on the record)'
        if self.allowed:
            return f"allowlisted as a false positive: {self.reason}"
        if self.confirmed:
            return f"reviewed: confirmed leak ({self.reason})"
        return ""

    def sort_key(self) -> tuple[str, str, int, str, bool, str, int, str]:
        first = self.pairs[0] if self.pairs else None
        return (
            self.target.set_name,
            self.target.view,
            self.test_index,
            self.rule,
            first is None,  # a summary of unlisted records after the listed ones
            first.source if first else "",
            # summaries of unlisted records: the longest shared run first, then by span
            first.record if first else -(self.unlisted.longest if self.unlisted else 0),
            self.span if first is None else "",
        )


@dataclass
class Report:
    result: ScanResult
    stats: ItemStats
    findings: list[Finding] = field(default_factory=list)
    exit_zero: bool = False
    actions: dict[str, str] = field(default_factory=dict)
    """Each enabled rule's action (``fail`` or ``warn``)."""
    notices: list[str] = field(default_factory=list)
    """Things a reader should know that are not findings (stale or expired allowlist entries)."""
    in_training: dict[str, int] = field(default_factory=dict)
    """``scan --index``: the training records of the index holding each pair's shared run (by
    ``span_digest``)."""
    environment: list[str] = field(default_factory=list)
    """What a reader should know about the machine, not the data (the numpy kernels in use):
    shown by the command line, never written into a review (same data, same review)."""
    allowlist: Any = None
    """The allowlist the findings were checked against (``core.allowlist.Allowlist``; None: none)."""
    guard: GuardChanges | None = None
    """``--diff``/``--staged``: the range's changes that weaken the guard (``guard_changes``);
    they fail the scan unless accepted by their digest."""

    @property
    def failing(self) -> list[Finding]:
        return [f for f in self.findings if f.action == "fail" and not f.allowed]

    @property
    def return_code(self) -> ExitCode:
        weakened = self.guard is not None and self.guard.failing
        if (self.failing or weakened) and not self.exit_zero:
            return ExitCode.CONTAMINATED
        return ExitCode.CLEAN

    @property
    def exit_code(self) -> ExitCode:
        """What the command line exits with: 1 for a failing finding (unless ``exit_zero``), else 0."""
        return self.return_code


def _marked(finding: Finding) -> Finding:
    """Allowed by marker when every contributing record carries ``"contam_guard": "allow"``."""
    unlisted_marked = finding.unlisted is None or finding.unlisted.all_marked
    if finding.records and all(p.allowed_inline for p in finding.pairs) and unlisted_marked:
        return replace(finding, allowed=True, allowed_by=ALLOWED_BY_MARKER)
    return finding


def evaluate(
    result: ScanResult, rules: Rules, *, exit_zero: bool = False, honour_markers: bool = True
) -> Report:
    """Apply every enabled rule and collect the findings, sorted deterministically.

    ``honour_markers=False`` (``--no-allowlist``) ignores the records' inline allow markers.
    """
    index = result.index
    stats = result.item_stats()
    outcomes = {name: RULES[name].evaluate(stats, rules.of(name), index) for name in rules.enabled()}
    actions = {name: str(rules.of(name).action) for name in outcomes}
    outcomes = {name: _deferred(name, outcome, outcomes, actions) for name, outcome in outcomes.items()}
    report = Report(result, stats, exit_zero=exit_zero, actions=actions)

    by_item: dict[int, list[Pair]] = defaultdict(list)
    for pair in result.pairs:
        by_item[pair.item].append(pair)
    for name, outcome in outcomes.items():
        for item in np.flatnonzero(outcome.fired).tolist():
            target = index.targets[int(index.item_target[item])]
            local = item - target.first_item
            base = dict(
                rule=name,
                action=actions[name],
                target=target,
                item=item,
                item_id=target.ids[local],
                test_index=int(target.test_index[local]),
            )
            pairs = sorted(by_item[item], key=lambda p: (tuple(-v for v in p.rank()), p.source, p.record))
            unlisted = result.unlisted.get(item)
            if outcome.pair_bar is not None:  # decided per pair: each pair reaching the bar
                rule = RULES[name]  # a rule's own pair value (default: the shared run)
                value = rule.pair_value or (lambda p: float(p.longest_run))
                bar = float(outcome.pair_bar[item])
                for pair in pairs:
                    if value(pair) >= bar:
                        detail = rule.pair_detail(value(pair), bar)
                        report.findings.append(Finding(**base, detail=detail, pairs=(pair,)))
                if rule.pair_value is not None:  # the unlisted records are counted by shared run
                    continue
                for more in unlisted.reaching(int(bar)) if unlisted else []:  # beyond the cap
                    detail = rule.more_detail(more.records, more.longest, bar)
                    report.findings.append(Finding(**base, detail=detail, pairs=(), unlisted=more))
            else:
                # a pair only the rewording rules found shares no run or window
                pairs = [p for p in pairs if p.longest_run or p.window_hits]
                finding = Finding(**base, detail=outcome.explain[item], pairs=tuple(pairs), unlisted=unlisted)
                report.findings.append(finding)
    if honour_markers:
        report.findings = [_marked(f) for f in report.findings]
    report.findings.sort(key=Finding.sort_key)
    return report


def _deferred(
    name: str, outcome: RuleResult, outcomes: dict[str, RuleResult], actions: dict[str, str]
) -> RuleResult:
    """``outcome`` without the items its rule leaves to another (``Rule.defers_to``): where
    that rule runs, fails and has a bar no higher, each pair is that rule's failing finding."""
    other = RULES[name].defers_to
    if other is None or other not in outcomes or actions[other] != "fail":
        return outcome
    bar, other_bar = outcome.pair_bar, outcomes[other].pair_bar
    assert bar is not None and other_bar is not None  # both decided per pair
    return replace(outcome, fired=outcome.fired & (other_bar > bar))
