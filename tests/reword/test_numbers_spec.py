"""The number placeholder spec (``numbers-v1``, ``contam_guard/core/reword/numbers.py``) as a table,
and the content features the reworded rule compares (``words-v1``)."""

from __future__ import annotations

import random
import string

import pytest

from contam_guard.core.reword.content import WORDS_V1, WORDS_V2, content_words
from contam_guard.core.reword.numbers import mask_words
from contam_guard.core.reword.words import normalised_words
from contam_guard.core.spec.normalise import CURRENT, SPECS, TextSpec

MASKED = [
    # (what it shows, the text, its words with every number masked)
    ("digits", "lay 16 eggs", "lay # eggs"),
    ("decimal", "costs 2.74 each", "costs # each"),
    ("decimal without a leading digit", "worth $.25", "worth #"),
    ("thousands separators", "50,000 bars", "# bars"),
    ("thousands separated by spaces are one number", "1 000 000 people", "# people"),
    ("fraction", "3/5 of the rest", "# of the rest"),
    ("mixed number", "1 1/2 cups", "# cups"),
    ("vulgar fraction", "ate ¾ of it", "ate # of it"),
    ("percentage", "25% more", "# more"),
    ("percentage in words", "25 percent more", "# percent more"),
    ("currency before", "$1,234.50 left", "# left"),
    ("currency after", "12€ and £5", "# and #"),
    ("negative", "is -48 degrees", "is # degrees"),
    ("time of day", "from 1:00 PM", "from # pm"),
    ("ordinal", "his 2nd and 3rd try", "his # and # try"),
    ("fraction with a suffix", "3/4ths of them", "# of them"),
    ("number words", "three for breakfast", "# for breakfast"),
    ("compound number words", "twenty-five jars", "# jars"),
    ("several number words are one number", "two hundred and fifty", "# and #"),
    ("a number word and digits together", "1 dozen eggs", "# eggs"),
    ("multiples and parts", "twice as many, half of a third", "# as many # of a #"),
    ("ordinal words", "the first day and the fifth", "the # day and the #"),
    ("a number inside a word keeps the word", "a 10-foot shark", "a #foot shark"),
    ("hyphenated age", "a 5-year-old tree", "a #yearold tree"),
    ("words that hold a number word are words", "often tennis none someone", "often tennis none someone"),
    ("a list of numbers", "scores 3, 4 and 5", "scores # and #"),
    ("no numbers", "how many eggs", "how many eggs"),
    ("fullwidth digits", "１６ eggs", "# eggs"),
]


@pytest.mark.parametrize(("case", "text", "masked"), MASKED, ids=[row[0] for row in MASKED])
def test_mask(case: str, text: str, masked: str) -> None:
    assert mask_words(CURRENT.words(text)) == masked.split()


def test_a_copy_with_changed_numbers_masks_to_the_same_words() -> None:
    original = "Odile’s hens lay 16 eggs a day; she eats three and sells the rest at $2 each."
    changed = "Odile’s hens lay 20 eggs a day; she eats five and sells the rest at $3.50 each."
    assert mask_words(CURRENT.words(original)) == mask_words(CURRENT.words(changed))
    assert CURRENT.words(original) != CURRENT.words(changed)


FEATURES = [
    # (case, text, words-v1's features, words-v2's)
    ("stems, no function words", "She bakes muffins", "bake muffin", "bake muffi"),
    ("a number and the word after it", "lay 16 eggs", "lay #16 egg #16~egg", "lay #16 egg #16~egg"),
    ("number words are values", "three eggs", "#3 egg #3~egg", "#3 egg #3~egg"),
    ("leading zeros", "$0.50 each", "#50", "#50"),
    ("a number word without a value", "half the eggs", "egg", "egg"),
    ("a number inside a word", "a 10-foot shark", "#10 foot shark", "#10 foot shark"),
    ("the pair skips function words", "3 of the apples", "#3 appl #3~appl", "#3 appl #3~appl"),
    (
        "two numbers in a row",
        "16 eggs and 3 hens",
        "#16 egg #16~egg #3 hen #3~hen",
        "#16 egg #16~egg #3 #16>#3 hen #3~hen",
    ),
    ("a number without a value breaks no pair", "12 then half then 4", "#12 #4", "#12 #4 #12>#4"),
    (
        "numbers inside words make no pair",
        "8 boxes of 10-packs 2",
        "#8 box #8~box #10 pack #2",
        "#8 box #8~box #10 pack #2 #8>#2",
    ),
    ("stems cut to 5 characters", "competitions compete", "competit compet", "compe compe"),
]


@pytest.mark.parametrize(("case", "text", "v1", "v2"), FEATURES, ids=[row[0] for row in FEATURES])
def test_content_features(case: str, text: str, v1: str, v2: str) -> None:
    assert content_words(CURRENT.words(text), WORDS_V1) == v1.split()
    assert content_words(CURRENT.words(text), WORDS_V2) == v2.split()


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.words_name)
def test_the_ascii_shortcut_gives_the_specs_words(spec: TextSpec) -> None:
    rng = random.Random(15)
    alphabet = string.printable + "\x00\x1c\x1f\x7f"
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert normalised_words(text, spec) == spec.words(text), repr(text)
