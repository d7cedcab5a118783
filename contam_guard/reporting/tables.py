"""CSV outputs: one row per test item (``--items-csv``), one per notable pair (``--pairs-csv``)."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Callable, Iterator

from contam_guard.rules import COLUMNS, RULES, column_value
from contam_guard.verdicts import Report

FLAG_PREFIX = "flag_"
RULE_COLUMNS = [FLAG_PREFIX + name for name in RULES]
"""One column per registered rule: ``1`` the rule flagged the item, ``allowed`` it did but every
finding of it on the item is allowed (allowlisted as a false positive, or by marker), ``0`` it
did not, empty when the rule was not run (disabled, or left out by ``--only``). What ``contam-guard
impact`` reads to split the scores."""
ITEM_COLUMNS = [
    "set",
    "item_id",
    "test_index",
    "words",
    "longest_run",
    "ngrams8",
    "ngrams8_found",
    "tokens_covered_L10",
    "sub50_windows",
    "sub50_hits",
    "view",
    *RULE_COLUMNS,
    *(column.name for column in COLUMNS),  # the rules' own numbers (issue 15's rules)
]
PAIR_COLUMNS = [
    "set",
    "item_id",
    "test_index",
    "source",
    "record",
    "longest_run",
    "ngrams8_found",
    "tokens_covered_L10",
    "sub50_hits",
    "view",
    "line",
    "field",
]


def item_rows(report: Report) -> Iterator[tuple[str | int | float, ...]]:
    """One row per test item, in ``ITEM_COLUMNS`` order (the CSV and the Spark frame share it)."""
    stats = report.stats
    flags = _flags(report)
    extra = [column.item(stats).tolist() for column in COLUMNS]
    for target in report.result.index.targets:
        for local in range(target.items):
            g = target.first_item + local
            yield (
                target.set_name,
                target.ids[local],
                int(target.test_index[local]),
                int(stats.words[g]),
                int(stats.longest_run[g]),
                int(stats.ngrams8[g]),
                int(stats.ngrams8_found[g]),
                int(stats.covered_l10[g]),
                int(stats.windows[g]),
                int(stats.window_hits[g]),
                target.view,
                *flags(g),
                *(column_value(column, values[g]) for column, values in zip(COLUMNS, extra)),
            )


def _flags(report: Report) -> Callable[[int], tuple[str, ...]]:
    """Per item (global number), each registered rule's value in ``RULE_COLUMNS`` order."""
    allowed: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for finding in report.findings:
        allowed[finding.rule, finding.item].append(finding.allowed)

    def value(name: str, item: int) -> str:
        if name not in report.actions:
            return ""
        found = allowed.get((name, item))
        if not found:
            return "0"
        return "allowed" if all(found) else "1"

    return lambda item: tuple(value(name, item) for name in RULES)


def items_csv(report: Report) -> str:
    """One row per test item, ``ITEM_COLUMNS`` (the rules' own columns last)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ITEM_COLUMNS)
    writer.writerows(item_rows(report))
    return out.getvalue()


def pairs_csv(report: Report) -> str:
    index = report.result.index
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*PAIR_COLUMNS, *(c.name for c in COLUMNS)])
    rows = []
    for pair in report.result.pairs:
        target = index.targets[int(index.item_target[pair.item])]
        local = pair.item - target.first_item
        rows.append(
            [
                target.set_name,
                target.ids[local],
                int(target.test_index[local]),
                pair.source,
                pair.record,
                pair.longest_run,
                pair.ngrams8_found,
                pair.covered_l10,
                pair.window_hits,
                target.view,
                "" if pair.line is None else pair.line,
                pair.field,
                *(column_value(c, c.pair(pair)) for c in COLUMNS),
            ]
        )
    rows.sort(key=lambda r: (r[0], r[9], r[2], r[3], r[4]))
    writer.writerows(rows)
    return out.getvalue()
