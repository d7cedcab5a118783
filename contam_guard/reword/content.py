"""Content features (spec ``words-v1``): what the ``reworded`` rule compares, as a set per item.

From the normalised words (the manifest's spec), each word gives:

- a number (a word ``numbers.mask_word`` masks): its value, ``#`` and the digits without
  leading zeros (``#274`` from ``$2.74``), or for ``zero`` .. ``twenty``, the tens, ``hundred``,
  ``thousand`` and ``dozen`` the value in digits (``three`` is ``#3``, like ``3``); other number
  words (``half``, ``twice``, ``third``) give nothing;
- any other word: each digit run in it as a number (``10foot`` gives ``#10``), and the rest of
  the word, unless it is shorter than 2 characters or an English function word (``STOPWORDS``),
  reduced to its Snowball English stem (``snowballstemmer``: ``eggs`` and ``egg``, ``bakes``
  and ``baking`` meet);
- a number followed by a content word also gives the pair (``#16~egg`` from ``16 eggs``):
  which number goes with which thing survives a rewording far more often than a random
  problem shares it.

A rewording keeps what an item is about (the things, units and verbs of its story) and its
numbers, while it moves, adds or replaces the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import snowballstemmer

from contam_guard.reword.numbers import CARDINALS, PLACEHOLDER, mask_word

CONTENT_SPEC = "words-v1"

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "another",
        "many",
        "much",
        "every",
        "each",
        "let",
        "lets",
        "may",
        "might",
        "must",
        "shall",
        "us",
        "get",
        "gets",
        "got",
        "one",
        "s",
        "t",
    ]
)
"""Function words, after the Snowball English stop list, plus a few that every question has."""

_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    return str(_STEMMER.stemWord(word))


_VALUES = {
    word: str(value)
    for value, word in enumerate(CARDINALS[:21])  # zero .. twenty
} | {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "thousand": "1000",
    "dozen": "12",
}
_DIGITS = re.compile(r"\d+")


def _number(digits: str) -> str:
    return PLACEHOLDER + (digits.lstrip("0") or "0")


@lru_cache(maxsize=1 << 16)
def features_of(word: str) -> tuple[bool, str | None, tuple[str, ...], str | None]:
    """Whether a word is a number, its value feature, the numbers inside it, and its stem."""
    if mask_word(word) == PLACEHOLDER:
        value = word if word.isdigit() else _VALUES.get(word)
        return True, (_number(value) if value is not None else None), (), None
    inside = tuple(_number(d) for d in _DIGITS.findall(word))
    bare = _DIGITS.sub("", word)
    if len(bare) < 2 or bare in STOPWORDS:
        return False, None, inside, None
    return False, None, inside, _stem(bare)


def content_words(words: Sequence[str]) -> list[str]:
    """The content features of normalised ``words``, in order (repeats kept)."""
    return masked_and_content(words)[1]


_Word = tuple[str, bool, str | None, tuple[str, ...], str | None]
_SEEN: dict[str, _Word] = {}
_SEEN_MAX = 1 << 18
"""Distinct words kept (a scan's vocabulary; emptied when full, so memory stays bounded)."""


def _word(word: str) -> _Word:
    found = _SEEN.get(word)
    if found is None:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        found = _SEEN[word] = (mask_word(word), *features_of(word))
    return found


def masked_and_content(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(numbers.mask_words(words), content_words(words))`` in one pass, each distinct word
    masked and stemmed once (what a scan runs on every string)."""
    masked: list[str] = []
    out: list[str] = []
    last: str | None = None
    for word in words:
        mask, is_number, number, inside, stem = _SEEN.get(word) or _word(word)
        if mask != PLACEHOLDER or not masked or masked[-1] != PLACEHOLDER:
            masked.append(mask)
        if is_number:
            last = number
            if number is not None:
                out.append(number)
            continue
        out += inside
        if stem is None:
            continue
        out.append(stem)
        if last is not None:
            out.append(f"{last}~{stem}")
        last = None
    return masked, out
