"""The probe's outputs: the per-item CSV, the Markdown and JSON summaries, the ROC plot (PNG),
and the lines the console prints. None of them holds golden text: item ids and numbers only.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from contam_guard.probe.evaluate import FPR_POINTS, MethodResult, significant
from contam_guard.probe.items import Item

ITEM_COLUMNS: tuple[str, ...] = ("set", "item_id", "test_index", "tokens")
"""The ``--items-csv`` columns before one column per method."""

FRAMING = (
    "Membership inference on real pre-training corpora is close to chance when members and "
    "non-members come from the same distribution (MIMIR, Duan et al. 2024); post-hoc benchmarks "
    "such as WikiMIA overstate it through distribution shift between their members and "
    "non-members. Read these numbers as a comparison with the reference set, not as per-item "
    "verdicts, and pick a reference drawn the way the candidates were (same source, same time, "
    "same format) that the model cannot have seen."
)


@dataclass(frozen=True)
class ScoredItem:
    item: Item
    tokens: int
    """T: tokens with a log-probability."""
    scores: dict[str, float]


@dataclass(frozen=True)
class Summary:
    backend: str
    methods: tuple[str, ...]
    k: float
    alpha: float
    members: str
    """Where the members come from, in words."""
    nonmembers: str
    results: list[MethodResult]
    not_evaluated: dict[str, str] = field(default_factory=dict)
    """Methods without a result, and why."""
    unscored: int = 0
    """Items with no scored token (NaN scores)."""

    def verdict(self, result: MethodResult) -> bool:
        return significant(result.p_value, self.alpha, len(self.results))


def items_csv(rows: Sequence[ScoredItem], methods: Sequence[str]) -> str:
    """One row per item: ``set, item_id, test_index, tokens`` and each method's value (empty for
    NaN), in full precision (``repr`` of the float)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*ITEM_COLUMNS, *methods])
    for row in rows:
        values = [_cell(row.scores[m]) for m in methods]
        writer.writerow([row.item.set_name, row.item.item_id, row.item.index, row.tokens, *values])
    return buffer.getvalue()


def _cell(value: float) -> str:
    return "" if math.isnan(value) else repr(value)


def _num(value: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _p(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3g}"


def table_rows(summary: Summary) -> list[list[str]]:
    """The summary table (header first): one row per evaluated method."""
    header = [
        "method",
        "AUROC",
        *(f"TPR@{limit:.0%}FPR" for limit in FPR_POINTS),
        "p (one-sided)",
        "median members",
        "median non-members",
        "members vs reference",
    ]
    rows = [header]
    for r in summary.results:
        rows.append(
            [
                r.method,
                _num(r.auroc),
                *(_num(r.tpr_at[limit]) for limit in FPR_POINTS),
                _p(r.p_value),
                _num(r.median_members, 4),
                _num(r.median_nonmembers, 4),
                "seen more (significant)" if summary.verdict(r) else "no significant difference",
            ]
        )
    return rows


def verdict_line(summary: Summary) -> str:
    """The dataset-level verdict in one sentence."""
    tests = len(summary.results)
    cut = f"p < {summary.alpha:g}" + (f" / {tests} methods (Bonferroni)" if tests > 1 else "")
    hits = [r.method for r in summary.results if summary.verdict(r)]
    if not summary.results:
        return "No method could be evaluated."
    if hits:
        return (
            f"The members score as more familiar to the model than the non-members ({cut}) by "
            f"{', '.join(hits)}: evidence that the model saw them, or text like them, in training."
        )
    return (
        f"No method finds the members more familiar to the model than the non-members ({cut}): "
        "no evidence of exposure (which is not evidence of its absence)."
    )


def markdown(summary: Summary) -> str:
    rows = table_rows(summary)
    lines = [
        "# contam-guard probe",
        "",
        f"- Model: {summary.backend}",
        f"- Members: {summary.members}",
        f"- Non-members: {summary.nonmembers}",
        f"- Methods: {', '.join(summary.methods)}; k = {summary.k:g} (Min-K% and Min-K%++ average "
        "the lowest max(1, int(k × T)) of an item's T token scores)",
        "- Direction: lower loss, zlib and lowercase, higher mink and minkpp mean more likely seen",
        "",
        "| " + " | ".join(rows[0]) + " |",
        "| " + " | ".join("---" for _ in rows[0]) + " |",
        *("| " + " | ".join(row) + " |" for row in rows[1:]),
        "",
        f"**Verdict:** {verdict_line(summary)}",
        "",
    ]
    for method, why in summary.not_evaluated.items():
        lines.append(f"- {method}: not evaluated ({why})")
    if summary.unscored:
        lines.append(f"- {summary.unscored} item(s) had no scored token and are left out")
    lines += ["", f"_{FRAMING}_", ""]
    return "\n".join(lines)


def summary_json(summary: Summary) -> str:
    """The summary as JSON (NaN as null), the ROC curves' points included."""
    data = {
        "backend": summary.backend,
        "methods": list(summary.methods),
        "k": summary.k,
        "alpha": summary.alpha,
        "members": summary.members,
        "nonmembers": summary.nonmembers,
        "unscored_items": summary.unscored,
        "not_evaluated": summary.not_evaluated,
        "verdict": verdict_line(summary),
        "results": {
            r.method: {
                "members": r.members,
                "nonmembers": r.nonmembers,
                "left_out": r.left_out,
                "auroc": _json(r.auroc),
                **{f"tpr_at_{round(limit * 100)}pct_fpr": _json(r.tpr_at[limit]) for limit in FPR_POINTS},
                "mann_whitney_u": _json(r.u_statistic),
                "p_value": _json(r.p_value),
                "significant": summary.verdict(r),
                "median_members": _json(r.median_members),
                "median_nonmembers": _json(r.median_nonmembers),
                "roc": {"fpr": [float(x) for x in r.fpr], "tpr": [float(x) for x in r.tpr]},
            }
            for r in summary.results
        },
    }
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def _json(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else value


def console_lines(summary: Summary) -> list[str]:
    """The table as aligned text, then the verdict."""
    rows = table_rows(summary)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.append(verdict_line(summary))
    lines += [f"{method}: not evaluated ({why})" for method, why in summary.not_evaluated.items()]
    return lines


def roc_png(summary: Summary) -> bytes:
    """Each method's ROC curve as PNG bytes: linear axes (left) and log-log axes (right, where
    the low false-positive rates that TPR@1%FPR looks at can be seen). Needs matplotlib."""
    from matplotlib.figure import Figure  # noqa: PLC0415 (the optional [plot] extra)

    figure = Figure(figsize=(10, 4.4), dpi=120, layout="constrained")
    linear, logarithmic = figure.subplots(1, 2)
    for r in summary.results:
        label = f"{r.method} (AUROC {r.auroc:.3f})"
        linear.plot(r.fpr, r.tpr, label=label)
        logarithmic.plot(r.fpr, r.tpr, label=label)
    for axes in (linear, logarithmic):
        axes.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="chance")
        axes.set_xlabel("false-positive rate (non-members flagged)")
        axes.set_ylabel("true-positive rate (members flagged)")
    linear.set_title("ROC")
    linear.legend(loc="lower right", fontsize="small")
    logarithmic.set_xscale("log")
    logarithmic.set_yscale("log")
    logarithmic.set_title("ROC, log-log (0 not drawn)")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
