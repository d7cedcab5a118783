"""Content features (specs ``words-v1`` and ``words-v2``): what the ``reworded`` rule compares,
as a set per item.

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

Spec ``words-v2`` (new manifests) adds two things, measured on our development sets
(docs/decisions.md, "Rewording recall"):

- every stem is cut to its first 5 characters (``compe`` for competition and compete: a
  rewording picks another form of the same word more often than Snowball folds it), in the
  ``#N~stem`` pair too;
- each two consecutive numbers of a string with a value give the pair ``#a>#b`` (``#16>#3``
  from ``16 ... 3``), in order: which numbers come together survives a rewording, and an
  unrelated problem that shares the story's words rarely shares them. Numbers inside words
  (``10foot``) take no part.

A rewording keeps what an item is about (the things, units and verbs of its story) and its
numbers, while it moves, adds or replaces the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from contam_guard.core.reword.numbers import CARDINALS, PLACEHOLDER, mask_word


@dataclass(frozen=True)
class ContentSpec:
    """Which content features a string gives, named as the derived view that stores them."""

    name: str
    stem_cut: int | None
    """Stems keep their first this many characters (None: whole)."""
    number_pairs: bool
    """Each two consecutive numbers with a value give ``#a>#b``."""

    def cut(self, stem: str) -> str:
        return stem if self.stem_cut is None else stem[: self.stem_cut]


WORDS_V1 = ContentSpec("words-v1", None, False)
WORDS_V2 = ContentSpec("words-v2", 5, True)
CONTENT_SPECS = (WORDS_V1, WORDS_V2)
CURRENT_CONTENT = WORDS_V2
"""What new manifests store (a manifest keeps what it was registered with)."""

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


def number_feature(digits: str) -> str:
    """A number's value feature: ``#`` and its digits without leading zeros."""
    return PLACEHOLDER + (digits.lstrip("0") or "0")


@lru_cache(maxsize=1 << 16)
def features_of(word: str) -> tuple[bool, str | None, tuple[str, ...], str | None]:
    """Whether a word is a number, its value feature, the numbers inside it, and its stem."""
    if mask_word(word) == PLACEHOLDER:
        value = word if word.isdigit() else _VALUES.get(word)
        return True, (number_feature(value) if value is not None else None), (), None
    inside = tuple(number_feature(d) for d in _DIGITS.findall(word))
    bare = _DIGITS.sub("", word)
    if len(bare) < 2 or bare in STOPWORDS:
        return False, None, inside, None
    return False, None, inside, _stem(bare)


def content_words(words: Sequence[str], spec: ContentSpec = CURRENT_CONTENT) -> list[str]:
    """The content features of normalised ``words``, in order (repeats kept)."""
    return masked_and_content(words, spec)[1]


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


def masked_and_content(
    words: Sequence[str], spec: ContentSpec = CURRENT_CONTENT
) -> tuple[list[str], list[str]]:
    """``(numbers.mask_words(words), content_words(words, spec))`` in one pass, each distinct word
    masked and stemmed once: the definition the scan's streams are tested against."""
    masked: list[str] = []
    out: list[str] = []
    last: str | None = None  # the number waiting for a content word
    previous: str | None = None  # the last number with a value (words-v2's number pairs)
    for word in words:
        mask, is_number, number, inside, stem = _SEEN.get(word) or _word(word)
        if mask != PLACEHOLDER or not masked or masked[-1] != PLACEHOLDER:
            masked.append(mask)
        if is_number:
            last = number
            if number is not None:
                out.append(number)
                if spec.number_pairs and previous is not None:
                    out.append(f"{previous}>{number}")
                previous = number
            continue
        out += inside
        if stem is None:
            continue
        stem = spec.cut(stem)
        out.append(stem)
        if last is not None:
            out.append(f"{last}~{stem}")
        last = None
    return masked, out
