"""The sweep plot, checked through matplotlib's own objects: log y axes, labelled thresholds,
one curve per set:view and each rule's share as bars (``report.plot``)."""

from __future__ import annotations

import io
from typing import Any

import matplotlib.image
import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from numpy.typing import NDArray

from contam_guard.report.analysis import RULE_COLUMNS, SweepRow
from contam_guard.report.plot import DEFAULT_THRESHOLDS, sweep_figure, sweep_png

NS = (5, 8, 10, 13, 20, 50)
ROWS = [
    SweepRow(
        "gsm8k:question",
        1000,
        dict(zip(NS, [0.40, 0.20, 0.05, 0.012, 0.003, 0.0])),
        dict(zip(RULE_COLUMNS, [0.012, 0.02, 0.004, 0.03, 0.011, 0.25, 0.05, 0.07])),
    ),
    SweepRow(
        "gsm8k:answer",
        1000,
        dict(zip(NS, [0.9, 0.5, 0.3, 0.1, 0.05, 0.01])),
        dict(zip(RULE_COLUMNS, [0.1, 0.2, 0.0, 0.3, 0.15, 0.6, 0.4, 0.5])),
    ),
]


def xs(line: Line2D) -> NDArray[Any]:
    """A line's x values as an array (matplotlib types them as any array-like)."""
    return np.asarray(line.get_xdata())


def test_both_panels_have_a_log_y_axis_in_percent() -> None:
    curve, shares = sweep_figure(ROWS).axes
    assert curve.get_yscale() == "log" and shares.get_yscale() == "log"
    low, high = curve.get_ylim()
    assert low == pytest.approx(100 * 0.003 / 2) and high == 150  # under the smallest share drawn
    formatter = curve.yaxis.get_major_formatter()
    assert formatter(10.0, 0) == "10%" and formatter(0.1, 0) == "0.1%"
    assert "log scale" in curve.get_ylabel() and "log scale" in shares.get_ylabel()


def test_thresholds_are_drawn_and_labelled_within_the_range() -> None:
    curve, _ = sweep_figure(ROWS).axes
    labels = {text.get_text().strip(): text.get_position()[0] for text in curve.texts}
    assert labels == {"PaLM: 8-grams": 8, "Llama 2: runs of 10+": 10, "GPT-3: N = 13": 13}
    vertical = sorted(xs(line)[0] for line in curve.lines if len(set(xs(line))) == 1)
    assert vertical == [8, 10, 13]
    # A threshold outside the swept range is not drawn; a caller's own thresholds are.
    curve, _ = sweep_figure(ROWS, [(11, "GPT-3: N = 11 (auto)"), (64, "off the axis")]).axes
    assert [text.get_text().strip() for text in curve.texts] == ["GPT-3: N = 11 (auto)"]
    assert DEFAULT_THRESHOLDS[-1] == (13, "GPT-3: N = 13")


def test_one_curve_per_set_view_with_zero_shares_left_out() -> None:
    curve, _ = sweep_figure(ROWS).axes
    lines = {line.get_label(): line for line in curve.lines if len(set(xs(line))) > 1}
    assert list(lines) == ["gsm8k:question", "gsm8k:answer"]
    question = lines["gsm8k:question"]
    assert list(xs(question)) == list(NS)
    assert list(np.asarray(question.get_ydata())) == pytest.approx([40, 20, 5, 1.2, 0.3, 0])
    # The 0% point is masked on the log axis (not drawn), not clipped to the floor; the bars'
    # axis clips instead (a bar starts at 0).
    curve_y = curve.transData.transform([(50, 0.0), (50, 1.0)])[:, 1]
    assert not np.isfinite(curve_y[0]) and np.isfinite(curve_y[1])
    _, shares = sweep_figure(ROWS).axes
    assert np.isfinite(shares.transData.transform([(0, 0.0)])[0, 1])
    assert not any(isinstance(c, PathCollection) for c in curve.collections)  # lines, not scatter


def test_each_rules_share_is_a_bar_per_set_view() -> None:
    _, shares = sweep_figure(ROWS).axes
    assert [label.get_text() for label in shares.get_xticklabels()] == list(RULE_COLUMNS)
    bars = [patch for patch in shares.patches if isinstance(patch, Rectangle)]
    assert len(bars) == len(RULE_COLUMNS) * len(ROWS)
    heights = [bar.get_height() for bar in bars]
    expected = [100 * row.rules[name] for row in ROWS for name in RULE_COLUMNS]
    assert heights == pytest.approx(expected)
    # Bars of one set:view share a colour; the two set:views differ.
    colours = {tuple(bar.get_facecolor()) for bar in bars[: len(RULE_COLUMNS)]}
    assert len(colours) == 1 and colours != {tuple(bars[-1].get_facecolor())}


def test_png_is_deterministic_and_draws_something() -> None:
    first = sweep_png(ROWS)
    assert first == sweep_png(ROWS) and first.startswith(b"\x89PNG")
    pixels = matplotlib.image.imread(io.BytesIO(first))
    assert float(np.mean(pixels[..., :3] < 0.9)) > 0.02


def test_no_rows_still_renders() -> None:
    curve, shares = sweep_figure([]).axes
    assert curve.get_yscale() == shares.get_yscale() == "log" and not curve.texts
    assert sweep_png([]).startswith(b"\x89PNG")
