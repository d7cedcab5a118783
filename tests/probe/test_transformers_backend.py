"""The transformers backend against the model run by hand: each token's log p(x_t | x_<t), μ_t
and σ_t from one plain forward pass, BOS as the tokenizer puts it, batching that changes nothing,
and strided windows for a text longer than the context. A randomly initialised tiny model is
enough here (no training): these are exact checks, not a separation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.helpers import Runner, write_jsonl
from tests.probe.tiny import byte_tokenizer, one_thread, sentences, tiny_model, torch

CONTEXT = 16
pytestmark = pytest.mark.usefixtures(one_thread.__name__)


def TransformersBackend(model: str, batch_size: int) -> Any:  # noqa: N802 (stands for the class)
    """The backend, imported once ``tests.probe.tiny`` has skipped the module without the extra."""
    from contam_guard.probe.backends.transformers_backend import TransformersBackend as Backend  # noqa: PLC0415

    return Backend(model, batch_size=batch_size)


@pytest.fixture(params=[True, False], ids=["bos", "no-bos"])
def folder(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, bool]:
    path = tmp_path / "model"
    byte_tokenizer(path, bos=request.param)
    tiny_model(CONTEXT).save_pretrained(path)
    return path, request.param


def by_hand(model: Any, ids: list[int], begin: int) -> np.ndarray:
    """One plain forward pass over ``ids[begin:]``: row p holds log p(ids[p + 1] | ids[begin:p + 1]),
    μ and σ of log p at that step (in float64), for p = begin .. len(ids) - 2."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids[begin:]])).logits[0, :-1].double()
    logp = torch.log_softmax(logits, dim=-1)
    p = logp.exp()
    mu = (p * logp).sum(-1)
    sigma = (p * (logp - mu[:, None]) ** 2).sum(-1).sqrt()
    chosen = logp.gather(1, torch.tensor(ids[begin + 1 :])[:, None])[:, 0]
    rows: np.ndarray = torch.stack([chosen, mu, sigma], dim=1).numpy().reshape(-1, 3)
    return rows


def test_short_texts_match_a_plain_forward_pass(folder: tuple[Path, bool]) -> None:
    path, bos = folder
    backend = TransformersBackend(str(path), batch_size=3)
    texts = ["Amber lamp.", "x", "Héllo wörld", ""]
    got = backend.log_probs(texts)
    for text, tokens in zip(texts, got):
        data = text.encode("utf-8")
        # With BOS every byte has a log-probability (after BOS); without, the first byte has none.
        assert tokens.count == (len(data) if bos else max(0, len(data) - 1))
        ids = list(backend.tokenizer(text)["input_ids"])
        assert len(ids) == len(data) + bos  # one token per byte
        assert (ids[:1] == [257]) is bos
        expected = by_hand(backend.model, ids, 0) if len(ids) > 1 else np.zeros((0, 3))
        assert tokens.logprobs == pytest.approx(expected[:, 0], abs=1e-4)
        assert tokens.mu == pytest.approx(expected[:, 1], abs=1e-4)
        assert tokens.sigma == pytest.approx(expected[:, 2], abs=1e-4)


def test_batching_changes_nothing(folder: tuple[Path, bool]) -> None:
    path, _ = folder
    texts = sentences(7, seed=3)
    one = TransformersBackend(str(path), batch_size=1).log_probs(texts)
    many = TransformersBackend(str(path), batch_size=8).log_probs(texts)
    for a, b in zip(one, many):
        assert a.count == b.count > 0
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
        assert a.sigma == pytest.approx(b.sigma, abs=1e-4)


def test_long_text_is_scored_in_strided_windows(folder: tuple[Path, bool]) -> None:
    """Context 16, stride 8: token t is scored once, in the window that starts at 0 when t < 16,
    else at 8 × (t // 8 − 1) — so with at least 8 tokens before it, never more than 15."""
    path, _ = folder
    backend = TransformersBackend(str(path), batch_size=2)
    assert backend.context == CONTEXT
    text = " ".join(sentences(3, seed=5))
    ids = list(backend.tokenizer(text)["input_ids"])
    assert len(ids) > 3 * CONTEXT
    (tokens,) = backend.log_probs([text])
    assert tokens.count == len(ids) - 1  # BOS or the first byte is context only
    for t in range(1, len(ids)):
        begin = 0 if t < CONTEXT else 8 * (t // 8 - 1)
        assert 8 <= t - begin < CONTEXT or begin == 0
        # the window ids[begin : begin + CONTEXT] run on its own (causal: the tokens after t do not matter)
        logprob, mu, sigma = by_hand(backend.model, ids[: begin + CONTEXT], begin)[t - begin - 1]
        assert tokens.logprobs[t - 1] == pytest.approx(logprob, abs=1e-4), t
        assert tokens.mu is not None and tokens.mu[t - 1] == pytest.approx(mu, abs=1e-4)
        assert tokens.sigma is not None and tokens.sigma[t - 1] == pytest.approx(sigma, abs=1e-4)


def test_bad_device_and_bad_model_are_usage_errors(
    tmp_path: Path, cli: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path = tmp_path / "model"
    byte_tokenizer(path, bos=False)
    tiny_model(CONTEXT).save_pretrained(path)
    golden = write_jsonl(tmp_path / "bench.jsonl", [{"text": "Amber lamp."}])
    done = cli("probe", golden, "--backend", "transformers", "--model", path, "--device", "tpu9")
    assert done.code == 2, done.err
    assert "--device 'tpu9'" in done.err and "Traceback" not in done.err
    empty = tmp_path / "empty"
    empty.mkdir()
    done = cli("probe", golden, "--backend", "transformers", "--model", empty)
    assert done.code == 2, done.err
    assert "could not load a causal language model" in done.err
    done = cli(
        "probe",
        golden,
        "--backend",
        "transformers",
        "--model",
        path,
        "--device",
        "cpu",
        "--items-csv",
        tmp_path / "items.csv",
    )
    assert done.code == 0, done.err
    assert (tmp_path / "items.csv").read_text(encoding="utf-8").splitlines()[0] == (
        "set,item_id,test_index,tokens,loss,zlib,lowercase,mink,minkpp"
    )
