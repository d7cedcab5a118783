"""Normalisation: the two views of text that the overlap rules compare.

Spec ``words-v1`` (GPT-3, Brown et al. 2020, Appendix C: "a lowercase, whitespace delimited
word with no punctuation"): split on whitespace (``str.split()``), remove every Unicode
punctuation or symbol character (general category ``P*`` or ``S*``) from each word, lowercase
the rest (``str.lower()``), drop words left empty.

Spec ``alnum-v1`` (GPT-4, OpenAI 2023, Appendix C: "remove all spaces and symbols, keeping only
characters (including numbers)"): keep the characters for which ``str.isalnum()`` is true, case
kept.

The functions ``words`` and ``alnum`` below *are* the spec: slow, obvious, used by tests and by
the rare records the vectorised path hands back. ``CodepointTables`` classifies code points for
the vectorised path in ``features.py``; it is filled lazily, only for code points actually seen,
because classifying all 1.1 million code points up front costs seconds at every start.
"""

from __future__ import annotations

import unicodedata

import numpy as np
from numpy.typing import NDArray

WORDS_SPEC = "words-v1"
ALNUM_SPEC = "alnum-v1"
UNICODE_VERSION = unicodedata.unidata_version


def is_removed(ch: str) -> bool:
    """Whether ``ch`` is punctuation or a symbol (removed from words)."""
    return unicodedata.category(ch)[0] in "PS"


def words(text: str) -> list[str]:
    """The normalised words of ``text`` (spec ``words-v1``)."""
    cleaned = ("".join(ch for ch in token if not is_removed(ch)).lower() for token in text.split())
    return [word for word in cleaned if word]


def alnum(text: str) -> str:
    """The alphanumeric-only view of ``text`` (spec ``alnum-v1``), case kept."""
    return "".join(ch for ch in text if ch.isalnum())


# Code point classes for the vectorised path.
UNKNOWN = 0
ALNUM = 1  # kept by both views (letters and digits)
KEPT = 2  # kept in words, dropped from the alnum view (marks, controls, format characters)
REMOVED = 3  # punctuation and symbols: removed from both views
SPACE = 4  # word boundary; not part of either view
SPECIAL = 5  # lowercasing is not one code point to one code point (U+0130) or depends on context
# (U+03A3, Greek capital sigma, becomes final or medial sigma): such records take the slow path.

N_CODEPOINTS = 0x110000


class CodepointTables:
    """Lazily filled lookup tables indexed by code point: class and lowercase mapping."""

    def __init__(self) -> None:
        self.cls: NDArray[np.uint8] = np.zeros(N_CODEPOINTS, dtype=np.uint8)
        self.lower: NDArray[np.uint32] = np.arange(N_CODEPOINTS, dtype=np.uint32)
        self.is_alnum: NDArray[np.bool_] = np.zeros(N_CODEPOINTS, dtype=np.bool_)

    def ensure(self, codepoints: NDArray[np.uint32]) -> int:
        """Classify every code point in ``codepoints`` not seen before; returns how many."""
        unseen = codepoints[self.cls[codepoints] == UNKNOWN]
        if unseen.size == 0:
            return 0
        new = set(unseen.tolist())
        for cp in sorted(new):
            self._classify(int(cp))
        return len(new)

    def classify_new(self, codepoints: NDArray[np.uint32]) -> None:
        """Classify the code points not seen before (one gather; rarely any work after it)."""
        if not self.cls[codepoints].all():  # UNKNOWN is 0
            self.ensure(codepoints)

    def _classify(self, cp: int) -> None:
        ch = chr(cp)
        lowered = ch.lower()
        if ch.isspace():
            cls = SPACE
        elif is_removed(ch):
            cls = REMOVED
        elif len(lowered) != 1 or cp == 0x03A3:
            cls = SPECIAL
        elif ch.isalnum():
            cls = ALNUM
        else:
            cls = KEPT
        if cls != SPECIAL and len(lowered) == 1:
            self.lower[cp] = ord(lowered)
        self.is_alnum[cp] = ch.isalnum()
        self.cls[cp] = cls


TABLES = CodepointTables()
