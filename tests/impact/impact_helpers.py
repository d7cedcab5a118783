"""Helpers for the impact tests: an items CSV as a scan writes it, and a scores file."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contam_guard.report.tables import ITEM_COLUMNS


def items_csv(
    path: Path,
    flags: Sequence[dict[str, str]],
    *,
    shares: Sequence[float] | None = None,
    set_name: str = "bench",
    view: str = "question",
) -> Path:
    """An items CSV in the scan's own column order: item ``n`` has id ``q<n>``, 100 words of which
    ``shares[n]`` are covered, and the flag values given (absent rules: ``0``)."""
    rows = []
    for n, flag in enumerate(flags):
        covered = round(100 * (shares[n] if shares is not None else 0.0))
        values: dict[str, Any] = {name: 0 for name in ITEM_COLUMNS}
        values |= {"set": set_name, "item_id": f"q{n}", "test_index": n, "words": 100, "view": view}
        values |= {"tokens_covered_L10": covered, "longest_run": covered}
        values |= {name: "0" for name in ITEM_COLUMNS if name.startswith("flag_")}
        values |= {f"flag_{rule}": value for rule, value in flag.items()}
        rows.append(values)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=ITEM_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def scores_jsonl(path: Path, scores: Sequence[float], key: str = "item_id") -> Path:
    """One line per item: ``{"item_id": "q<n>", "score": s}`` (or ``test_index``: n)."""
    with path.open("w", encoding="utf-8") as handle:
        for n, score in enumerate(scores):
            handle.write(json.dumps({key: f"q{n}" if key == "item_id" else n, "score": score}) + "\n")
    return path
