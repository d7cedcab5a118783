"""The prototype content features (reword/classes.py): the default spec is words-v1 exactly,
and each option adds or changes what its docstring says, as a function of the words alone."""

from __future__ import annotations

import pytest

from contam_guard.core.reword import classes
from contam_guard.core.reword.content import WORDS_V1, content_words
from contam_guard.core.reword.words import normalised_words
from contam_guard.core.spec.normalise import CURRENT

TEXTS = [
    "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning.",
    "A 10-foot board costs $2.74; 3 red apples and 12 of the pears cost $1,234.50.",
    "Half of the 20 students bought twice as many books as the 4 teachers.",
    "",
]


def words(text: str) -> list[str]:
    return normalised_words(text, CURRENT)


@pytest.mark.parametrize("text", TEXTS)
def test_default_spec_is_words_v1(text: str) -> None:
    assert classes.features(words(text)) == content_words(words(text), WORDS_V1)


def test_number_pairs_follow_the_numbers_in_order() -> None:
    got = classes.features(words("Tom has 16 eggs and 3 hens and 40 cows."), classes.Spec(number_pairs=True))
    assert [f for f in got if ">" in f] == ["#16>#3", "#3>#40"]
    unordered = classes.features(
        words("Tom has 16 eggs and 3 hens."), classes.Spec(number_pairs=True, unordered=True)
    )
    assert "#16>#3" in unordered  # "16" sorts before "3" as a string: one name for both orders
    swapped = classes.features(
        words("Tom has 3 hens and 16 eggs."), classes.Spec(number_pairs=True, unordered=True)
    )
    assert "#16>#3" in swapped


def test_pair_reach_pairs_a_number_with_the_next_words() -> None:
    got = classes.features(words("She has 3 red apples."), classes.Spec(pair_reach=2))
    assert "#3~red" in got and "#3~appl" in got
    assert "#3~appl" not in classes.features(words("She has 3 red apples."))


def test_no_pairs_and_bigrams() -> None:
    text = words("She has 3 red apples.")
    assert not [f for f in classes.features(text, classes.Spec(pairs=False)) if "~" in f]
    assert "red_appl" in classes.features(text, classes.Spec(bigrams=True))


def test_lemma_meets_irregular_forms() -> None:
    spec = classes.Spec(word_class=classes.lemma)
    for a, b in (("bought", "buys"), ("children", "child"), ("ran", "running"), ("sold", "sells")):
        assert classes.features([a], spec) == classes.features([b], spec), (a, b)
    assert classes.features(["bought"]) != classes.features(["buys"])  # the stem alone does not


def test_truncation_is_a_wider_class() -> None:
    spec = classes.Spec(stem_cut=5)
    assert classes.features(["competition"], spec) == classes.features(["compete"], spec) == ["compe"]
    assert classes.features(["it"], spec) == []  # function words stay out under every class


def test_a_class_that_is_a_function_word_gives_nothing() -> None:
    spec = classes.Spec(word_class=lambda word: "the")
    assert classes.features(["ducks", "16"], spec) == ["#16"]
