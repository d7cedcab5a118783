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


def _shuffled(sentence: str, rng: random.Random) -> str:
    words = sentence.split()
    rng.shuffle(words)
    return " ".join(words)


def write_sets(
    folder: Path, items: int = 100_000, sets: int = 20, *, seed: int = SEED, shuffle: bool = False
) -> GoldenSets:
    """``sets`` golden files of ``items // sets`` generated items each, in ``folder``.

    ``shuffle``: each sentence's words in a seeded random order, so that the items keep GSM8K's
    vocabulary and lengths but share few 5-grams with GSM8K train (a corpus made of GSM8K train
    is then mostly clean against them, as a training corpus is against its benchmarks; with the
    sentences as written, every train record is a finding of dozens of items)."""
    sentences = train_sentences()
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
            text = " ".join(_shuffled(p, rng) if shuffle else p for p in picked)
            chars += len(text)
            lines.append(json.dumps({"id": f"{number:02d}-{n}", "question": text}) + "\n")
        path.write_text("".join(lines), encoding="utf-8")
        files.append(path)
    return GoldenSets(tuple(files), per_set * sets, chars)
