"""Number masking (spec ``numbers-v1``): every number becomes one placeholder word, ``#``.

Applied to the words of the manifest's normalisation (GPT-3's: lowercase, punctuation and
symbols removed, so ``$1,234.50``, ``25%``, ``3/4``, ``1:00`` and ``-48`` are already one
word of digits), in three steps:

1. In every word, each maximal run of decimal digits becomes ``#`` (``10foot`` from
   ``10-foot`` becomes ``#foot``; ``2025`` from ``$20.25`` becomes ``#``).
2. A word that is ``#`` followed only by an ordinal suffix (``st nd rd th ths``: ``2nd``,
   ``34ths`` from ``3/4ths``) becomes ``#``; so does a word made entirely of English number
   words (``three``, ``twentyfive`` from ``twenty-five``, ``hundreds``, ``half``, ``twice``,
   ``thirds``, ``dozen``, ``second``; the list is ``NUMBER_WORDS``).
3. Consecutive ``#`` words become one (``1 1/2`` is ``1 12``: one number, one placeholder;
   ``two hundred`` too).

``#`` can never be a normalised word (``#`` is punctuation, removed by every spec), so the
placeholder never meets a real word. The table test (``tests/reword/test_numbers_spec.py``)
is the executable form of this spec.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

MASK_SPEC = "numbers-v1"
PLACEHOLDER = "#"

CARDINALS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "billion",
    "trillion",
    "dozen",
]
_ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "thirtieth",
    "fortieth",
    "fiftieth",
    "sixtieth",
    "seventieth",
    "eightieth",
    "ninetieth",
    "hundredth",
    "thousandth",
]
_MULTIPLES = ["half", "halves", "quarter", "quarters", "twice", "thrice", "double", "triple", "quadruple"]
NUMBER_WORDS: tuple[str, ...] = tuple(CARDINALS + _ORDINALS + _MULTIPLES)
"""The morphemes a number word is made of (step 2); plural ``s`` is allowed after each."""

_DIGITS = re.compile(r"\d+")  # re's \d is Unicode Nd: the digits NFKC leaves
_ORDINAL = re.compile(r"#(?:st|nd|rd|th|ths)")
_MORPHEME = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
_NUMBER_WORD = re.compile(rf"(?:(?:{_MORPHEME})s?)+")


@lru_cache(maxsize=1 << 16)
def mask_word(word: str) -> str:
    """One normalised word under steps 1 and 2: ``#`` for a number, digits masked otherwise."""
    masked = _DIGITS.sub(PLACEHOLDER, word)
    if masked == PLACEHOLDER or _ORDINAL.fullmatch(masked) or _NUMBER_WORD.fullmatch(masked):
        return PLACEHOLDER
    return masked


def mask_words(words: Sequence[str]) -> list[str]:
    """Normalised words with every number one ``#`` (all three steps)."""
    out: list[str] = []
    for word in words:
        masked = mask_word(word)
        if masked == PLACEHOLDER and out and out[-1] == PLACEHOLDER:
            continue
        out.append(masked)
    return out
