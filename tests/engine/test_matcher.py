"""The engine against a slow, obvious reference: R[i] by brute force over words."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.match.arrays import first_of_each, lex_order, members, sorted_unique
from contam_guard.core.match.index import ManifestIndex, Target
from contam_guard.core.match.matcher import ItemTotals, PairTable, match_batch
from contam_guard.core.match.stats import item_stats
from contam_guard.core.register.views import hash_view
from contam_guard.core.spec import normalise
from contam_guard.core.spec.features import extract_features


def reference_runs(item: list[str], docs: list[list[str]]) -> list[int]:
    """R[i]: the longest run starting at word i shared with one doc; 0 when under 5."""
    runs = []
    for i in range(len(item)):
        best = 0
        for doc in docs:
            for j in range(len(doc)):
                r = 0
                while i + r < len(item) and j + r < len(doc) and item[i + r] == doc[j + r]:
                    r += 1
                best = max(best, r)
        runs.append(best if best >= 5 else 0)
    return runs


def build_index(items: list[str]) -> ManifestIndex:
    view = hash_view("text", items, None)
    target = Target("t", "text", 1, [str(i) for i in range(len(items))], np.arange(len(items)), 0)
    return ManifestIndex.from_views([target], [view])


def run_engine(items: list[str], docs: list[str]) -> tuple[ManifestIndex, ItemTotals, PairTable]:
    index = build_index(items)
    totals = ItemTotals.empty(index)
    table = match_batch(index, extract_features(docs), totals)
    return index, totals, table


VOCAB = ["a", "b", "c", "the", "cat", "sat"]
words_strategy = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(words_strategy, min_size=1, max_size=3), st.lists(words_strategy, min_size=1, max_size=4))
def test_runs_equal_brute_force(items: list[list[str]], docs: list[list[str]]) -> None:
    index, totals, table = run_engine([" ".join(w) for w in items], [" ".join(d) for d in docs])
    for g, item in enumerate(items):
        base = index.word_base[g]
        assert totals.run[base : base + len(item)].tolist() == reference_runs(item, docs)
        for rec, doc in enumerate(docs):
            expected = reference_runs(item, [doc])
            rows = np.flatnonzero((table.item == g) & (table.record == rec))
            longest = int(table.longest[rows[0]]) if rows.size else 0
            assert longest == max(expected, default=0)
            if rows.size and longest:
                found8 = sum(1 for r in expected if r >= 8)
                assert table.ngrams8_found[rows[0]] == found8
                covered: set[int] = set()
                for i, r in enumerate(expected):
                    if r >= 10:
                        covered.update(range(i, i + r))
                assert table.covered_l10[rows[0]] == len(covered)


def test_a_run_spanning_two_records_does_not_count() -> None:
    item = "one two three four five six seven eight nine ten"
    _, totals, table = run_engine([item], ["one two three four", "five six seven eight", "nine ten"])
    assert totals.run.max() == 0
    assert len(table) == 0 or table.longest.max() == 0


def test_match_at_record_boundaries_counts() -> None:
    item = "one two three four five six seven eight nine ten eleven twelve thirteen"
    docs = ["x " * 3, item, "y"]
    _, totals, table = run_engine([item], docs)
    assert totals.run[0] == 13
    assert table.record.tolist() == [1]


def test_repeated_ngrams_inside_one_item() -> None:
    item = "a b c d e a b c d e a b c d e"
    _, totals, _ = run_engine([item], ["a b c d e a b c d e"])
    assert totals.run.tolist() == reference_runs(
        normalise.words(item), [normalise.words("a b c d e a b c d e")]
    )


def test_item_stats_aggregate_over_records() -> None:
    item = " ".join(f"w{i}" for i in range(20))
    first_half = " ".join(f"w{i}" for i in range(10))
    second_half = " ".join(f"w{i}" for i in range(10, 20))
    index = build_index([item])
    totals = ItemTotals.empty(index)
    match_batch(index, extract_features([first_half, second_half]), totals)
    stats = item_stats(index, totals)
    assert stats.longest_run.tolist() == [10]
    assert stats.ngrams8.tolist() == [13]
    assert stats.ngrams8_found.tolist() == [3 + 3]  # 8-grams starting at 0..2 and 10..12
    assert stats.covered_l10.tolist() == [20]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 3), st.integers(-(2**60), 2**60)), max_size=60))
def test_lex_order_equals_lexsort(rows: list[tuple[int, int, int]]) -> None:
    """Ties included (the small keys repeat): the order must be lexsort's, stable."""
    keys = tuple(np.array([row[k] for row in rows], dtype=np.int64) for k in range(3))
    narrow = keys[:2]  # packs into one int64
    assert lex_order(narrow).tolist() == np.lexsort(narrow).tolist()
    assert lex_order(keys).tolist() == np.lexsort(keys).tolist()  # too wide to pack when spread


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 5), max_size=40),
    st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 5), max_size=10),
)
def test_set_helpers_equal_numpys_own(values: list[int], wanted: list[int]) -> None:
    """Repeats and the largest hashes included: what np.unique and np.isin give (they import
    numpy.ma on first use, which a pre-commit scan should not pay for)."""
    v, w = np.array(values, dtype=np.uint64), np.array(wanted, dtype=np.uint64)
    assert sorted_unique(v).tolist() == np.unique(v).tolist()
    distinct, first = first_of_each(v)
    expected, expected_first = np.unique(v, return_index=True)
    assert distinct.tolist() == expected.tolist()
    assert first.tolist() == expected_first.tolist()
    assert members(v, w).tolist() == np.isin(v, w).tolist()
