"""The manifest benchmark's generated golden sets are deterministic and shaped as the manifest benchmark says
(three GSM8K-train sentences per item, about 50 words), and its table reads from real runs.

Reads ../shared/data/gsm8k (never copied into the project); skips with a reason elsewhere.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tests.helpers import benchmark_module, needs_gsm8k

pytestmark = needs_gsm8k
golden_sets = benchmark_module("golden_sets")


def test_the_same_arguments_give_the_same_sets(tmp_path: Path) -> None:
    first = golden_sets.write_sets(tmp_path / "a", 400, 4)
    second = golden_sets.write_sets(tmp_path / "b", 400, 4)
    assert [p.name for p in first.files] == ["set-00.jsonl", "set-01.jsonl", "set-02.jsonl", "set-03.jsonl"]
    assert [p.read_bytes() for p in first.files] == [p.read_bytes() for p in second.files]
    assert (first.items, first.chars) == (second.items, second.chars) == (400, first.chars)
    other = golden_sets.write_sets(tmp_path / "c", 400, 4, seed=1)
    assert [p.read_bytes() for p in other.files] != [p.read_bytes() for p in first.files]


def test_items_are_three_train_sentences_of_about_fifty_words(tmp_path: Path) -> None:
    sets = golden_sets.write_sets(tmp_path, 1000, 5)
    rows = [json.loads(line) for path in sets.files for line in path.read_text().splitlines()]
    assert len(rows) == 1000 and len({r["id"] for r in rows}) == 1000
    words = [len(r["question"].split()) for r in rows]
    assert 40 <= sum(words) / len(words) <= 60
    assert sum(len(r["question"]) for r in rows) == sets.chars
    sentences = set(golden_sets.train_sentences())
    first = rows[0]["question"]
    assert any(first.startswith(s) for s in sentences)  # made of GSM8K train's own sentences


def test_drawn_items_have_trains_words_but_no_records_text(tmp_path: Path) -> None:
    """``drawn`` (the corpus scan's items): GSM8K train's words at its lengths, but no train
    sentence's text, so a GSM8K corpus is mostly clean against them; as written, nearly every
    word pair of an item is a train sentence's."""

    def pairs(text: str) -> set[tuple[str, str]]:
        words = text.split()
        return set(itertools.pairwise(words))

    sentences = golden_sets.train_sentences()
    vocabulary = {word for s in sentences for word in s.split()}
    train_pairs = set().union(*(pairs(s) for s in sentences))

    def shares(words: str) -> list[float]:
        sets = golden_sets.write_sets(tmp_path / words, 200, 2, words=words)
        rows = [json.loads(line)["question"] for path in sets.files for line in path.read_text().splitlines()]
        if words == "drawn":
            assert all(set(q.split()) <= vocabulary for q in rows)
            assert 40 <= sum(len(q.split()) for q in rows) / len(rows) <= 60
        return [len(pairs(q) & train_pairs) / len(pairs(q)) for q in rows]

    assert min(shares("as-written")) >= 0.9
    assert max(shares("drawn")) < 0.5
