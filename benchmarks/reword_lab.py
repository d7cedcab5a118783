"""An in-process model of the ``reworded`` rule's score, for measuring feature ideas quickly.

The scan computes, per (training unit, registered item), the IDF-weighted Tversky score

    c / (I + 0.5 (U - c))

over the two's sets of content-feature hashes (``contam_guard/core/reword/matching.py``): weights
ln(1 + N / df) within the registered set (a feature no item holds weighs ln(1 + N / 0.5)), a long
unit cut into windows of 80 features overlapping by half, items with fewer than 5 features never
firing. Here the same score is computed over feature *strings* (a hash is a string's name: the
same sets, but for the rare 64-bit collision) with a sparse product, so that a feature function
(words -> features) can be swapped and measured in seconds. ``benchmarks.rewordings`` checks that
with the rule's own features this model gives the CLI's numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

Features = Callable[[str], list[str]]
"""A text's features, in order (repeats kept): what a unit's windows are cut from."""

WINDOW = 80
STEP = WINDOW // 2
BETA = 0.5
MIN_FEATURES = 5


def windows(features: list[str]) -> list[list[str]]:
    """A unit's windows of ``WINDOW`` features overlapping by half (one for a short unit)."""
    if len(features) <= WINDOW:
        return [features]
    count = (len(features) - WINDOW + STEP - 1) // STEP + 1
    return [features[k * STEP : k * STEP + WINDOW] for k in range(count)]


@dataclass
class Registered:
    """The items of one registered set under one feature function: their sets, weighted."""

    vocab: dict[str, int]
    weight: NDArray[np.float64]
    """Per feature number: ln(1 + N / df)."""
    matrix: sp.csr_matrix
    """Items x features, 1 where the item holds the feature."""
    item_weight: NDArray[np.float64]
    seen: NDArray[np.bool_]
    """Items with at least ``MIN_FEATURES`` features (the only ones that may fire)."""
    unseen_weight: float

    @classmethod
    def of(cls, feature_sets: Sequence[set[str]]) -> Registered:
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        for item, features in enumerate(feature_sets):
            for feature in features:
                rows.append(item)
                cols.append(vocab.setdefault(feature, len(vocab)))
        n = len(feature_sets)
        matrix = sp.csr_matrix(
            (np.ones(len(rows)), (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))),
            shape=(n, max(len(vocab), 1)),
        )
        df = np.asarray(matrix.sum(axis=0)).ravel()
        weight = np.log1p(n / np.maximum(df, 0.5))
        item_weight = np.asarray(matrix @ weight).ravel()
        seen = np.array([len(f) >= MIN_FEATURES for f in feature_sets], dtype=np.bool_)
        return cls(vocab, weight, matrix, item_weight, seen, float(np.log1p(n / 0.5)))

    def scores(self, units: Sequence[list[str]], beta: float = BETA) -> NDArray[np.float64]:
        """Units x items: each unit's best score over its windows with each item (dense)."""
        rows: list[int] = []
        cols: list[int] = []
        owner: list[int] = []
        own: list[float] = []
        for u, features in enumerate(units):
            for window in windows(features):
                distinct = set(window)
                w = len(owner)
                owner.append(u)
                known = [self.vocab[f] for f in distinct if f in self.vocab]
                own.append(
                    float(self.weight[known].sum()) + self.unseen_weight * (len(distinct) - len(known))
                )
                rows += [w] * len(known)
                cols += known
        query = sp.csr_matrix(
            (
                self.weight[np.array(cols, dtype=np.int64)],
                (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)),
            ),
            shape=(len(owner), self.matrix.shape[1]),
        )
        shared = (query @ self.matrix.T).toarray()
        own_arr = np.array(own)[:, None]
        score = shared / (self.item_weight[None, :] + beta * (own_arr - shared))
        score[:, ~self.seen] = 0.0
        best = np.zeros((len(units), self.matrix.shape[0]))
        np.maximum.at(best, np.array(owner, dtype=np.int64), score)
        return best


def register(texts: Sequence[str], features: Features) -> Registered:
    return Registered.of([set(features(text)) for text in texts])


@dataclass(frozen=True)
class Outcome:
    """Recall of the copies on their own items, and the false hits of an unrelated corpus."""

    threshold: float
    recall: float
    false_units: float
    """Share of the unrelated units flagged against some item."""
    false_items: float
    """Share of the registered items flagged by some unrelated unit."""


def own_scores(
    golden: Registered, copies: Sequence[list[str]], own: Sequence[int], beta: float = BETA
) -> NDArray[np.float64]:
    """Each copy's score with its own item."""
    best = golden.scores(copies, beta)
    return best[np.arange(len(own)), np.array(own, dtype=np.int64)]


def outcome(own: NDArray[np.float64], unrelated: NDArray[np.float64], threshold: float) -> Outcome:
    """``own``: each copy's score with its item; ``unrelated``: units x items of other text."""
    hit = unrelated >= threshold
    return Outcome(
        threshold,
        float((own >= threshold).mean()),
        float(hit.any(axis=1).mean()),
        float(hit.any(axis=0).mean()),
    )


def calibrated(own: NDArray[np.float64], unrelated: NDArray[np.float64], budget: float) -> Outcome:
    """The lowest threshold (on a 0.01 grid) at which at most ``budget`` of the unrelated units
    are flagged, and what it gives."""
    worst = unrelated.max(axis=1)
    for step in range(5, 101):
        threshold = step / 100
        if float((worst >= threshold).mean()) <= budget:
            return outcome(own, unrelated, threshold)
    return outcome(own, unrelated, 1.0)
