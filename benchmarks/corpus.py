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
- ``build_scale`` writes the scale file (``--scale-gb``): the corpus's bytes followed by clean
  filler, GSM8K train documents with their words shuffled (see its docstring).
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GSM8K = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k"
PLANTED: tuple[int, ...] = (5, 50, 500)
KNOWN: dict[int, int] = {581: 15, 602: 19, 632: 25}
SEED = 20_240_601
FILLER_SEED = SEED + 1


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


@dataclass(frozen=True)
class ScaleFile:
    """``base``'s bytes followed by ``filler_records`` clean records: ``records`` in ``bytes``."""

    path: Path
    records: int
    bytes: int
    filler_records: int
    base: Corpus


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


def shuffled_copies(seed: int = FILLER_SEED, gsm8k: Path = GSM8K) -> Iterator[list[str]]:
    """Copy after copy (endlessly) of GSM8K train with each document's words shuffled, as JSONL lines.

    Copy ``c``, document ``n`` is ``{"id": "f<c>-<n>", "text": <its words, shuffled, joined by a
    space>}``, byte for byte what ``json.dumps`` writes (each word is JSON-escaped once, and a
    space needs no escaping). Every copy gets a new shuffle; the randomness is 32 bits per word
    from ``random.Random(seed)``, and one stable numpy argsort per copy orders each document's
    words by them (a uniform shuffle, ties kept in order) -- about twice as fast as
    ``random.shuffle`` per document, which dominates the time otherwise.
    """
    documents = [document.split() for document in train_documents(gsm8k)]
    words = np.array([json.dumps(word)[1:-1] for document in documents for word in document], dtype=object)
    counts = np.array([len(document) for document in documents], dtype=np.int64)
    ends: list[int] = np.cumsum(counts).tolist()
    bounds = list(zip([0, *ends[:-1]], ends))
    # high 32 bits: the document, so sorting keeps every word inside its own document
    owner = np.repeat(np.arange(len(documents), dtype=np.uint64), counts) << np.uint64(32)
    rng = random.Random(seed)
    for copy in itertools.count():
        keys = np.frombuffer(rng.getrandbits(32 * len(words)).to_bytes(4 * len(words), "little"), "<u4")
        shuffled: list[str] = np.take(words, np.argsort(owner | keys, kind="stable")).tolist()
        yield [
            f'{{"id": "f{copy}-{number}", "text": "{" ".join(shuffled[start:end])}"}}\n'
            for number, (start, end) in enumerate(bounds)
        ]


def build_scale(
    path: Path, corpus: Corpus, target_bytes: int, *, seed: int = FILLER_SEED, gsm8k: Path = GSM8K
) -> ScaleFile:
    """The corpus file's bytes, then clean filler records while the file stays within ``target_bytes``.

    The filler is ``shuffled_copies``: realistic text of the corpus's own vocabulary in the same
    JSON shape, but no copy of a test question -- shuffled words break the long runs the rules
    look for (a few short 5-word runs may still match an item by chance). Written copy by copy
    (a few MB at a time, never the whole file in memory); every byte is a function of (corpus,
    target_bytes, seed, GSM8K), so two builds are identical. About half a minute per GB.
    """
    if target_bytes <= corpus.bytes:
        raise ValueError(f"scale target {target_bytes:,} bytes is not above the corpus's {corpus.bytes:,}")
    written, filler = corpus.bytes, 0
    with path.open("wb") as out:
        with corpus.path.open("rb") as base:
            shutil.copyfileobj(base, out, 1 << 20)
        for lines in shuffled_copies(seed, gsm8k):
            sizes = list(itertools.accumulate(map(len, lines)))  # ASCII: characters are bytes
            fit = bisect.bisect_right(sizes, target_bytes - written)
            out.write("".join(lines[:fit]).encode("ascii"))
            written += sizes[fit - 1] if fit else 0
            filler += fit
            if fit < len(lines):
                break
    if written != path.stat().st_size:
        raise AssertionError(f"{path}: wrote {written:,} bytes but the file holds {path.stat().st_size:,}")
    return ScaleFile(path, corpus.records + filler, written, filler, corpus)
