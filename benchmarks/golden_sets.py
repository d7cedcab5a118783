"""Generated golden sets at the scale of twenty benchmarks, for the manifest row of ``make bench``.

``write_sets`` writes ``sets`` JSONL files of ``items // sets`` items each, ``{"id": "<set>-<n>",
"question": <three sentences>}``: each item is three sentences drawn (with ``random.Random(seed)``)
from the sentences of GSM8K train's questions and answers (``../shared/data/gsm8k``, read in place;
nothing generated is ever committed). About 50 words per item, as the issue's measurement had.
Every byte is a function of (GSM8K, items, sets, seed): two builds are identical.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

from benchmarks.corpus import GSM8K

SEED = 20_240_613
SENTENCES_PER_ITEM = 3
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


@dataclass(frozen=True)
class GoldenSets:
    files: tuple[Path, ...]
    """One JSONL file per set, ``set-00.jsonl`` ... (the set is named after the file's stem)."""
    items: int
    chars: int
    """Characters of the items' text (what "bytes per golden character" divides by)."""


def train_sentences(gsm8k: Path = GSM8K) -> list[str]:
    """Every sentence of GSM8K train's questions and answers (the answers' ``<<...>>``
    calculator notes and ``#### n`` lines left out), in file order, each once."""
    seen: dict[str, None] = {}
    with (gsm8k / "train.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            answer = re.sub(r"<<[^>]*>>", "", row["answer"]).split("####")[0]
            for text in (row["question"], answer):
                for sentence in _SENTENCE_END.split(text.replace("\n", " ")):
                    if len(sentence.split()) >= 4:
                        seen.setdefault(sentence.strip(), None)
    return list(seen)


WORDS = {
    "as-written": "the sentences as written",
    "shuffled": "each sentence's words shuffled (the rewording rule's bags unchanged)",
    "drawn": "each word drawn from GSM8K train's words",
}
"""How an item's sentences are written (``write_sets``' ``words``), each as a table says it."""


def _shuffled(sentence: str, rng: random.Random) -> str:
    words = sentence.split()
    rng.shuffle(words)
    return " ".join(words)


def _drawn(sentence: str, pool: list[str], rng: random.Random) -> str:
    return " ".join(rng.choice(pool) for _ in sentence.split())


def write_sets(
    folder: Path, items: int = 100_000, sets: int = 20, *, seed: int = SEED, words: str = "as-written"
) -> GoldenSets:
    """``sets`` golden files of ``items // sets`` generated items each, in ``folder``.

    ``words``: "as-written", the sentences as GSM8K train has them (every train record is then a
    finding of dozens of items); "shuffled", each sentence's words in a seeded random order (few
    shared 5-grams, but the same bags of words: the rewording rule finds every record's
    sentences in them); "drawn", each word drawn from all of GSM8K train's words, as often as
    they occur there (GSM8K's vocabulary and lengths, no record's words: a corpus made of GSM8K
    train is then mostly clean against them for every rule, as a training corpus is against its
    benchmarks)."""
    if words not in WORDS:
        raise ValueError(f"words: one of {', '.join(WORDS)}")
    sentences = train_sentences()
    pool = [word for sentence in sentences for word in sentence.split()] if words == "drawn" else []
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    chars = 0
    per_set = items // sets
    for number in range(sets):
        path = folder / f"set-{number:02d}.jsonl"
        lines = []
        for n in range(per_set):
            picked = [rng.choice(sentences) for _ in range(SENTENCES_PER_ITEM)]
            if words == "shuffled":
                picked = [_shuffled(p, rng) for p in picked]
            elif words == "drawn":
                picked = [_drawn(p, pool, rng) for p in picked]
            text = " ".join(picked)
            chars += len(text)
            lines.append(json.dumps({"id": f"{number:02d}-{n}", "question": text}) + "\n")
        path.write_text("".join(lines), encoding="utf-8")
        files.append(path)
    return GoldenSets(tuple(files), per_set * sets, chars)
