"""A GPT-2-shaped model small enough to build (and train) on CPU inside a test: 2 layers, 64
dimensions, a byte-level vocabulary (one token per UTF-8 byte, no merges), written with
``save_pretrained`` so that the probe loads it as it would any local model folder."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the [probe] extra (torch) is not installed")
transformers = pytest.importorskip("transformers", reason="the [probe] extra (transformers) is not installed")
tokenizers = pytest.importorskip("tokenizers", reason="the [probe] extra (transformers) is not installed")

EOS, BOS = "<|endoftext|>", "<s>"
WORDS = (
    "river",
    "stone",
    "green",
    "quiet",
    "market",
    "lamp",
    "orange",
    "seven",
    "winter",
    "field",
    "paper",
    "copper",
    "north",
    "bright",
    "garden",
    "thunder",
    "silver",
    "hollow",
    "maple",
    "candle",
    "harbor",
    "violet",
    "engine",
    "meadow",
    "falcon",
    "amber",
    "crystal",
    "lantern",
    "pepper",
    "canyon",
    "velvet",
    "marble",
    "timber",
    "cobalt",
    "saddle",
    "willow",
    "ember",
    "basket",
    "comet",
    "spruce",
)


@pytest.fixture
def one_thread() -> Iterator[None]:
    """One torch thread: on a shared 2-core machine more threads only fight each other (a training
    step took ten times longer with the default)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def byte_tokenizer(folder: Path, *, bos: bool) -> Any:
    """A byte-level tokenizer (256 byte tokens, then EOS and BOS) saved into ``folder``. With
    ``bos`` it puts BOS before every text, as Llama's does; without, none, as GPT-2's."""
    alphabet = sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    vocab = {char: number for number, char in enumerate(alphabet)}
    vocab[EOS], vocab[BOS] = 256, 257
    inner = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocab, merges=[]))
    inner.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    inner.decoder = tokenizers.decoders.ByteLevel()
    if bos:
        inner.post_processor = tokenizers.processors.TemplateProcessing(
            single=f"{BOS} $A", special_tokens=[(BOS, 257)]
        )
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=inner, bos_token=BOS, eos_token=EOS, pad_token=EOS
    )
    tokenizer.save_pretrained(folder)
    return tokenizer


def tiny_model(context: int, seed: int = 0) -> Any:
    torch.manual_seed(seed)
    config = transformers.GPT2Config(
        vocab_size=258,
        n_positions=context,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=257,
        eos_token_id=256,
    )
    return transformers.GPT2LMHeadModel(config)


def sentences(count: int, seed: int) -> list[str]:
    """``count`` different sentences of 5 to 8 words drawn from ``WORDS``."""
    chooser = random.Random(seed)
    made: list[str] = []
    while len(made) < count:
        text = " ".join(chooser.choice(WORDS) for _ in range(chooser.randint(5, 8))).capitalize() + "."
        if text not in made:
            made.append(text)
    return made


def train(model: Any, tokenizer: Any, texts: Sequence[str], epochs: int, lr: float = 3e-3) -> float:
    """Full-batch AdamW on ``texts`` (each tokenised as the probe will see it, then EOS) for
    ``epochs`` steps; returns the last loss."""
    rows = [[*tokenizer(text)["input_ids"], tokenizer.eos_token_id] for text in texts]
    width = max(map(len, rows))
    ids = torch.full((len(rows), width), tokenizer.eos_token_id, dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for number, row in enumerate(rows):
        ids[number, : len(row)] = labels[number, : len(row)] = torch.tensor(row)
        mask[number, : len(row)] = 1
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    last = float("nan")
    for _ in range(epochs):
        optimiser.zero_grad()
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimiser.step()
        last = float(loss.detach())
    model.eval()
    return last
