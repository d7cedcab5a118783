"""Token log-probabilities from a causal language model run locally with transformers (torch).

The model and its tokenizer come from ``from_pretrained`` (a local folder, or a name in the
Hugging Face cache or hub). Each text is tokenised the way the model's own tokenizer does it,
special tokens included (a BOS token where the model expects one), and only the text's own
tokens after the first position are scored: special tokens are context, never scored.

A text longer than the model's context is scored in strided windows (the usual sliding-window
perplexity): windows of the context length, each starting half a context after the previous one,
and each token scored once, in the first window where it has at least half a context before it
(or all of the text before it, near the start). Windows of all texts are run in batches of
similar length, padded on the right (causal attention never looks at the padding to the right).
Windows after the first start inside the text, with no BOS before them (the usual sliding-window
perplexity); only the first window begins as the tokenizer begins a text.

μ_t and σ_t (``minkpp``) come from the full log-softmax of the logits at each step:
μ = Σ p log p and σ² = Σ p (log p)² − μ², over the whole vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

from contam_guard.errors import ContamGuardError
from contam_guard.probe.backends.hub import offline_reason
from contam_guard.probe.scores import TokenLogProbs

DEFAULT_CONTEXT = 2048
"""The window when neither the model's config nor its tokenizer says how long its context is."""


@dataclass(frozen=True)
class _Window:
    text: int
    """Which text (index into the batch of texts)."""
    ids: list[int]
    """The window's token ids (context and targets)."""
    first: int
    """Offset in ``ids`` of the first token this window scores."""
    scored: list[bool]
    """Per offset in ``ids``: whether that token is one of the text's own (not a special token)."""


@dataclass
class _Part:
    logprobs: list[float]
    mu: list[float]
    sigma: list[float]


class TransformersBackend:
    """A causal LM on ``device`` (``cpu`` by default), run in batches of ``batch_size`` windows."""

    full_distribution = True

    def __init__(
        self, model: str, *, device: str = "cpu", batch_size: int = 8, context: int | None = None
    ) -> None:
        self.name = model
        try:
            self.device = torch.device(device)
        except (RuntimeError, ValueError):
            raise ContamGuardError(
                f"--device {device!r} is not a torch device (cpu, cuda, cuda:1, mps)"
            ) from None
        # Without a network, the hub's retries would take ~50 s before any error: decide first.
        offline = offline_reason(model)
        local = Path(model).exists() or offline is not None
        # transformers draws progress bars on stderr while loading; the probe's console says enough.
        cast(Any, hf_logging).disable_progress_bar()
        try:
            self.tokenizer: Any = cast(Any, AutoTokenizer.from_pretrained(model, local_files_only=local))
            self.model: Any = cast(Any, AutoModelForCausalLM.from_pretrained(model, local_files_only=local))
        except (OSError, ValueError, KeyError) as exc:
            hint = (
                "give a folder written by save_pretrained (config, weights, tokenizer files), "
                "or the name of a model in the Hugging Face cache"
            )
            if offline is not None:
                hint = (
                    f"the Hugging Face hub cannot be used ({offline}), and {model} is not in the "
                    "local cache: download it where there is a network (`hf download "
                    f"{model}`, or save_pretrained into a folder and copy that), then pass the "
                    "folder, or the name with the cache (HF_HOME) at hand"
                )
            raise ContamGuardError(
                f"--model {model}: could not load a causal language model and its tokenizer "
                f"({type(exc).__name__}: {_first_line(exc)})",
                hint=hint,
            ) from None
        try:
            self.model.to(self.device)
        except (RuntimeError, AssertionError) as exc:
            raise ContamGuardError(f"--device {device}: {_first_line(exc)}") from None
        self.model.eval()
        self.batch_size = batch_size
        self.context = max(2, context or _context_length(self.model, self.tokenizer))
        self.pad_id = _pad_id(self.tokenizer)

    def describe(self) -> str:
        return f"transformers {self.name} on {self.device} (context {self.context} tokens)"

    def log_probs(self, texts: Sequence[str]) -> list[TokenLogProbs]:
        windows = [w for number, text in enumerate(texts) for w in self._windows(number, text)]
        parts: dict[tuple[int, int], _Part] = {}
        order = sorted(range(len(windows)), key=lambda i: len(windows[i].ids))
        for start in range(0, len(order), self.batch_size):
            batch = [windows[i] for i in order[start : start + self.batch_size]]
            for i, part in zip(order[start : start + self.batch_size], self._run(batch)):
                parts[(windows[i].text, i)] = part
        results: list[TokenLogProbs] = []
        for number in range(len(texts)):
            mine = [parts[key] for key in sorted(key for key in parts if key[0] == number)]
            results.append(
                TokenLogProbs(
                    logprobs=np.array([v for p in mine for v in p.logprobs], dtype=np.float64),
                    mu=np.array([v for p in mine for v in p.mu], dtype=np.float64),
                    sigma=np.array([v for p in mine for v in p.sigma], dtype=np.float64),
                )
            )
        return results

    def _windows(self, number: int, text: str) -> list[_Window]:
        """The text's strided windows (one for a text that fits the context)."""
        encoded = self.tokenizer(text, add_special_tokens=True, return_special_tokens_mask=True)
        ids: list[int] = list(encoded["input_ids"])
        special = encoded.get("special_tokens_mask") or [0] * len(ids)
        own = [not flag for flag in special]
        length, stride = self.context, max(1, self.context // 2)
        windows: list[_Window] = []
        done = 1  # position 0 never has a log-probability
        begin = 0
        while done < len(ids):
            end = min(begin + length, len(ids))
            windows.append(_Window(number, ids[begin:end], done - begin, own[begin:end]))
            done = end
            begin += stride
        return windows  # none for a text of fewer than two tokens: nothing to score

    def _run(self, batch: list[_Window]) -> list[_Part]:
        """One forward pass over ``batch`` (padded on the right); each window's scored tokens."""
        width = max(len(w.ids) for w in batch)
        ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, window in enumerate(batch):
            ids[row, : len(window.ids)] = torch.tensor(window.ids, dtype=torch.long)
            mask[row, : len(window.ids)] = 1
        parts: list[_Part] = []
        with torch.inference_mode():
            logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
            for row, window in enumerate(batch):
                parts.append(_scored(logits[row], window))
        return parts


def _scored(logits: torch.Tensor, window: _Window) -> _Part:
    """Log-probability, μ and σ for each token of ``window`` from ``first`` on that is the
    text's own: the logits at position p predict the token at p + 1."""
    targets = list(range(window.first, len(window.ids)))
    if not targets:
        return _Part([], [], [])
    # float32 at least: a bfloat16 log-softmax loses the small probabilities Min-K% looks at.
    logp = torch.log_softmax(logits[targets[0] - 1 : targets[-1]].float(), dim=-1)
    wanted = torch.tensor([window.ids[t] for t in targets], device=logp.device)
    chosen = logp.gather(1, wanted[:, None])[:, 0]
    probs = logp.exp()
    # 0 · log 0 is 0 (a logit of -inf gives log p = -inf where p = 0)
    mu = torch.where(probs > 0, probs * logp, 0.0).sum(-1)
    second = torch.where(probs > 0, probs * logp * logp, 0.0).sum(-1)
    sigma = (second - mu * mu).clamp(min=0.0).sqrt()
    keep = [i for i, t in enumerate(targets) if window.scored[t]]
    return _Part(
        [float(chosen[i]) for i in keep], [float(mu[i]) for i in keep], [float(sigma[i]) for i in keep]
    )


def _context_length(model: Any, tokenizer: Any) -> int:
    """The model's context from its config (``max_position_embeddings``, ``n_positions``), else the
    tokenizer's ``model_max_length`` when it is a real number, else ``DEFAULT_CONTEXT``."""
    for name in ("max_position_embeddings", "n_positions", "n_ctx", "seq_length"):
        value = getattr(model.config, name, None)
        if isinstance(value, int) and value > 1:
            return value
    value = getattr(tokenizer, "model_max_length", None)
    if isinstance(value, int) and 1 < value < 1_000_000:  # transformers' "no limit" is ~1e30
        return value
    return DEFAULT_CONTEXT


def _pad_id(tokenizer: Any) -> int:
    """Any valid id will do for padding (it is masked and never scored): the tokenizer's pad, else
    its end-of-text token, else 0."""
    for name in ("pad_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, int):
            return value
    return 0


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
