"""Where token log-probabilities come from: a local transformers model, or an OpenAI-compatible
completions endpoint. A backend turns texts into ``scores.TokenLogProbs``, one per text, in order.

Each backend lives in its own module and is imported only when asked for: torch takes seconds to
import, and the OpenAI backend needs neither torch nor transformers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from contam_guard.probe.scores import TokenLogProbs


class Backend(Protocol):
    full_distribution: bool
    """Whether the backend gives μ_t and σ_t of the whole next-token distribution (``minkpp``)."""

    def describe(self) -> str:
        """One line for the report: the backend and the model."""
        ...

    def log_probs(self, texts: Sequence[str]) -> list[TokenLogProbs]:
        """The log-probabilities of each text's tokens after the first, in the order given."""
        ...
