"""The article's tables for one scan: any-hit-at-n shares and each rule's flagged share.

An item shares an n-gram with the scanned data exactly when its longest shared run is at least
n words, so one pass gives every threshold at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contam_guard.config import Rules
from contam_guard.findings import gpt3_thresholds
from contam_guard.rules import gpt4
from contam_guard.scan import ScanResult

DEFAULT_NS = (5, 6, 8, 10, 13, 20, 30, 50)
RULE_COLUMNS = ("gpt3", "palm", "l2 dirty", "l2 >=20%", "gpt4 x3", "gpt4 all")


@dataclass(frozen=True)
class SweepRow:
    label: str
    items: int
    any_hit: dict[int, float]
    """Share of items whose longest shared run is at least n words, per n."""
    rules: dict[str, float]
    """Share of items each rule flags (GPT-4 "x3": in expectation over three random draws)."""


def sweep(result: ScanResult, rules: Rules, ns: tuple[int, ...] = DEFAULT_NS) -> list[SweepRow]:
    stats = result.item_stats(rules.llama2.min_run)
    n = gpt3_thresholds(result, rules)
    rows = []
    for target in result.index.targets:
        span = slice(target.first_item, target.first_item + target.items)
        count = max(target.items, 1)
        longest = stats.longest_run[span]
        words = stats.words[span]
        ngrams8 = stats.ngrams8[span]
        l2_share = np.divide(stats.covered_l10[span], words, out=np.zeros(words.size), where=words > 0)
        palm_share = np.divide(
            stats.ngrams8_found[span], ngrams8, out=np.zeros(words.size), where=ngrams8 > 0
        )
        probability = gpt4.three_draw_probability(stats.windows[span], stats.window_hits[span])
        shares = {
            "gpt3": float(np.sum(longest >= n[span])),
            "palm": float(np.sum((ngrams8 > 0) & (palm_share >= rules.palm.threshold))),
            "l2 dirty": float(np.sum((words > 0) & (l2_share >= rules.llama2.dirty))),
            "l2 >=20%": float(np.sum((words > 0) & (l2_share >= rules.llama2.not_clean))),
            "gpt4 x3": float(np.sum(probability)),
            "gpt4 all": float(np.sum(stats.window_hits[span] > 0)),
        }
        rows.append(
            SweepRow(
                label=target.label,
                items=target.items,
                any_hit={k: float(np.sum(longest >= k)) / count for k in ns},
                rules={name: value / count for name, value in shares.items()},
            )
        )
    return rows


def sweep_csv(rows: list[SweepRow]) -> str:
    if not rows:
        return "set_view,items\n"
    ns = list(rows[0].any_hit)
    header = ["set_view", "items", *(f"n={k}" for k in ns), *RULE_COLUMNS]
    lines = [",".join(header)]
    for row in rows:
        values = [f"{row.any_hit[k]:.6f}" for k in ns] + [f"{row.rules[c]:.6f}" for c in RULE_COLUMNS]
        lines.append(",".join([row.label, str(row.items), *values]))
    return "\n".join(lines) + "\n"
