"""The numbers of ``contam-guard impact`` against answers known in advance and slow references."""

from __future__ import annotations

import math
import random
import statistics
from pathlib import Path

import numpy as np
import pytest

from contam_guard.impact.analysis import Impact, analyse
from contam_guard.impact.items import read_items
from contam_guard.impact.plot import impact_png
from contam_guard.impact.scores import read_scores
from contam_guard.impact.stats import mean_interval, paired_difference, resample_indices, sampling_z, streams
from tests.impact.impact_helpers import items_csv, scores_jsonl


def _reference_interval(scores: list[float], clean: list[bool], rows: list[list[int]]) -> tuple[float, float]:
    """The paired bootstrap by hand: per resample, the clean items' mean minus every item's mean."""
    differences = []
    for row in rows:
        full = sum(scores[i] for i in row) / len(row)
        kept = [scores[i] for i in row if clean[i]]
        if kept:
            differences.append(sum(kept) / len(kept) - full)
    cuts = statistics.quantiles(differences, n=40, method="inclusive")  # 2.5% ... 97.5%
    return cuts[0], cuts[-1]


def _data(n: int, seed: int, *, binary: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Scores (0/1, or floats in [0, 1)) that run higher on the flagged tenth of the items."""
    gen = np.random.default_rng(seed)
    clean = gen.random(n) > 0.1
    if binary:
        scores = np.where(clean, gen.random(n) < 0.5, gen.random(n) < 0.9).astype(np.float64)
    else:
        scores = np.where(clean, gen.random(n), 0.5 + gen.random(n) / 2)
    return scores, clean


def test_bootstrap_interval_equals_a_pure_python_reference_on_the_same_draws() -> None:
    """Scores other than 0/1 are resampled item by item: the same resamples by hand."""
    scores, clean = _data(150, 1, binary=False)
    draws = 2_000
    diff, _ = paired_difference(scores, clean, draws, streams(3, 1)[0])
    # The same seed gives the same resamples: recompute each one in plain Python.
    rows = [row for chunk in resample_indices(streams(3, 1)[0], scores.size, draws) for row in chunk.tolist()]
    assert len(rows) == draws
    low, high = _reference_interval(scores.tolist(), clean.tolist(), rows)
    assert diff.low == pytest.approx(low, abs=1e-12) and diff.high == pytest.approx(high, abs=1e-12)
    assert diff.value == pytest.approx(scores[clean].mean() - scores.mean())
    assert diff.low is not None and diff.value is not None and diff.high is not None
    assert diff.low < diff.value < diff.high


@pytest.mark.parametrize("binary", [True, False], ids=["0-1 scores, binomial", "float scores, by items"])
def test_mean_interval_agrees_with_a_slow_bootstrap(binary: bool) -> None:
    scores, _ = _data(120, 6, binary=binary)
    got = mean_interval(scores, 20_000, streams(1, 1)[0])
    rng = random.Random(3)
    values = scores.tolist()
    means = [sum(rng.choice(values) for _ in values) / len(values) for _ in range(6_000)]
    cuts = statistics.quantiles(means, n=40, method="inclusive")
    width = cuts[-1] - cuts[0]
    assert got.value == pytest.approx(scores.mean())
    assert got.low == pytest.approx(cuts[0], abs=0.05 * width) and got.high == pytest.approx(
        cuts[-1], abs=0.05 * width
    )


@pytest.mark.parametrize("binary", [True, False], ids=["0-1 scores, by counts", "float scores, by items"])
def test_bootstrap_interval_agrees_with_an_independent_slow_bootstrap(binary: bool) -> None:
    """Python's own random numbers, a loop per resample: the intervals agree to Monte Carlo error."""
    scores, clean = _data(200, 2, binary=binary)
    diff, _ = paired_difference(scores, clean, 20_000, streams(0, 1)[0])
    rng = random.Random(11)
    rows = [[rng.randrange(200) for _ in range(200)] for _ in range(8_000)]
    low, high = _reference_interval(scores.tolist(), clean.tolist(), rows)
    width = high - low
    assert width > 0.01
    assert diff.low == pytest.approx(low, abs=0.05 * width)
    assert diff.high == pytest.approx(high, abs=0.05 * width)


@pytest.mark.parametrize(
    "binary", [True, False], ids=["0-1 scores, hypergeometric", "float scores, by items"]
)
def test_sampling_z_matches_the_exact_spread_of_random_subsets(binary: bool) -> None:
    """Means of random subsets of n drawn without replacement from N: mean mu = the full mean,
    variance s^2 / n * (N - n) / (N - 1) with s^2 the population variance."""
    scores, _ = _data(300, 4, binary=binary)
    sizes = [10, 60, 150, 290]
    masks = [np.arange(300) < size for size in sizes]
    result = sampling_z(scores, masks, 20_000, streams(5, 1)[0])
    var = scores.var()
    for size, mask, got in zip(sizes, masks, result):
        sigma = math.sqrt(var / size * (300 - size) / 299)
        assert got.mu == pytest.approx(scores.mean(), abs=0.05 * sigma)
        assert got.sigma == pytest.approx(sigma, rel=0.03)
        assert got.z == pytest.approx((scores[mask].mean() - got.mu) / got.sigma)


def _impact(
    tmp_path: Path, flags: list[dict[str, str]], scores: list[float], shares: list[float] | None = None
) -> Impact:
    items = items_csv(tmp_path / "items.csv", flags, shares=shares)
    path = scores_jsonl(tmp_path / "scores.jsonl", scores)
    return analyse(read_scores(path), read_items(items), "gpt3", 4_000, 0)


def test_every_flagged_item_right_and_every_clean_one_wrong(tmp_path: Path) -> None:
    """Known answer: 20 of 100 flagged and right, the rest wrong: full 0.2, clean 0, flagged 1,
    clean − full −0.2, relative change −100%; every resample says the same sign."""
    flags = [{"gpt3": "1" if n < 20 else "0"} for n in range(100)]
    result = _impact(tmp_path, flags, [1.0 if n < 20 else 0.0 for n in range(100)])
    assert (result.full.n, result.clean.n, result.flagged.n) == (100, 80, 20)
    assert (result.full.mean.value, result.clean.mean.value, result.flagged.mean.value) == (0.2, 0.0, 1.0)
    assert result.difference.value == pytest.approx(-0.2)
    assert result.relative.value == pytest.approx(-1.0)
    assert result.difference.excludes_zero and result.difference.high is not None
    assert result.difference.high < -0.1
    assert result.relative.low == result.relative.high == pytest.approx(-1.0)


def test_every_flagged_item_wrong(tmp_path: Path) -> None:
    """The other way round: flagged items all wrong, clean ones all right: the clean score is higher."""
    flags = [{"gpt3": "1" if n % 10 == 0 else "0"} for n in range(100)]
    result = _impact(tmp_path, flags, [0.0 if n % 10 == 0 else 1.0 for n in range(100)])
    assert (result.clean.mean.value, result.flagged.mean.value) == (1.0, 0.0)
    assert result.difference.value == pytest.approx(0.1)
    assert result.relative.value == pytest.approx(0.1 / 0.9)
    assert result.difference.low is not None and result.difference.low > 0


def test_nothing_flagged_gives_no_difference(tmp_path: Path) -> None:
    result = _impact(tmp_path, [{"gpt3": "0"}] * 50, [n % 2 for n in range(50)])
    assert (result.clean.n, result.flagged.n) == (50, 0)
    assert result.flagged.mean.value is None
    assert (result.difference.value, result.difference.low, result.difference.high) == (0.0, 0.0, 0.0)
    assert result.difference.excludes_zero is False


def test_flags_unrelated_to_scores_give_an_interval_around_zero(tmp_path: Path) -> None:
    gen = random.Random(5)
    flags = [{"gpt3": "1" if gen.random() < 0.3 else "0"} for _ in range(400)]
    result = _impact(tmp_path, flags, [float(gen.random() < 0.6) for _ in range(400)])
    assert result.difference.low is not None and result.difference.high is not None
    assert result.difference.low < 0 < result.difference.high
    assert result.difference.excludes_zero is False


def test_allowed_findings_count_as_clean_and_any_means_any_rule(tmp_path: Path) -> None:
    flags = [{"gpt3": "allowed"}, {"palm": "1"}, {"gpt3": "1"}, {}]
    path = items_csv(tmp_path / "items.csv", flags)
    table = read_items(path)
    assert table.flagged("gpt3") == [False, False, True, False]
    assert table.flagged("any") == [False, True, True, False]


def test_llama2_subsets_and_the_dirty_verdict(tmp_path: Path) -> None:
    """10 dirty items (90% covered) all right among 190 items right half the time: Z far above 2.
    The four subsets' sizes follow the 20% and 80% lines exactly (20% is not clean)."""
    shares = [0.9] * 10 + [0.2] * 5 + [0.19] * 5 + [0.0] * 180
    scores = [1.0] * 10 + [float(n % 2) for n in range(190)]
    result = _impact(tmp_path, [{}] * 200, scores, shares)
    sizes = {subset.name: subset.n for subset in result.llama2}
    assert sizes == {"clean": 185, "not clean": 15, "not dirty": 190, "dirty": 10}
    dirty = result.dirty
    assert dirty.mean.value == 1.0 and dirty.sampling is not None and dirty.sampling.z is not None
    assert dirty.sampling.z > 2 and result.contaminated is True
    # The other three move with it: without the dirty items a subset scores less than chance
    # subsets of its size (whose spread shrinks as the size nears the whole set's).
    zs = {s.name: s.sampling.z for s in result.llama2 if s.sampling and s.sampling.z is not None}
    assert zs["clean"] < -2 and zs["not dirty"] < -2 and zs["not clean"] > 2
    assert result.all_four_beyond is True


def test_llama2_dirty_subset_scoring_like_the_rest_is_not_contaminated(tmp_path: Path) -> None:
    shares = [0.9 if n % 10 == 0 else 0.0 for n in range(400)]
    scores = [float((n // 10) % 2) for n in range(400)]  # the dirty items score 50%, like the rest
    result = _impact(tmp_path, [{}] * 400, scores, shares)
    assert result.dirty.n == 40 and result.dirty.mean.value == 0.5
    assert result.contaminated is False


def test_no_dirty_item_gives_no_verdict(tmp_path: Path) -> None:
    result = _impact(tmp_path, [{}] * 30, [1.0] * 15 + [0.0] * 15)
    assert result.dirty.n == 0 and result.contaminated is None


def test_same_seed_same_numbers_other_seed_other_interval(tmp_path: Path) -> None:
    gen = random.Random(9)
    flags = [{"gpt3": "1" if gen.random() < 0.2 else "0"} for _ in range(120)]
    items = items_csv(tmp_path / "items.csv", flags)
    scores = read_scores(scores_jsonl(tmp_path / "s.jsonl", [float(gen.random() < 0.5) for _ in range(120)]))
    table = read_items(items)
    one, two, other = (analyse(scores, table, "gpt3", 1_000, seed) for seed in (1, 1, 2))
    assert one.difference == two.difference and one.llama2 == two.llama2
    assert one.difference.low != other.difference.low


def test_plot_is_deterministic_and_draws_every_subset(tmp_path: Path) -> None:
    shares = [0.9] * 5 + [0.0] * 45
    result = _impact(
        tmp_path, [{"gpt3": "1"}] * 5 + [{}] * 45, [1.0] * 5 + [float(n % 2) for n in range(45)], shares
    )
    first = impact_png(result)
    assert first.startswith(b"\x89PNG") and first == impact_png(result)
    other = _impact(tmp_path, [{}] * 50, [0.0] * 50)  # nothing flagged, nothing dirty: empty subsets
    assert impact_png(other) != first
