"""``impact``'s report as JSON (for programs, with a format version) and as Markdown (for a PR
comment or a model card). Neither holds test text: only ids, counts and scores."""

from __future__ import annotations

import json
from typing import Any

from contam_guard.impact.analysis import DIRTY, NOT_CLEAN, Z_BAR, Impact, Subset
from contam_guard.impact.stats import CONFIDENCE, Interval
from contam_guard.version import __version__

FORMAT_VERSION = 1


def to_json(impact: Impact) -> str:
    """The report as JSON (``format_version`` 1). Scores are the raw means (0..1 for 0/1 scores)."""
    scores = impact.scores
    data: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "tool": f"contam-guard {__version__}",
        "scores": {
            "path": str(scores.path),
            "format": scores.format,
            "metric": scores.metric,
            "filter": scores.filter,
        },
        "items": {"path": str(impact.items.path), "set": impact.items.set_name, "views": impact.items.views},
        "rule": impact.rule,
        "bootstrap": {"draws": impact.draws, "seed": impact.seed, "confidence": CONFIDENCE},
        "counts": {
            "scored": impact.full.n,
            "clean": impact.clean.n,
            "flagged": impact.flagged.n,
            "unscored": impact.unscored,
        },
        "full": _subset(impact.full),
        "clean": _subset(impact.clean),
        "flagged": _subset(impact.flagged),
        "clean_minus_full": _interval(impact.difference),
        "gpt3_relative_change": _interval(impact.relative),
        "llama2": {
            "measure": "tokens_covered_L10 / words (words in shared runs of 10+ words)",
            "not_clean_at": NOT_CLEAN,
            "dirty_at": DIRTY,
            "subsets": [_subset(subset) for subset in impact.llama2],
            "contaminated": impact.contaminated,
            "all_four_beyond_2": impact.all_four_beyond,
        },
    }
    return json.dumps(data, indent=2) + "\n"


def _interval(interval: Interval) -> dict[str, Any]:
    return {
        "value": interval.value,
        "low": interval.low,
        "high": interval.high,
        "excludes_zero": interval.excludes_zero,
        "draws": interval.draws,
    }


def _subset(subset: Subset) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": subset.name,
        "definition": subset.definition,
        "n": subset.n,
        "mean": subset.mean.value,
        "low": subset.mean.low,
        "high": subset.mean.high,
    }
    if subset.sampling is not None:
        data |= {"mu": subset.sampling.mu, "sigma": subset.sampling.sigma, "z": subset.sampling.z}
    return data


def to_markdown(impact: Impact) -> str:
    """The report as Markdown: the three scores, the difference with its interval, GPT-3's
    relative change, Llama 2's four subsets and verdict."""
    fmt = _Format(impact.binary)
    scores = impact.scores
    source = f"`{scores.path.name}` ({scores.format}, metric `{scores.metric}`"
    source += f", filter `{scores.filter}`)" if scores.filter else ")"
    rule = "any rule" if impact.rule == "any" else f"`{impact.rule}`"
    lines = [
        f"## Report both scores: {impact.items.set_name} ({', '.join(impact.items.views)}), split by {rule}",
        "",
        f"Scores: {source}; flags: `{impact.items.path.name}`.",
        "",
        "| subset | items | score | 95% interval |",
        "|---|---:|---:|---|",
    ]
    for subset in (impact.full, impact.clean, impact.flagged):
        lines.append(
            f"| {subset.name} ({subset.definition}) | {subset.n:,} | {fmt.mean(subset)} | "
            f"{fmt.span(subset.mean)} |"
        )
    lines += ["", _difference(impact, fmt), _relative(impact)]
    if impact.unscored:
        lines.append(f"{impact.unscored:,} items of the set have no score and are left out of every row.")
    lines += [
        "",
        "### Llama 2's four subsets",
        "",
        "Share of each item's words in runs of 10+ words shared with the training data "
        "(Llama 2, Appendix A.6, with words for tokens). Z = (X̄ − μ) / σ, μ and σ from "
        f"{impact.draws:,} random subsets of the same size drawn from all scored items.",
        "",
        "| subset | items | score | 95% interval | μ | σ | Z |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for subset in impact.llama2:
        sampling = subset.sampling
        mu = fmt.value(sampling.mu) if sampling else "–"
        sigma = fmt.value(sampling.sigma, points=True) if sampling else "–"
        z = f"{sampling.z:+.2f}" if sampling and sampling.z is not None else "–"
        lines.append(
            f"| {subset.name} ({subset.definition}) | {subset.n:,} | {fmt.mean(subset)} | "
            f"{fmt.span(subset.mean)} | {mu} | {sigma} | {z} |"
        )
    lines += ["", _verdict(impact), ""]
    lines.append(
        f"Intervals: {impact.draws:,} bootstrap resamples of the items, seed {impact.seed} "
        f"(`contam-guard impact`, contam-guard {__version__})."
    )
    return "\n".join(lines) + "\n"


def _difference(impact: Impact, fmt: _Format) -> str:
    diff = impact.difference
    if diff.value is None:
        return "Clean − full: no clean item, nothing to compare."
    text = f"**Clean − full: {fmt.delta(diff.value)}**"
    if diff.low is None or diff.high is None:
        return text + "."
    text += f" (95% paired bootstrap interval {fmt.delta(diff.low)} to {fmt.delta(diff.high)}"
    if diff.draws < impact.draws:
        text += f"; {impact.draws - diff.draws:,} resamples without a clean item left out"
    text += "): "
    if diff.excludes_zero:
        return text + "the interval excludes 0, the flagged items move the score."
    return text + "the interval includes 0, no measurable effect at this sample size."


def _relative(impact: Impact) -> str:
    rel = impact.relative
    if rel.value is None:
        return (
            "GPT-3's relative change (clean − full) / full: undefined (no clean item, or a full score of 0)."
        )
    text = f"GPT-3's relative change (clean − full) / full: {rel.value:+.2%}"
    if rel.low is not None and rel.high is not None:
        text += f" (95% interval {rel.low:+.2%} to {rel.high:+.2%})"
    return text + "."


def _verdict(impact: Impact) -> str:
    dirty = impact.dirty
    if impact.contaminated is None:
        why = "is empty" if dirty.n == 0 else "is every scored item"
        return f"Llama 2's test: the dirty subset {why}, so there is nothing to compare (no verdict)."
    z = dirty.sampling.z if dirty.sampling else None
    verdict = "**contaminated**" if impact.contaminated else "not contaminated"
    compare = ">" if impact.contaminated else "≤"
    text = f"Llama 2's test: the dirty subset's Z is {z:+.2f}; |Z| {compare} {Z_BAR:g}: {verdict}."
    if impact.all_four_beyond:
        text += f" All four subsets have |Z| > {Z_BAR:g}."
    return text


class _Format:
    """Scores as percentages when every score is 0 or 1, else as numbers."""

    def __init__(self, binary: bool) -> None:
        self.binary = binary

    def value(self, value: float | None, *, points: bool = False) -> str:
        if value is None:
            return "–"
        if self.binary:
            return f"{100 * value:.2f} pts" if points else f"{100 * value:.1f}%"
        return f"{value:.4g}"

    def mean(self, subset: Subset) -> str:
        return self.value(subset.mean.value) if subset.n else "–"

    def span(self, interval: Interval) -> str:
        if interval.low is None or interval.high is None:
            return "–"
        return f"{self.value(interval.low)} to {self.value(interval.high)}"

    def delta(self, value: float) -> str:
        return f"{100 * value:+.2f} points" if self.binary else f"{value:+.4g}"
