"""CSV outputs: one row per test item (``--items-csv``), one per notable pair (``--pairs-csv``).

Both loop over the rule families' columns (``core.families.COLUMNS``): a new family's numbers
appear in both without a line here."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Callable, Iterator

from contam_guard.core.families import COLUMNS
from contam_guard.core.rules import RULES
from contam_guard.core.verdicts import Report

FLAG_PREFIX = "flag_"
RULE_COLUMNS = [FLAG_PREFIX + name for name in RULES]
"""One column per registered rule: ``1`` the rule flagged the item, ``allowed`` it did but every
finding of it on the item is allowed (allowlisted as a false positive, or by marker), ``0`` it
did not, empty when the rule was not run (disabled, or left out by ``--only``). What ``contam-guard
impact`` reads to split the scores."""
ITEM_SIZES = ["words", "ngrams8", "sub50_windows"]
"""What each item has to be found: its words, its 8-grams, its 50-character windows."""
ITEM_COLUMNS = ["set", "item_id", "test_index", "view", *ITEM_SIZES, *(c.key for c in COLUMNS), *RULE_COLUMNS]
PAIR_COLUMNS = [
    *("set", "item_id", "test_index", "view", "source", "record", "line", "field"),
    *(c.key for c in COLUMNS),
]


def item_rows(report: Report) -> Iterator[tuple[str | int | float, ...]]:
    """One row per test item, in ``ITEM_COLUMNS`` order (the CSV and the Spark frame share it)."""
    stats = report.stats
    flags = _flags(report)
    sizes = [stats.words, stats.ngrams8, stats.windows]
    numbers = [column.item(stats).tolist() for column in COLUMNS]
    for target in report.result.index.targets:
        for local in range(target.items):
            g = target.first_item + local
            yield (
                target.set_name,
                target.ids[local],
                int(target.test_index[local]),
                target.view,
                *(int(size[g]) for size in sizes),
                *(column.shown(values[g]) for column, values in zip(COLUMNS, numbers)),
                *flags(g),
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


def pair_rows(report: Report) -> list[list[str | int | float]]:
    """One row per listed pair, in ``PAIR_COLUMNS`` order, sorted (set, view, item, source, record)."""
    index = report.result.index
    rows: list[list[str | int | float]] = []
    for pair in report.result.pairs:
        target = index.targets[int(index.item_target[pair.item])]
        local = pair.item - target.first_item
        rows.append(
            [
                target.set_name,
                target.ids[local],
                int(target.test_index[local]),
                target.view,
                pair.source,
                pair.record,
                "" if pair.line is None else pair.line,
                pair.field,
                *(c.shown(pair.value(c.name)) for c in COLUMNS),
            ]
        )
    rows.sort(key=lambda r: (r[0], r[3], r[2], r[4], r[5]))
    return rows


def items_csv(report: Report) -> str:
    return _csv(ITEM_COLUMNS, item_rows(report))


def pairs_csv(report: Report) -> str:
    return _csv(PAIR_COLUMNS, pair_rows(report))


def _csv(header: list[str], rows: object) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)  # type: ignore[arg-type]
    return out.getvalue()
