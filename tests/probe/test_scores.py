"""The methods' definitions, each checked against a computation written out by hand."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from contam_guard.probe.scores import (
    METHODS,
    TokenLogProbs,
    lowest_count,
    min_k,
    min_k_plus_plus,
    normalised,
    score_text,
)


def arr(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


@pytest.mark.parametrize(
    ("tokens", "k", "expected"),
    [
        (1, 0.2, 1),  # max(1, int(0.2)) = 1
        (4, 0.2, 1),  # int(0.8) = 0 -> 1
        (5, 0.2, 1),
        (9, 0.2, 1),
        (10, 0.2, 2),
        (14, 0.2, 2),  # int(2.8) truncates, never rounds
        (15, 0.2, 3),
        (10, 1.0, 10),
        (3, 0.5, 1),
        (7, 0.5, 3),
    ],
)
def test_lowest_count_is_max_1_int_k_t(tokens: int, k: float, expected: int) -> None:
    assert lowest_count(tokens, k) == expected


def test_min_k_averages_the_lowest_values() -> None:
    values = arr(-0.1, -5.0, -0.2, -3.0, -0.3, -0.4, -0.5, -0.6, -0.7, -0.8)
    assert min_k(values, 0.2) == pytest.approx((-5.0 + -3.0) / 2)
    assert min_k(values, 0.1) == pytest.approx(-5.0)
    assert min_k(values, 1.0) == pytest.approx(float(np.mean(values)))
    assert math.isnan(min_k(arr(), 0.2))


def test_normalised_uses_mu_and_sigma_and_zero_sigma_gives_zero() -> None:
    tokens = TokenLogProbs(arr(-1.0, -2.0, -0.5), mu=arr(-0.5, -1.0, -0.5), sigma=arr(0.5, 2.0, 0.0))
    assert normalised(tokens).tolist() == pytest.approx([-1.0, -0.5, 0.0])
    with pytest.raises(ValueError, match="mu and sigma"):
        normalised(TokenLogProbs(arr(-1.0)))


def test_every_method_by_hand() -> None:
    text = "The Cat Sat"
    logprobs = arr(-2.0, -0.5, -4.0, -1.0, -0.25, -3.0, -0.75, -1.5, -0.1, -6.0, -0.4)
    mu = arr(-1.0, -1.0, -2.0, -0.5, -0.5, -1.0, -1.0, -1.0, -0.2, -2.0, -0.2)
    sigma = arr(1.0, 0.5, 1.0, 0.25, 0.5, 2.0, 0.5, 1.0, 0.1, 1.0, 0.2)
    lower = arr(-3.0, -1.0, -2.0)
    got = score_text(text, TokenLogProbs(logprobs, mu, sigma), TokenLogProbs(lower), METHODS, 0.2)
    loss = (2.0 + 0.5 + 4.0 + 1.0 + 0.25 + 3.0 + 0.75 + 1.5 + 0.1 + 6.0 + 0.4) / 11
    # T = 11 -> max(1, int(2.2)) = 2 lowest: -6.0 and -4.0
    mink = (-6.0 + -4.0) / 2
    z = [(lp - m) / s for lp, m, s in zip(logprobs, mu, sigma)]
    # z = -1, 1, -2, -2, 0.5, -1, 0.5, -0.5, 1, -4, -1 -> lowest two: -4, -2
    assert sorted(z)[:2] == pytest.approx([-4.0, -2.0])
    assert got == pytest.approx(
        {
            "loss": loss,
            "zlib": loss / len(zlib.compress(text.encode("utf-8"))),
            "lowercase": loss / 2.0,  # loss(text.lower()) = (3 + 1 + 2) / 3
            "mink": mink,
            "minkpp": -3.0,
        }
    )
    assert min_k_plus_plus(TokenLogProbs(logprobs, mu, sigma), 0.2) == pytest.approx(-3.0)


def test_no_scored_token_gives_nan_everywhere() -> None:
    empty = TokenLogProbs(arr(), mu=arr(), sigma=arr())
    got = score_text("a", empty, empty, METHODS, 0.2)
    assert set(got) == set(METHODS)
    assert all(math.isnan(value) for value in got.values())


def test_lowercase_without_the_lowered_text_is_refused() -> None:
    with pytest.raises(ValueError, match="lower-cased"):
        score_text("Ab", TokenLogProbs(arr(-1.0)), None, ["lowercase"], 0.2)
