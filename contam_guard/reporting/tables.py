"""CSV outputs: one row per test item (``--items-csv``), one per notable pair (``--pairs-csv``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from contam_guard.verdicts import Report

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


def item_rows(report: Report) -> Iterator[tuple[str | int, ...]]:
    """One row per test item, in ``ITEM_COLUMNS`` order (the CSV and the Spark frame share it)."""
    stats = report.stats
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
            )


def items_csv(report: Report) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ITEM_COLUMNS)
    writer.writerows(item_rows(report))
    return out.getvalue()


def pairs_csv(report: Report) -> str:
    index = report.result.index
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PAIR_COLUMNS)
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
            ]
        )
    rows.sort(key=lambda r: (r[0], r[9], r[2], r[3], r[4]))
    writer.writerows(rows)
    return out.getvalue()
