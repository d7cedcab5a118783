"""The benchmark corpus: GSM8K train documents repeated, with a few planted leaks.

Built from ``../shared/data/gsm8k`` (read in place, never copied into the repo) into a work
folder outside the repo. Every byte is a function of (GSM8K, repeat, seed), so two builds with
the same arguments are identical and every tool scans the same file.

- Each record is ``{"id": "<copy>-<line>", "text": question + "\\n" + answer}``, JSONL, non-ASCII
  escaped as GSM8K itself ships it.
- ``PLANTED`` test questions are copied verbatim, each as its own line, into one record chosen
  with ``random.Random(seed)``; ``build_corpus`` returns where (line, id, character offset).
- ``KNOWN`` are the natural overlaps of GSM8K: test questions that share a run of 15, 19 and 25
  normalised words with a train question (so they appear in every copy).
- ``write_eval`` writes the registered set every tool is given: the 1,319 test questions as
  ``{"id": <0-based index>, "question": ...}``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

GSM8K = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k"
PLANTED: tuple[int, ...] = (5, 50, 500)
KNOWN: dict[int, int] = {581: 15, 602: 19, 632: 25}
SEED = 20_240_601


@dataclass(frozen=True)
class Plant:
    """A test question copied verbatim into record ``line`` (0-based) at character ``offset``."""

    test_index: int
    line: int
    record_id: str
    offset: int
    text: str


@dataclass(frozen=True)
class Corpus:
    path: Path
    records: int
    bytes: int
    text_bytes: int  # UTF-8 bytes of the documents' text (what MB/s counts)
    repeat: int
    plants: tuple[Plant, ...]


def eval_questions(gsm8k: Path = GSM8K) -> list[str]:
    with (gsm8k / "test.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line)["question"] for line in handle if line.strip()]


def train_documents(gsm8k: Path = GSM8K) -> list[str]:
    with (gsm8k / "train.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [row["question"] + "\n" + row["answer"] for row in rows]


def _insert_line(text: str, insert: str, rng: random.Random) -> tuple[str, int]:
    """Insert ``insert`` as a line of its own at a random line boundary; return text and offset."""
    lines = text.split("\n")
    at = rng.randint(0, len(lines))
    offset = sum(len(line) + 1 for line in lines[:at])
    return "\n".join([*lines[:at], insert, *lines[at:]]), offset


def build_corpus(
    path: Path,
    repeat: int = 10,
    *,
    seed: int = SEED,
    planted: tuple[int, ...] = PLANTED,
    gsm8k: Path = GSM8K,
) -> Corpus:
    documents = train_documents(gsm8k)
    questions = eval_questions(gsm8k)
    total = len(documents) * repeat
    rng = random.Random(seed)
    targets = dict(zip(rng.sample(range(total), len(planted)), planted))
    plants: list[Plant] = []
    text_bytes = 0
    with path.open("wb") as out:
        for line in range(total):
            copy, number = divmod(line, len(documents))
            record_id = f"{copy}-{number}"
            text = documents[number]
            if line in targets:
                test_index = targets[line]
                text, offset = _insert_line(text, questions[test_index], rng)
                plants.append(Plant(test_index, line, record_id, offset, questions[test_index]))
            text_bytes += len(text.encode())
            out.write((json.dumps({"id": record_id, "text": text}) + "\n").encode())
    plants.sort(key=lambda p: p.test_index)
    return Corpus(path, total, path.stat().st_size, text_bytes, repeat, tuple(plants))


def write_eval(path: Path, gsm8k: Path = GSM8K) -> int:
    """The registered set: every GSM8K test question with its 0-based index as ``id``."""
    questions = eval_questions(gsm8k)
    with path.open("wb") as out:
        for index, question in enumerate(questions):
            out.write((json.dumps({"id": index, "question": question}) + "\n").encode())
    return len(questions)
