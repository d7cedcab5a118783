"""How well each method tells members from non-members, and the dataset-level test.

Per method, with the scores turned so that higher means "more likely a member"
(``scores.HIGHER_MEANS_SEEN``: ``loss``, ``zlib`` and ``lowercase`` are negated):

- AUROC and the ROC curve: scikit-learn's ``roc_auc_score`` and ``roc_curve`` (ties count half);
- TPR at 5% and 1% FPR: the highest true-positive rate among the ROC's points whose false-positive
  rate is at most 5% (1%). With fewer than 100 non-members, 1% FPR means no false positive at all;
- the dataset-level verdict: a one-sided Mann–Whitney U test (scipy's ``mannwhitneyu``,
  ``alternative="greater"``) that the members' (candidates') scores are stochastically larger
  than the non-members' (the reference's). Its p-value does not need a threshold per item, and is
  more reliable than one: per-item membership inference on real pre-training data is close to
  chance. ``U / (n_members × n_non-members)`` is the AUROC.

A NaN score (a text with no scored token) is left out of its method's evaluation, and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from contam_guard.probe.scores import HIGHER_MEANS_SEEN, Floats

FPR_POINTS: tuple[float, ...] = (0.05, 0.01)


@dataclass(frozen=True)
class MethodResult:
    method: str
    members: int
    nonmembers: int
    left_out: int
    """Scores left out as NaN (either side)."""
    auroc: float
    tpr_at: dict[float, float]
    """TPR at each of ``FPR_POINTS``."""
    u_statistic: float
    p_value: float
    """One-sided Mann–Whitney p-value: members score as more likely seen than non-members."""
    median_members: float
    median_nonmembers: float
    """Medians of the method's own values (not turned)."""
    fpr: Floats
    tpr: Floats


def oriented(method: str, values: Floats) -> Floats:
    """``values`` turned so that higher means "more likely a member"."""
    return values if HIGHER_MEANS_SEEN[method] else -values


def tpr_at_fpr(fpr: Floats, tpr: Floats, limit: float) -> float:
    """The highest TPR among ROC points with FPR at most ``limit``."""
    allowed = tpr[fpr <= limit + 1e-12]
    return float(allowed.max()) if allowed.size else 0.0


def evaluate_method(
    method: str, members: Sequence[float], nonmembers: Sequence[float]
) -> MethodResult | None:
    """The method's numbers, or None when either side has no score left (after NaNs)."""
    # Imported here: scipy and scikit-learn are the optional [probe] extra, and the command checks
    # for them (with a message naming the extra) before it gets this far.
    from scipy.stats import mannwhitneyu  # noqa: PLC0415
    from sklearn.metrics import roc_auc_score, roc_curve  # noqa: PLC0415

    raw_in = np.asarray(members, dtype=np.float64)
    raw_out = np.asarray(nonmembers, dtype=np.float64)
    kept_in, kept_out = raw_in[~np.isnan(raw_in)], raw_out[~np.isnan(raw_out)]
    left_out = int(raw_in.size - kept_in.size + raw_out.size - kept_out.size)
    if kept_in.size == 0 or kept_out.size == 0:
        return None
    # An infinite score ranks above (or below) every finite one; scikit-learn refuses infinities,
    # so they become the largest finite floats, which keeps every rank.
    turned_in = np.nan_to_num(oriented(method, kept_in))
    turned_out = np.nan_to_num(oriented(method, kept_out))
    truth = np.concatenate([np.ones(turned_in.size), np.zeros(turned_out.size)])
    scores = np.concatenate([turned_in, turned_out])
    fpr, tpr, _ = roc_curve(truth, scores, drop_intermediate=False)
    test = mannwhitneyu(turned_in, turned_out, alternative="greater")
    return MethodResult(
        method=method,
        members=int(kept_in.size),
        nonmembers=int(kept_out.size),
        left_out=left_out,
        auroc=float(roc_auc_score(truth, scores)),
        tpr_at={limit: tpr_at_fpr(fpr, tpr, limit) for limit in FPR_POINTS},
        u_statistic=float(test.statistic),
        p_value=float(test.pvalue),
        median_members=float(np.median(kept_in)),
        median_nonmembers=float(np.median(kept_out)),
        fpr=np.asarray(fpr, dtype=np.float64),
        tpr=np.asarray(tpr, dtype=np.float64),
    )


def significant(p_value: float, alpha: float, tests: int) -> bool:
    """The verdict for one of ``tests`` methods: p below ``alpha / tests`` (Bonferroni)."""
    return not math.isnan(p_value) and p_value < alpha / max(1, tests)
