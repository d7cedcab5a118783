"""The probe's scores: what each method computes from a model's token log-probabilities.

Every logarithm is natural. T is the number of the text's tokens that have a log-probability
log p(x_t | x_<t): the first position has none (nothing comes before it), so for a text of N
tokens T = N - 1, or T = N where the model's tokenizer puts a BOS token before the text (then BOS
is the context of the first token and is never scored itself). Each method's value for one text:

- ``loss``: ``-(1/T) Σ_t log p(x_t | x_<t)``, the mean negative log-probability (lower: more
  likely seen in training).
- ``zlib``: ``loss / len(zlib.compress(text.encode("utf-8")))``, the loss over the length in
  bytes of the zlib-compressed UTF-8 text (Carlini et al. 2021; lower: more likely seen).
- ``lowercase``: ``loss(text) / loss(text.lower())`` (Carlini et al. 2021; lower: more likely
  seen: the model knows the text as written better than the same words in lower case).
- ``mink`` (Min-K% Prob, Shi et al. 2023): the mean of the lowest ``max(1, int(k × T))``
  log-probabilities (higher: more likely seen; a seen text has few very unlikely tokens).
- ``minkpp`` (Min-K%++, Zhang et al. 2024): the same mean over the normalised log-probabilities
  ``(log p(x_t) − μ_t) / σ_t``, where μ_t = Σ_v p(v) log p(v) and σ_t² = Σ_v p(v) (log p(v))² − μ_t²
  are the mean and variance of log p under the model's whole next-token distribution at step t
  (higher: more likely seen). It needs that whole distribution, which only a backend holding
  the model's logits gives.

Nothing here knows about models: a backend turns a text into ``TokenLogProbs`` and these
functions turn those into numbers.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]

METHODS: tuple[str, ...] = ("loss", "zlib", "lowercase", "mink", "minkpp")
"""Every method, in the order of the ``--items-csv`` columns."""
HIGHER_MEANS_SEEN: dict[str, bool] = {
    "loss": False,
    "zlib": False,
    "lowercase": False,
    "mink": True,
    "minkpp": True,
}
"""Which way each method points: True when a higher value means "more likely a member"."""
NEEDS_DISTRIBUTION = frozenset({"minkpp"})
"""Methods that need μ_t and σ_t of the whole next-token distribution."""
DEFAULT_K = 0.2
"""Min-K%'s k (Shi et al. 2023 chose 20% on a held-out set; Min-K%++ keeps it)."""


@dataclass(frozen=True)
class TokenLogProbs:
    """What a backend gives for one text: the T tokens that have a log-probability.

    ``logprobs[t]`` is log p(x_t | x_<t); ``mu[t]`` and ``sigma[t]`` (None from a backend that
    cannot see the whole distribution) are the mean and standard deviation of log p under the
    next-token distribution at that step.
    """

    logprobs: Floats
    mu: Floats | None = None
    sigma: Floats | None = None

    @property
    def count(self) -> int:
        """T: how many tokens have a log-probability."""
        return int(self.logprobs.shape[0])


def lowest_count(tokens: int, k: float) -> int:
    """How many of ``tokens`` values Min-K% averages: ``max(1, int(k × tokens))`` (int truncates)."""
    return max(1, int(k * tokens))


def loss(logprobs: Floats) -> float:
    """``-(1/T) Σ log p``; NaN when no token has a log-probability."""
    if logprobs.size == 0:
        return math.nan
    return float(-np.mean(logprobs))


def zlib_ratio(text_loss: float, text: str) -> float:
    """``loss / len(zlib.compress(text.encode("utf-8")))`` (bytes; zlib's default level)."""
    return text_loss / len(zlib.compress(text.encode("utf-8")))


def lowercase_ratio(text_loss: float, lower_loss: float) -> float:
    """``loss(text) / loss(text.lower())``; NaN when the lower-case loss is 0 or NaN."""
    if not lower_loss or math.isnan(lower_loss):
        return math.nan
    return text_loss / lower_loss


def min_k(values: Floats, k: float) -> float:
    """The mean of the lowest ``max(1, int(k × T))`` of ``values``; NaN for an empty array."""
    if values.size == 0:
        return math.nan
    lowest = np.sort(values)[: lowest_count(int(values.size), k)]
    return float(np.mean(lowest))


def normalised(tokens: TokenLogProbs) -> Floats:
    """``(log p(x_t) − μ_t) / σ_t`` per token. Where σ_t is 0 (all of the mass on one token, so
    log p(x_t) = μ_t) the value is 0: the token is exactly as likely as the model expects."""
    if tokens.mu is None or tokens.sigma is None:
        raise ValueError("minkpp needs mu and sigma of the next-token distribution")
    centred = tokens.logprobs - tokens.mu
    safe = np.where(tokens.sigma > 0, tokens.sigma, 1.0)
    return np.where(tokens.sigma > 0, centred / safe, 0.0)


def min_k_plus_plus(tokens: TokenLogProbs, k: float) -> float:
    """Min-K%++: ``min_k`` over the normalised log-probabilities (``normalised``)."""
    return min_k(normalised(tokens), k)


def score_text(
    text: str,
    tokens: TokenLogProbs,
    lower: TokenLogProbs | None,
    methods: Sequence[str],
    k: float,
) -> dict[str, float]:
    """Each of ``methods`` for one text. ``lower`` holds the log-probabilities of
    ``text.lower()`` (needed for ``lowercase`` only). With no token scored every value is NaN."""
    text_loss = loss(tokens.logprobs)
    values: dict[str, float] = {}
    for method in methods:
        if method == "loss":
            values[method] = text_loss
        elif method == "zlib":
            values[method] = zlib_ratio(text_loss, text)
        elif method == "lowercase":
            if lower is None:
                raise ValueError("lowercase needs the log-probabilities of the lower-cased text")
            values[method] = lowercase_ratio(text_loss, loss(lower.logprobs))
        elif method == "mink":
            values[method] = min_k(tokens.logprobs, k)
        elif method == "minkpp":
            values[method] = min_k_plus_plus(tokens, k) if tokens.count else math.nan
        else:
            raise ValueError(f"unknown method {method!r}")
    return values
