"""``impact --plot``: each subset's score with its 95% interval (matplotlib, the ``[plot]`` extra).

Left group: full, clean and flagged (split by the chosen rule). Right group: Llama 2's four
subsets, each beside a grey bar spanning μ ± 2σ, where a random subset of the same size lands
(a subset's point outside its bar is |Z| > 2). An empty subset has no point, and says so. Built
on a ``Figure`` of its own with fixed metadata: the same report gives the same bytes.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure

from contam_guard.impact.analysis import Z_BAR, Impact, Subset


def impact_png(impact: Impact) -> bytes:
    """The figure as PNG bytes (deterministic)."""
    figure = Figure(figsize=(9, 4.2), dpi=120, layout="constrained")
    axes = figure.subplots()
    scale = 100.0 if impact.binary else 1.0
    subsets: list[Subset] = [impact.full, impact.clean, impact.flagged, *impact.llama2]
    labels = []
    for x, subset in enumerate(subsets):
        llama = x >= 3
        labels.append(f"{'L2 ' if llama else ''}{subset.name}\n(n={subset.n:,})")
        sampling = subset.sampling
        if sampling is not None and sampling.mu is not None and sampling.sigma:
            low, high = sampling.mu - Z_BAR * sampling.sigma, sampling.mu + Z_BAR * sampling.sigma
            axes.bar(x, (high - low) * scale, bottom=low * scale, width=0.5, color="lightgrey", zorder=1)
        mean = subset.mean
        if mean.value is None:
            axes.annotate(
                "empty",
                (x, 0),
                xycoords=("data", "axes fraction"),
                xytext=(0, 4),
                textcoords="offset points",
                ha="center",
                color="dimgrey",
                fontsize="small",
            )
            continue
        low_err = (mean.value - mean.low) * scale if mean.low is not None else 0.0
        high_err = (mean.high - mean.value) * scale if mean.high is not None else 0.0
        axes.errorbar(
            x,
            mean.value * scale,
            yerr=[[low_err], [high_err]],
            fmt="o",
            color="tab:red" if subset.name in ("flagged", "dirty", "not clean") else "tab:blue",
            capsize=4,
            zorder=2,
        )
    axes.axvline(2.5, color="grey", linewidth=0.8)
    axes.set_xlim(-0.6, len(subsets) - 0.4)
    axes.set_xticks(range(len(subsets)), labels, fontsize="small")
    axes.set_ylabel(f"{impact.scores.metric}{' (%)' if impact.binary else ''}")
    rule = "any rule" if impact.rule == "any" else impact.rule
    axes.set_title(
        f"{impact.items.set_name}: split by {rule} (left), Llama 2's subsets (right)\n"
        f"points: 95% bootstrap intervals; grey: μ ± {Z_BAR:g}σ of random subsets of the same size",
        fontsize="medium",
    )
    axes.grid(alpha=0.3, axis="y")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()
