"""The article's tables for one scan: any-hit-at-n shares and each rule's flagged share.

An item shares an n-gram with the scanned data exactly when its longest shared run is at least
n words, so one pass gives every threshold at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contam_guard.core.config import Rules
from contam_guard.core.match.stats import FloatArray
from contam_guard.core.result import ScanResult
from contam_guard.core.rules import RULES

DEFAULT_NS = (5, 6, 8, 10, 13, 20, 30, 50)
RULE_COLUMNS = tuple(column for rule in RULES.values() for column in rule.columns)


@dataclass(frozen=True)
class SweepRow:
    label: str
    items: int
    any_hit: dict[int, float]
    """Share of items whose longest shared run is at least n words, per n."""
    rules: dict[str, float]
    """Share of items each rule flags, by the rule's columns (``Rule.sweep``; GPT-4's "x3" in
    expectation over three random draws)."""


def sweep(result: ScanResult, rules: Rules, ns: tuple[int, ...] = DEFAULT_NS) -> list[SweepRow]:
    """Per set and view: the any-hit-at-n shares and every registered rule's columns."""
    stats = result.item_stats()
    index = result.index
    columns: dict[str, FloatArray] = {}
    for name, rule in RULES.items():  # every rule, enabled or not: the table compares them
        columns.update(rule.sweep(stats, rules.of(name), index))
    rows = []
    for target in index.targets:
        span = slice(target.first_item, target.first_item + target.items)
        count = max(target.items, 1)
        longest = stats.longest_run[span]
        rows.append(
            SweepRow(
                label=target.label,
                items=target.items,
                any_hit={k: float(np.sum(longest >= k)) / count for k in ns},
                rules={name: float(np.sum(values[span])) / count for name, values in columns.items()},
            )
        )
    return rows


def sweep_csv(rows: list[SweepRow]) -> str:
    if not rows:
        return "set_view,items\n"
    ns = list(rows[0].any_hit)
    columns = list(RULE_COLUMNS)
    header = ["set_view", "items", *(f"n={k}" for k in ns), *columns]
    lines = [",".join(header)]
    for row in rows:
        values = [f"{row.any_hit[k]:.6f}" for k in ns] + [f"{row.rules[c]:.6f}" for c in columns]
        lines.append(",".join([row.label, str(row.items), *values]))
    return "\n".join(lines) + "\n"
