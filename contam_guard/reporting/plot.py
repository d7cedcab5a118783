"""The any-hit-at-n curve as a PNG: people would rather look at the curve than read it."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")  # no display: render to memory only
import matplotlib.pyplot as plt

from contam_guard.analysis import SweepRow


def sweep_png(rows: list[SweepRow]) -> bytes:
    """A line per set:view: share of items sharing a run of at least n words, against n."""
    figure, axes = plt.subplots(figsize=(7, 4.2), dpi=120)
    try:
        for row in rows:
            ns = list(row.any_hit)
            axes.plot(ns, [100 * row.any_hit[k] for k in ns], marker="o", label=row.label)
        axes.set_xlabel("n (words in the shared run)")
        axes.set_ylabel("items with a shared run of at least n words (%)")
        axes.set_title("contam-guard sweep: any-hit at n")
        axes.axvline(13, color="grey", linestyle=":", linewidth=1)
        axes.grid(alpha=0.3)
        if rows:
            axes.legend(fontsize="small")
        buffer = io.BytesIO()
        # Fixed metadata so the same scan gives the same bytes.
        figure.savefig(buffer, format="png", metadata={"Software": None})
        return buffer.getvalue()
    finally:
        plt.close(figure)
