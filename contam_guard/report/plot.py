"""The sweep as a PNG: people would rather look at the curves than read the table.

Two panels, both with a log y axis (contamination shares span 0.1% to 100%; a linear axis flattens
everything under a few percent onto the floor):

- left: per set:view, the share of items sharing a run of at least n words with some record,
  against n, with the rules' word thresholds drawn and labelled (GPT-3's N, PaLM's 8-grams,
  Llama 2's runs of 10+);
- right: each rule's share of items flagged (the table's rule columns), one bar per set:view.

A share of 0 has no place on a log axis: it is not drawn, and the axis label says so. Built on a
``Figure`` of its own (no pyplot state, no display), fixed metadata: the same sweep gives the
same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from contam_guard.report.analysis import SweepRow

Threshold = tuple[int, str]
"""A word threshold n and its label."""
DEFAULT_THRESHOLDS: tuple[Threshold, ...] = (
    (8, "PaLM: 8-grams"),
    (10, "Llama 2: runs of 10+"),
    (13, "GPT-3: N = 13"),
)
"""The published rules' word thresholds (contam-guard's defaults); a caller with other settings
passes its own (``thresholds``)."""
_PERCENT = FuncFormatter(lambda value, _: f"{value:g}%")


def sweep_figure(rows: Sequence[SweepRow], thresholds: Sequence[Threshold] = DEFAULT_THRESHOLDS) -> Figure:
    """The sweep's figure: the any-hit curves (left) and each rule's share (right)."""
    figure = Figure(figsize=(11, 4.4), dpi=120, layout="constrained")
    curve, shares = figure.subplots(1, 2, width_ratios=(3, 2))
    _curves(curve, rows, thresholds)
    _rule_shares(shares, rows)
    return figure


def sweep_png(rows: Sequence[SweepRow], thresholds: Sequence[Threshold] = DEFAULT_THRESHOLDS) -> bytes:
    """``sweep_figure`` as PNG bytes (deterministic)."""
    figure = sweep_figure(rows, thresholds)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _curves(axes: Axes, rows: Sequence[SweepRow], thresholds: Sequence[Threshold]) -> None:
    ns = sorted({n for row in rows for n in row.any_hit})
    for row in rows:
        xs = list(row.any_hit)
        axes.plot(xs, [100 * row.any_hit[k] for k in xs], marker="o", label=row.label)
    # mask: a 0% point is left out (clipped, the line would plunge off the axis).
    _log_percent(axes, [100 * v for row in rows for v in row.any_hit.values()], "mask")
    for n, label in thresholds:
        if ns and ns[0] <= n <= ns[-1]:
            axes.axvline(n, color="grey", linestyle=":", linewidth=1)
            # In axes coordinates vertically, so the label sits at the top whatever the data.
            axes.text(
                n,
                0.98,
                f" {label}",
                transform=axes.get_xaxis_transform(),
                rotation=90,
                va="top",
                ha="right",
                fontsize="small",
                color="dimgrey",
            )
    axes.set_xlabel("n (words in the shared run)")
    axes.set_ylabel("items with a shared run of at least n words\n(log scale; 0% not drawn)")
    axes.set_title("any-hit at n")
    if rows:
        axes.legend(fontsize="small", loc="lower left")


def _rule_shares(axes: Axes, rows: Sequence[SweepRow]) -> None:
    names = list(rows[0].rules) if rows else []
    width = 0.8 / max(len(rows), 1)
    for k, row in enumerate(rows):
        xs = np.arange(len(names)) + (k - (len(rows) - 1) / 2) * width
        axes.bar(xs, [100 * row.rules[name] for name in names], width=width, label=row.label)
    # clip: bars start at 0, which a log axis can only clip (a 0% bar has no height).
    _log_percent(axes, [100 * v for row in rows for v in row.rules.values()], "clip")
    axes.set_xticks(np.arange(len(names)), names, rotation=30, ha="right", fontsize="small")
    axes.set_ylabel("items flagged (log scale; 0% not drawn)")
    axes.set_title("each rule's share")


def _log_percent(axes: Axes, values: list[float], nonpositive: str) -> None:
    """A log y axis in percent, from under the smallest share drawn to just over 100%."""
    axes.set_yscale("log", nonpositive=nonpositive)
    positive = [v for v in values if v > 0]
    axes.set_ylim(min(positive) / 2 if positive else 0.1, 150)
    axes.yaxis.set_major_formatter(_PERCENT)
    axes.grid(alpha=0.3, which="major")
