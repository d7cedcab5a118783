"""The benchmark corpus is deterministic and its planted leaks are where it says.

Reads ../shared/data/gsm8k (never copied into the project); skips with a reason elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import GSM8K, benchmark_module, needs_gsm8k

pytestmark = needs_gsm8k
corpus = benchmark_module("corpus")


def test_same_arguments_give_the_same_bytes(tmp_path: Path) -> None:
    first = corpus.build_corpus(tmp_path / "a.jsonl", 2)
    second = corpus.build_corpus(tmp_path / "b.jsonl", 2)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert first.plants == second.plants
    assert first.records == 2 * 7473
    assert first.bytes == (tmp_path / "a.jsonl").stat().st_size


def test_planted_questions_sit_verbatim_where_reported(tmp_path: Path) -> None:
    built = corpus.build_corpus(tmp_path / "c.jsonl", 2)
    lines = (tmp_path / "c.jsonl").read_text(encoding="utf-8").split("\n")
    questions = corpus.eval_questions(GSM8K)
    assert [p.test_index for p in built.plants] == list(corpus.PLANTED)
    for plant in built.plants:
        record = json.loads(lines[plant.line])
        assert record["id"] == plant.record_id
        assert plant.text == questions[plant.test_index]
        assert record["text"][plant.offset : plant.offset + len(plant.text)] == plant.text
        # a line of its own: the words around it are not glued to the question's
        assert plant.offset == 0 or record["text"][plant.offset - 1] == "\n"
        end = plant.offset + len(plant.text)
        assert end == len(record["text"]) or record["text"][end] == "\n"
    planted_lines = {p.line for p in built.plants}
    train = corpus.train_documents(GSM8K)
    untouched = [i for i in range(0, len(lines), 997) if i not in planted_lines]
    assert all(json.loads(lines[i])["text"] == train[i % len(train)] for i in untouched)


def test_a_different_seed_plants_elsewhere(tmp_path: Path) -> None:
    a = corpus.build_corpus(tmp_path / "a.jsonl", 2)
    b = corpus.build_corpus(tmp_path / "b.jsonl", 2, seed=corpus.SEED + 1)
    assert [p.line for p in a.plants] != [p.line for p in b.plants]
