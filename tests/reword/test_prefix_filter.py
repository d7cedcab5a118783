"""The reworded rule's two paths find every pair at or over its floor, with the score the
all-pairs computation gives, bit for bit.

``reference_scores`` is the rule's first implementation, kept here as the slow reference: every
(unit, item) pair sharing any feature is materialised and scored, from the whole decoded view.
Both paths of ``matching.reworded_scores`` (``Scorer``: the prefix filter, and the direct
lookups in the stored table that a small scan takes) must give exactly the pairs of the
reference whose score reaches the floor, with equal scores: on random texts over a small
vocabulary (heavy overlaps, every score range) and on the development set and GSM8K's train
split (question + answer) against GSM8K's test questions.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from contam_guard.cli import main
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.reword.content import content_words
from contam_guard.core.reword.hashing import unigrams_of
from contam_guard.core.reword.index import RewordIndex, Table
from contam_guard.core.reword.matching import RECORD_SHARE, Scorer, reworded_scores, windows
from contam_guard.core.reword.words import normalised_words
from contam_guard.core.rules.reworded import Settings
from contam_guard.core.spec.normalise import CURRENT
from contam_guard.io.manifest import store
from tests.helpers import GSM8K, write_jsonl

REPORT_FLOOR = Settings().report_floor

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "tests" / "data" / "rewordings"
THRESHOLD = Settings().threshold
Pairs = list[tuple[int, int, float]]


def reference_scores(
    hashes: NDArray[np.uint64], first: NDArray[np.int64], index: RewordIndex
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Every pair sharing a feature, scored (the implementation before the prefix filter)."""
    units = first.size - 1
    unit = np.repeat(np.arange(units, dtype=np.int64), np.diff(first))
    out_unit, out_item, out_score = [], [], []
    for target in index.words:
        weight = target.weights(hashes)
        unit_weight = np.bincount(unit, weights=weight, minlength=units)
        query, entry = target.postings.lookup(hashes)
        if query.size == 0:
            continue
        key = unit[query] * index.items + target.postings.item[entry]
        pairs, inverse = np.unique(key, return_inverse=True)
        shared = np.bincount(inverse, weights=weight[query])
        u, item = pairs // index.items, pairs % index.items
        out_unit.append(u)
        out_item.append(item)
        whole = target.item_weight[item - target.first_item]
        out_score.append(shared / (whole + RECORD_SHARE * (unit_weight[u] - shared)))
    if not out_unit:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    return np.concatenate(out_unit), np.concatenate(out_item), np.concatenate(out_score)


def registered(root: Path, golden: Path, field: str, monkeypatch: pytest.MonkeyPatch) -> RewordIndex:
    """The reword index of a project in ``root`` with ``golden`` registered (unkeyed)."""
    monkeypatch.chdir(root)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    for args in (["init", "."], ["register", "golden", str(golden), "--field", field]):
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code in (0, None), args
    manifest = store.load(root / ".contam-guard" / "manifest.json")
    return RewordIndex.build(manifest, ManifestIndex.from_manifest(manifest))


def units_of(texts: Sequence[str]) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
    """The scan's windows of ``texts``, as feature hashes (unkeyed)."""
    content = [content_words(normalised_words(text, CURRENT)) for text in texts]
    owner, start, end = windows(np.array([len(c) for c in content], dtype=np.int64))
    lists = [content[u][s:e] for u, s, e in zip(owner.tolist(), start.tolist(), end.tolist())]
    return unigrams_of(lists, None)


PATHS = ("prefixes", "direct", "auto")


def compared(
    index: RewordIndex, texts: Sequence[str], floors: Sequence[float], path: str = "prefixes"
) -> dict[float, tuple[Pairs, Pairs]]:
    """Per floor: (the reference's pairs at or over it, the pairs of ``path``)."""
    hashes, first = units_of(texts)
    ru, ri, rs = reference_scores(hashes, first, index)
    out = {}
    for floor in floors:
        keep = rs >= floor
        expected = sorted(zip(ru[keep].tolist(), ri[keep].tolist(), rs[keep].tolist()))
        u, i, s = reworded_scores(hashes, first, [Scorer(t, floor, path) for t in index.words])
        out[floor] = expected, sorted(zip(u.tolist(), i.tolist(), s.tolist()))
    return out


VOCAB = [
    *("apple", "apples", "pear", "tank", "water", "deep", "depth", "feet", "monday", "sold"),
    *("baked", "cookies", "eggs", "dozen", "three", "17", "16", "2", "25%", "$4.50", "farmer"),
    *("market", "train", "bus", "miles", "hour", "minutes", "the", "a", "of", "and"),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_texts_give_the_reference_pairs_at_every_floor(
    tmp_path: Path, seed: int, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)

    def text(low: int, high: int) -> str:
        return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(low, high)))

    golden = tmp_path / "golden.jsonl"
    write_jsonl(golden, [{"q": text(4, 30)} for _ in range(60)])
    index = registered(tmp_path, golden, "q", monkeypatch)
    # short and long strings (over 80 content words: several windows)
    texts = [text(1, 40) for _ in range(150)] + [text(90, 200) for _ in range(10)]
    floors = (0.05, 0.2, 0.3, THRESHOLD, 0.5, 0.8, 1.0)
    for floor, (expected, got) in compared(index, texts, floors, path).items():
        assert got == expected, floor
    assert len(compared(index, texts, (0.05,))[0.05][0]) > 1000  # the texts do overlap a lot


@pytest.mark.slow
@pytest.mark.gsm8k
@pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}")
@pytest.mark.parametrize("path", PATHS[:2])
def test_dev_set_and_gsm8k_train_give_the_reference_pairs(
    tmp_path: Path, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = registered(tmp_path, GSM8K / "test.jsonl", "question", monkeypatch)
    texts = [
        json.loads(line)["question"]
        for name in ("reworded.jsonl", "number_changed.jsonl")
        for line in (DEV / name).read_text(encoding="utf-8").splitlines()
    ]
    with (GSM8K / "train.jsonl").open(encoding="utf-8") as lines:
        texts += [f"{row['question']} {row['answer']}" for row in map(json.loads, lines)]
    for floor, (expected, got) in compared(index, texts, (THRESHOLD, REPORT_FLOOR), path).items():
        assert got == expected, floor
        assert len(expected) > (150 if floor == THRESHOLD else 300)


@pytest.mark.parametrize("table_size", [0, 1, 7, 200])
def test_table_lookup_finds_every_equal_entry(table_size: int) -> None:
    rng = np.random.default_rng(table_size)
    hashes = rng.integers(0, 40, table_size).astype(np.uint64)  # repeats: several items a hash
    table = Table.of(hashes, np.arange(table_size, dtype=np.int64), np.zeros(table_size))
    queries = rng.integers(0, 60, 300).astype(np.uint64)
    query, entry = table.lookup(queries)
    expected = sorted(
        (q, e) for q in range(queries.size) for e in range(table_size) if table.hashes[e] == queries[q]
    )
    assert sorted(zip(query.tolist(), entry.tolist())) == expected
    assert (table_size == 0) == (not expected)
