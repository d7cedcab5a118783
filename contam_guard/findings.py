"""From scan statistics to findings: apply each enabled rule with its threshold and action.

GPT-3's rule is decided per pair (a run of N words with one record), so each pair that reaches
N is its own finding. PaLM's, Llama 2's and GPT-4's rules are decided per item over everything
scanned (an 8-gram "seen at least once" anywhere), so each fired item is one finding that lists
the pairs contributing to it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from contam_guard.config import Rules
from contam_guard.engine.index import Target
from contam_guard.errors import ExitCode
from contam_guard.rules import gpt3, gpt4, llama2, palm
from contam_guard.rules.base import IntArray, ItemStats, RuleResult
from contam_guard.scan import PairRow, ScanResult


@dataclass(frozen=True)
class Finding:
    rule: str
    action: str
    target: Target
    item: int
    item_id: str
    test_index: int
    detail: str
    pairs: tuple[PairRow, ...]
    allowed: bool = False
    """Set when every contributing record carries the inline allow marker."""

    def sort_key(self) -> tuple[str, str, int, str, str, int]:
        first = self.pairs[0] if self.pairs else None
        return (
            self.target.set_name,
            self.target.view,
            self.test_index,
            self.rule,
            first.source if first else "",
            first.record if first else -1,
        )


@dataclass
class Report:
    result: ScanResult
    stats: ItemStats
    thresholds: IntArray
    """GPT-3's N for each item."""
    rule_results: dict[str, RuleResult]
    findings: list[Finding] = field(default_factory=list)
    exit_zero: bool = False

    @property
    def failing(self) -> list[Finding]:
        return [f for f in self.findings if f.action == "fail" and not f.allowed]

    @property
    def return_code(self) -> ExitCode:
        if self.failing and not self.exit_zero:
            return ExitCode.CONTAMINATED
        return ExitCode.CLEAN


def gpt3_thresholds(result: ScanResult, rules: Rules) -> IntArray:
    index = result.index
    n = np.zeros(index.items, dtype=np.int64)
    for target in index.targets:
        span = slice(target.first_item, target.first_item + target.items)
        value = rules.gpt3.n
        n[span] = gpt3.auto_n(index.word_counts[span]) if value == "auto" else value
    return n


def evaluate(result: ScanResult, rules: Rules, *, exit_zero: bool = False) -> Report:
    """Apply every enabled rule and collect the findings, sorted deterministically."""
    stats = result.item_stats(rules.llama2.min_run)
    n = gpt3_thresholds(result, rules)
    outcomes: dict[str, RuleResult] = {}
    if rules.gpt3.enabled:
        outcomes["gpt3"] = gpt3.evaluate(stats, n)
    if rules.palm.enabled:
        outcomes["palm"] = palm.evaluate(stats, rules.palm.threshold)
    if rules.llama2.enabled:
        l2 = rules.llama2
        outcomes["llama2"] = llama2.evaluate(stats, l2.dirty, l2.not_clean, l2.fire_on)
    if rules.gpt4.enabled:
        outcomes["gpt4"] = gpt4.evaluate(stats, rules.gpt4.mode, rules.gpt4.probability)
    report = Report(result, stats, n, outcomes, exit_zero=exit_zero)

    by_item: dict[int, list[PairRow]] = defaultdict(list)
    for pair in result.pairs:
        by_item[pair.item].append(pair)
    index = result.index
    actions = {name: getattr(rules, name).action for name in outcomes}
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
            pairs = sorted(by_item[item], key=lambda p: (-p.longest_run, -p.window_hits, p.source, p.record))
            if name == "gpt3":
                for pair in pairs:
                    if pair.longest_run >= n[item]:
                        detail = f"shared run of {pair.longest_run} words >= N = {n[item]}"
                        report.findings.append(
                            Finding(**base, detail=detail, pairs=(pair,), allowed=pair.allowed_inline)
                        )
            else:
                allowed = bool(pairs) and all(p.allowed_inline for p in pairs)
                report.findings.append(
                    Finding(**base, detail=outcome.explain[item], pairs=tuple(pairs), allowed=allowed)
                )
    report.findings.sort(key=Finding.sort_key)
    return report
