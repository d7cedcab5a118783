"""Truth tables for the four rules, each case a tiny commented corpus run through the engine."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from contam_guard.core.match.index import ManifestIndex, Target
from contam_guard.core.match.matcher import ItemTotals, match_batch
from contam_guard.core.match.stats import ItemStats, item_stats
from contam_guard.core.register.views import hash_view
from contam_guard.core.rules import RULES, gapped, gpt3, gpt4, llama2, numbers, palm, reworded, whole
from contam_guard.core.spec.features import extract_features

GSM8K_TEST = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gsm8k" / "test.jsonl"


INDEX_OF: dict[int, ManifestIndex] = {}


def stats_for(item: str, records: list[str]) -> ItemStats:
    target = Target("s", "text", 1, ["0"], np.arange(1), 0)
    index = ManifestIndex.from_views([target], [hash_view("text", [item], None)])
    totals = ItemTotals.empty(index)
    match_batch(index, extract_features(records), totals)
    stats = item_stats(index, totals)
    INDEX_OF[id(stats)] = index
    return stats


def fires(name: str, stats: ItemStats, **settings: object) -> bool:
    """Whether rule ``name`` (default settings, with ``settings`` on top) fires on the one item."""
    rule = RULES[name]
    return bool(rule.evaluate(stats, rule.settings(**settings), INDEX_OF[id(stats)]).fired[0])


def words(count: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(count))


# (comment, item, records, gpt3 fires at N=13, palm fires, llama2 dirty fires, gpt4 any-window fires)
CASES = [
    ("verbatim copy: every rule fires", words(30), [words(30)], True, True, True, True),
    ("nothing shared", words(30), [words(30, "x")], False, False, False, False),
    # 12 shared words: under N; 5 of 23 8-grams; 12 of 30 words; the run's alnum text is 26 chars
    ("12-word run: under N", words(30), ["a b " + words(12) + " c d"], False, False, False, False),
    ("13-word run at the end of a record", words(30), ["pre fix " + words(13)], True, False, False, False),
    (
        "7-word item: no 8-grams for palm, no 10-word run for llama2",
        words(7),
        [words(7)],
        False,
        False,
        False,
        False,
    ),
    (
        "9-word item: too short for gpt3 at 13 and for llama2's runs of 10",
        words(9),
        [words(9)],
        False,
        True,
        False,
        False,
    ),
    (
        "item under 50 characters: gpt4 has no window",
        "a b c d e f g h i j k",
        ["a b c d e f g h i j k"],
        False,
        True,
        True,
        False,
    ),
    # 10 + 10 words in two records: runs of 10 each (llama2 covers all 20 words), never one of 20
    (
        "a run split across two records does not count",
        words(20),
        [" ".join(f"w{i}" for i in range(10)), " ".join(f"w{i}" for i in range(10, 20))],
        False,
        False,
        True,
        False,
    ),
    # Curly quotes, guillemets and a semicolon vanish from words; case folds for words, not for gpt4
    (
        "Unicode punctuation and case",
        "“Janet’s” ducks lay sixteen eggs; per day, and she eats «three» for breakfast every morning!",
        ["janet's DUCKS lay sixteen eggs per day and she eats three for breakfast every morning"],
        True,
        True,
        True,
        True,
    ),
]


@pytest.mark.parametrize(
    ("comment", "item", "records", "g3", "pa", "l2", "g4"), CASES, ids=[c[0] for c in CASES]
)
def test_truth_table(
    comment: str, item: str, records: list[str], g3: bool, pa: bool, l2: bool, g4: bool
) -> None:
    stats = stats_for(item, records)
    fired = (fires("gpt3", stats, n=13), fires("palm", stats), fires("llama2", stats), fires("gpt4", stats))
    assert fired == (g3, pa, l2, g4), comment


def test_repeated_ngrams_inside_one_item_count_each_position() -> None:
    # The item repeats one 8-word phrase three times; the record holds it once.
    phrase = "one two three four five six seven eight"
    stats = stats_for(f"{phrase} {phrase} {phrase}", [phrase])
    assert stats.ngrams8.tolist() == [17]
    assert stats.ngrams8_found.tolist() == [3]  # positions 0, 8 and 16 each start the phrase
    assert stats.longest_run.tolist() == [8]


def test_gpt4_probability_formula() -> None:
    m, h = np.array([172, 185, 3, 2, 0, 10]), np.array([35, 52, 1, 1, 0, 0])
    p = gpt4.three_draw_probability(m, h)
    assert round(float(p[0]), 3) == 0.497 and round(float(p[1]), 3) == 0.631
    assert p[2] == 1.0 and p[3] == 1.0 and p[4] == 0.0 and p[5] == 0.0


@pytest.mark.parametrize(
    ("lengths", "expected"), [([24] * 20, 13), ([5] * 20, 8), ([10] * 19 + [40], 10), ([], 13)]
)
def test_gpt3_auto_n(lengths: list[int], expected: int) -> None:
    assert gpt3.auto_n(np.array(lengths, dtype=np.int64)) == expected


@pytest.mark.skipif(not GSM8K_TEST.is_file(), reason=f"GSM8K not found at {GSM8K_TEST}")
def test_worked_example_janets_ducks_against_its_number_swapped_copy() -> None:
    """The seed article's example: one item, one copy, four rules, four different verdicts."""
    item = json.loads(GSM8K_TEST.read_text().splitlines()[0])["question"]
    copy = item.replace("16", "20").replace("three", "five").replace("four", "six").replace("$2", "$3")
    assert copy != item
    stats = stats_for(item, [copy])
    assert stats.words.tolist() == [52]
    assert stats.longest_run.tolist() == [17]
    assert (stats.ngrams8_found.tolist(), stats.ngrams8.tolist()) == ([19], [45])
    assert stats.covered_l10.tolist() == [40]
    assert (stats.window_hits.tolist(), stats.windows.tolist()) == ([35], [172])
    index = INDEX_OF[id(stats)]
    assert fires("gpt3", stats, n=13)
    assert not fires("palm", stats)
    l2 = llama2.evaluate(stats, llama2.Settings(), index)
    assert not l2.fired[0] and "not clean" in l2.explain[0]
    g4 = gpt4.evaluate(stats, gpt4.Settings(mode="probability"), index)
    assert round(float(g4.score[0]), 3) == 0.497 and g4.fired[0] is np.False_


def test_llama2_min_run_counts_runs_of_other_lengths() -> None:
    """``min_run`` other than 10: the coverage is computed at that length (here 12 words share
    one run: covered at 10 and at 12, not at 13)."""
    stats = stats_for(words(30), ["a b " + words(12) + " c d"])
    assert stats.covered(10).tolist() == [12] == stats.covered(12).tolist()
    assert stats.covered(13).tolist() == [0]
    for min_run, expected in [(10, "12 of 30"), (13, "0 of 30")]:
        outcome = llama2.evaluate(stats, llama2.Settings(min_run=min_run), INDEX_OF[id(stats)])
        assert outcome.explain[0].startswith(expected)


def test_every_rule_is_registered_once_with_its_settings() -> None:
    assert list(RULES) == ["gpt3", "gapped", "whole", "palm", "llama2", "gpt4", "numbers", "reworded"]
    for name, rule in RULES.items():
        assert rule.name == name and rule.settings().enabled == (name != "gapped")  # gapped: off
    assert [m.NAME for m in (gpt3, gapped, whole, palm, llama2, gpt4, numbers, reworded)] == list(RULES)
