"""Exact counts against a brute-force count, and BM25 ranking, on GSM8K train (question + answer).

Reads ../shared/data/gsm8k (never copied into the project); skips with a reason elsewhere.
"""

from __future__ import annotations

import json
import random

import pytest

from contam_guard.core.spec.normalise import words
from contam_guard.search.build import build
from contam_guard.search.query import SearchIndex
from tests.helpers import GSM8K

pytestmark = [
    pytest.mark.gsm8k,
    pytest.mark.slow,  # about 15 s: normalising GSM8K train for the brute force, building its index
    pytest.mark.skipif(not (GSM8K / "train.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}"),
]
FIELDS = ("question", "answer")


@pytest.fixture(scope="module")
def train() -> list[list[str]]:
    """Each record's segments as space-joined normalised words, padded with spaces."""
    rows = [json.loads(line) for line in (GSM8K / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    return [[" " + " ".join(words(row[f])) + " " for f in FIELDS] for row in rows]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> SearchIndex:
    root = tmp_path_factory.mktemp("gsm8k") / "index"
    build(root, [GSM8K / "train.jsonl"], FIELDS)
    return SearchIndex(root)


def _brute(train: list[list[str]], phrase: list[str]) -> tuple[int, int]:
    """Occurrences (overlapping ones too) and records holding the phrase, by plain search."""
    needle = " " + " ".join(phrase) + " "
    count = documents = 0
    for segments in train:
        found = 0
        for text in segments:
            at = text.find(needle)
            while at >= 0:
                found += 1
                at = text.find(needle, at + 1)
        count += found
        documents += found > 0
    return count, documents


def test_exact_counts_equal_a_brute_force_count(index: SearchIndex, train: list[list[str]]) -> None:
    rng = random.Random(15)
    phrases: list[list[str]] = []
    while len(phrases) < 40:  # phrases taken from the data: every one occurs at least once
        segment = rng.choice(rng.choice(train)).split()
        size = rng.randint(3, 9)
        if len(segment) >= size:
            start = rng.randrange(len(segment) - size + 1)
            phrases.append(segment[start : start + size])
    vocabulary = sorted({w for record in train[:300] for s in record for w in s.split()})
    phrases += [rng.sample(vocabulary, rng.randint(3, 4)) for _ in range(10)]  # mostly absent
    phrases += [["of", "the", "total"], ["how", "many"] * 2, ["1", "1", "1"]]  # frequent, repeated words
    seen_many = 0
    for phrase in phrases:
        result = index.exact(" ".join(phrase), limit=3)
        assert (result.count, result.documents) == _brute(train, phrase), phrase
        seen_many += result.count > 1
    assert seen_many >= 5  # the sample holds phrases occurring many times, not only once


def test_the_query_is_normalised_like_the_rules(index: SearchIndex) -> None:
    plain = index.exact("half as many clips")
    assert plain.count >= 1
    assert index.exact("  HALF, as MANY   “clips”!").count == plain.count


def test_bm25_ranks_the_source_record_first(index: SearchIndex) -> None:
    rows = [json.loads(line) for line in (GSM8K / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    rng = random.Random(7)
    for number in rng.sample(range(len(rows)), 25):
        question = rows[number]["question"].split()
        start = rng.randrange(max(1, len(question) - 15))
        result = index.ranked(" ".join(question[start : start + 15]), limit=5)
        top = result.hits[0]
        tied = {h.record for h in result.hits if h.score == top.score}
        assert number in tied, (number, [(h.record, h.score) for h in result.hits])
