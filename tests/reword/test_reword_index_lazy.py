"""The rewording rules' index reads what registration stored and decodes nothing to start.

A scan of a few records must not rebuild the derived views' search structures. The
index is built from per-item counts only; a small batch is looked up in the stored tables; the
item weights ``register`` stored are the numbers a scan would compute from the table, bit for
bit, and the numbers of the rule's first implementation (``np.unique`` over the item-ordered
features), so a manifest written before they were stored scans the same.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from contam_guard.core.reword.index import RewordIndex, TargetWords
from contam_guard.core.reword.matching import Scorer, reworded_scores
from contam_guard.core.reword.views import WORDS, derived_name
from contam_guard.core.reword.weights import item_weights
from contam_guard.io.manifest import store
from tests.helpers import write_jsonl
from tests.reword.test_prefix_filter import REPORT_FLOOR, VOCAB, registered, units_of


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RewordIndex:
    rng = random.Random(7)
    golden = tmp_path / "golden.jsonl"
    write_jsonl(golden, [{"q": " ".join(rng.choices(VOCAB, k=rng.randint(4, 30)))} for _ in range(80)])
    return registered(tmp_path, golden, "q", monkeypatch)


def first_implementation(tmp_path: Path) -> np.ndarray:
    """Item weights as the rule first computed them (``np.unique`` over the features in item
    order), each feature's weight from the C library's ``log1p`` as ``core.reword.weights.idf``
    defines it (numpy's vectorised ``log1p`` rounds some last bits differently)."""
    manifest = store.load(tmp_path / ".contam-guard" / "manifest.json")
    view = manifest.sets["golden"].views[derived_name("q", WORDS)]
    hashes = view.window_hashes
    per_item = np.maximum(view.alnum_counts - 49, 0)
    item = np.repeat(np.arange(per_item.size), per_item)
    _, inverse, df = np.unique(hashes, return_inverse=True, return_counts=True)
    idf = np.array([math.log1p(per_item.size / d) for d in df[inverse].astype(np.float64).tolist()])
    return np.bincount(item, weights=idf, minlength=per_item.size)


def test_building_the_index_decodes_no_table(index: RewordIndex) -> None:
    assert index.words and not index.grams.built
    assert all("table" not in target.__dict__ for target in index.words)


def test_stored_item_weights_are_the_computed_ones_bit_for_bit(index: RewordIndex, tmp_path: Path) -> None:
    (target,) = index.words
    stored = target.item_weight
    assert target._stored_weights() is not None  # read from the view's file
    assert "all_hashes" not in target.table.__dict__  # and no table was decoded for them
    from_table = item_weights(target.table, target.items)
    without = TargetWords(target.first_item, target.items, lambda: target.table)  # an older manifest
    assert stored.tobytes() == from_table.tobytes() == without.item_weight.tobytes()
    assert stored.tobytes() == first_implementation(tmp_path).tobytes()
    assert bool((stored > 0).all())


def test_a_small_batch_is_scored_without_decoding_the_view(index: RewordIndex) -> None:
    hashes, first = units_of(["apple pear tank water deep depth feet monday sold baked cookies"])
    scorers = [Scorer(t, REPORT_FLOOR) for t in index.words]
    unit, item, score = reworded_scores(hashes, first, scorers)
    (target,) = index.words
    assert "all_hashes" not in target.table.__dict__ and "postings" not in target.__dict__
    assert "prefixes" not in scorers[0].__dict__
    # the same pairs as the prefix filter, which decodes the whole view
    forced = reworded_scores(hashes, first, [Scorer(t, REPORT_FLOOR, "prefixes") for t in index.words])
    assert sorted(zip(unit.tolist(), item.tolist(), score.tolist())) == sorted(
        zip(*(a.tolist() for a in forced))
    )
    assert unit.size > 0
