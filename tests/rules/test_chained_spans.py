"""Llama 2's skip-gram budget and the gapped rule: exact runs chained across small gaps.

Each case is a tiny corpus through the engine (``ItemTotals`` chaining as the scan does), then
the rules; the kernel (``chain_runs``) is compared between its compiled and numpy versions.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import numpy as np
import pytest

from contam_guard.core.match.chains import ChainSettings, Runs, gapped_spans, skip_spans
from contam_guard.core.match.index import ManifestIndex, Target
from contam_guard.core.match.matcher import ItemTotals, match_batch
from contam_guard.core.match.stats import ItemStats, item_stats
from contam_guard.core.register.views import hash_view
from contam_guard.core.rules import RULES
from contam_guard.core.spec import pure_kernels
from contam_guard.core.spec.features import extract_features

CHAINED = ChainSettings(skip_budget=4, gaps=2)


def stats_for(
    item: str, records: list[str], chains: ChainSettings = CHAINED
) -> tuple[ItemStats, ManifestIndex]:
    target = Target("s", "text", 1, ["0"], np.arange(1), 0)
    index = ManifestIndex.from_views([target], [hash_view("text", [item], None)])
    totals = ItemTotals.empty(index, chains)
    match_batch(index, extract_features(records), totals)
    return item_stats(index, totals), index


def fires(name: str, stats: ItemStats, index: ManifestIndex, **settings: object) -> bool:
    rule = RULES[name]
    return bool(rule.evaluate(stats, rule.settings(**settings), index).fired[0])


def words(count: int, prefix: str = "w") -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


def inserted(every: int, count: int = 40) -> str:
    """The item's 40 words with a filler word after every ``every`` words."""
    out: list[str] = []
    for k, word in enumerate(words(count)):
        out.append(word)
        if (k + 1) % every == 0:
            out.append("um")
    return " ".join(out)


ITEM = " ".join(words(40))


def test_filler_every_8_words_is_one_span_for_both() -> None:
    stats, index = stats_for(ITEM, [inserted(8)])
    assert int(stats.longest_run[0]) == 8  # exact runs of 8: gpt3's 13 is out of reach
    assert not fires("gpt3", stats, index, n=13)
    assert not fires("llama2", stats, index)  # 40 of 40 words in runs of 8: none of 10 or more
    assert fires("llama2", stats, index, skip_budget=4)  # 4 inserted words: one span of 40
    assert int(stats.covered_skip(10)[0]) == 40
    assert stats.gapped_longest is not None and int(stats.gapped_longest[0]) == 40
    assert fires("gapped", stats, index, enabled=True, n=13)


def test_the_budget_is_the_most_positions_a_span_differs_in() -> None:
    # filler every 5 words: 7 inserted words; a budget of 4 chains 5 runs (25 words), not 8
    stats, _ = stats_for(ITEM, [inserted(5)])
    assert int(stats.covered_skip(10)[0]) == 40  # spans of 25 words overlap to cover the item
    stats, _ = stats_for(ITEM, [inserted(5)], ChainSettings(skip_budget=1, gaps=1))
    assert int(stats.covered_skip(10)[0]) == 40  # runs of 5 chained pairwise: 10 words each
    stats, _ = stats_for(ITEM, [inserted(5)], ChainSettings(skip_budget=0, gaps=1))
    assert stats.skip is None and int(stats.covered_skip(10)[0]) == 0  # exact: no run of 10


def test_replaced_and_deleted_words_cost_one_each() -> None:
    item = words(40)
    replaced = [("x" if k in (9, 19, 29) else w) for k, w in enumerate(item)]
    deleted = [w for k, w in enumerate(item) if k not in (9, 19, 29)]
    for copy in (replaced, deleted):
        stats, index = stats_for(ITEM, [" ".join(copy)], ChainSettings(skip_budget=1, gaps=1))
        assert not fires("llama2", stats, index)  # exact: only the last run reaches 10 words
        assert int(stats.covered(10)[0]) == 10
        # a budget of 1 chains each two neighbouring runs (19 or 20 words): together, all 40
        assert fires("llama2", stats, index, skip_budget=1)
        assert int(stats.covered_skip(10)[0]) == 40
        assert stats.gapped_longest is not None and int(stats.gapped_longest[0]) == 40  # 3 <= 40 // 8


def test_a_gap_longer_than_gaps_ends_a_gapped_run() -> None:
    copy = [*words(20), "a", "b", "c", *words(40)[20:]]  # three words inserted at one place
    stats, _ = stats_for(ITEM, [" ".join(copy)])
    assert stats.gapped_longest is not None and int(stats.gapped_longest[0]) == 20
    assert int(stats.covered_skip(10)[0]) == 40  # the skip budget spends 3 of its 4 there


def test_unrelated_runs_in_two_records_do_not_chain() -> None:
    stats, _ = stats_for(ITEM, [" ".join(words(8)), " ".join(words(40)[9:17])])
    assert stats.gapped_longest is not None and int(stats.gapped_longest[0]) == 8
    assert int(stats.covered_skip(5)[0]) == 16  # each run covers its own words, no gap between


def test_nothing_is_chained_by_default() -> None:
    stats, index = stats_for(ITEM, [inserted(8)], ChainSettings())
    assert stats.skip is None and stats.gapped_longest is None
    assert not fires("llama2", stats, index, skip_budget=4)  # the scan did not chain: exact coverage


RunArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""``chain_runs``' inputs before its parameters: pair, i0, i1, j0, j1, by_end."""


def random_runs(rng: np.random.Generator) -> RunArrays:
    n = int(rng.integers(0, 40))
    item, record = np.sort(rng.integers(0, 3, n)), rng.integers(0, 2, n)
    i0, length, j0 = rng.integers(0, 60, n), rng.integers(5, 12, n), rng.integers(0, 60, n)
    order = np.lexsort((j0, i0, record, item))
    item, record, i0, length, j0 = (a[order].astype(np.int64) for a in (item, record, i0, length, j0))
    pair = np.zeros(n, dtype=np.int64)
    if n:
        pair[1:] = np.cumsum((item[1:] != item[:-1]) | (record[1:] != record[:-1]))
    by_end = np.lexsort((np.arange(n), i0 + length, pair)).astype(np.int64)
    return pair, i0, i0 + length, j0, j0 + length, by_end


def compiled() -> ModuleType:
    try:
        return importlib.import_module("contam_guard._native")
    except ImportError:
        pytest.skip("the compiled kernels are not built")


@pytest.mark.parametrize(
    "params", [(4, 4, 0, 1, 4), (2, 0, 2, 8, 64), (1, 0, 1, 8, 64), (0, 0, 0, 1, 0), (3, 1, 1, 5, 3)]
)
def test_compiled_and_numpy_kernels_agree(params: tuple[int, ...]) -> None:
    native = compiled()
    rng = np.random.default_rng(sum(params))
    for _ in range(200):
        arrays = random_runs(rng)
        one, two = np.empty(arrays[0].size, np.int64), np.empty(arrays[0].size, np.int64)
        setting = np.array(params, dtype=np.int64)
        native.chain_runs(*arrays, setting, one)
        pure_kernels.chain_runs(*arrays, setting, two)
        assert (one == two).all()


@pytest.mark.parametrize("params", [(65, 0, 0, 1, 0), (1, -1, 0, 1, 0), (1, 0, 0, 0, 0), (1, 0, 0, 1, -1)])
def test_both_kernels_refuse_bad_parameters(params: tuple[int, ...]) -> None:
    arrays = random_runs(np.random.default_rng(0))
    for kernels in (compiled(), pure_kernels):
        with pytest.raises(ValueError, match="params"):
            kernels.chain_runs(*arrays, np.array(params, dtype=np.int64), np.empty(arrays[0].size, np.int64))


def test_both_kernels_refuse_an_index_out_of_range() -> None:
    arrays = list(random_runs(np.random.default_rng(3)))
    arrays[5] = arrays[5].copy()
    arrays[5][0] = arrays[5].size
    for kernels in (compiled(), pure_kernels):
        with pytest.raises(ValueError, match="by_end"):
            kernels.chain_runs(
                *arrays, np.array((1, 0, 1, 8, 8), dtype=np.int64), np.empty(arrays[0].size, np.int64)
            )


def test_the_worked_example_of_the_seed_article() -> None:
    """Janet's ducks: four exact runs of 5, 13, 10 and 17 words a replaced number apart."""
    item, record, i0, i1 = (
        np.array(v, dtype=np.int64) for v in ([0] * 4, [0] * 4, [0, 6, 20, 31], [5, 19, 30, 48])
    )
    runs = Runs(
        item,
        record,
        i0,
        i1,
        np.array([0, 6, 20, 31], dtype=np.int64),
        np.array([5, 19, 30, 48], dtype=np.int64),
    )
    assert skip_spans(runs, 4).tolist() == [0, 0, 0, 0]  # one span of 48 words: 3 positions differ
    assert skip_spans(runs, 2).tolist() == [0, 0, 0, 6]  # the last run reaches back two links
    assert gapped_spans(runs, 1).tolist() == [0, 0, 0, 0]  # 3 edits in 48 words, under 48 // 8
