"""A second reading of text whose words are glued together: camelCase, and U+180E for spaces.

A copied item whose spaces are dropped and whose words are marked by capitals
(``janetsDucksLay16EggsPerDay``), or whose spaces are each replaced by U+180E MONGOLIAN VOWEL
SEPARATOR (a space until Unicode 6.3, now an ignorable code point that every spec removes without
splitting the word), is one word after normalisation; and GPT-4's character rule keeps case, so
the capitals break its windows too. The scan therefore reads such a text a second time with the
joins as word boundaries (``derived``): a space is inserted

- before an ASCII capital that follows a lowercase letter or a digit (``dayShe``, ``16Eggs``),
- before an ASCII digit that follows a letter (``lay16``),
- between two ASCII capitals when a lowercase letter follows (``bakesAMuffin``),
- before every U+180E,

ASCII punctuation between the two characters notwithstanding (``day.She``, ``for$2``). The
manifest is unchanged: registered items are read as before, and the second reading's words are
hashed and matched like any text's, so a camelCase copy shares the item's word runs (GPT-3's,
PaLM's and Llama 2's rules see it) while its windows stay GPT-4's.

Only a *glued token* is read again: a whitespace-free token with at least ``MIN_JOINS`` joins,
at least ``MIN_MARKED`` of them a capital after a lowercase letter or digit or a U+180E (hex
digests and version strings have only letter/digit joins), whose pieces look like words (at
least ``WORDLIKE`` of them a lowercase word with an optional capital, a number, or ``A``/``I``:
base64 gives about two thirds). Identifiers of code rarely reach ``MIN_JOINS``
(``getElementsByTagName`` has four), so code is almost never read twice.

Two tests, one cheap: ``candidates`` works on the UTF-8 bytes of a block of lines or of
documents, in numpy, and flags every whitespace-free stretch with ``MIN_JOINS`` joins or more in
a looser sense (any byte of a multi-byte character or an escape sequence passes as punctuation),
so that every glued token lies in a flagged stretch, JSON escapes included; ``glued_spans`` then
reads the decoded text of the flagged documents exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]

MIN_JOINS = 7
"""Joins a token needs to be read again: a run of 8 words, what the scan lists (``NOTABLE_RUN``)."""
MIN_MARKED = 4
"""... of them a capital after a lowercase letter or digit, or a U+180E."""
WORDLIKE = 0.8
"""The share of its pieces that must look like words (camelCase GSM8K questions: 0.89 or more;
random base64: 0.64 to 0.72)."""
SEPARATOR = "\u180e"

_PUNCT = r"[!-/:-@\[-`{-~]*"
_JOIN = re.compile(
    rf"(?P<m>[a-z0-9]{_PUNCT}(?=[A-Z])|(?=\u180e))|[A-Za-z]{_PUNCT}(?=[0-9])|[A-Z](?=[A-Z][a-z])"
)
"""Each match ends where a join is (a space goes there); group ``m`` marks the distinctive ones."""
_WORD = re.compile(r"[A-Z]?[a-z]+|[0-9]+[a-z]*|[AI]")
_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]+")
_SPACE = re.compile(r"\s")

# Byte classes of ``candidates``.
_S, _LOW, _UP, _DIG, _P = 0, 1, 2, 3, 4
_CLASS = np.full(256, _P, dtype=np.uint8)
_CLASS[[ord(c) for c in " \t\n\r\x0b\x0c"]] = _S
_CLASS[ord("a") : ord("z") + 1] = _LOW
_CLASS[ord("A") : ord("Z") + 1] = _UP
_CLASS[ord("0") : ord("9") + 1] = _DIG
_SEPARATOR_BYTES = (0xE1, 0xA0, 0x8E)  # U+180E in UTF-8


def candidates(data: bytes | memoryview) -> IntArray:
    """Byte offsets in ``data`` (UTF-8, or JSON Lines) of a join in each whitespace-free stretch
    that may hold a glued token: a superset, to be read exactly (``glued_spans``)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size < MIN_JOINS:
        return np.zeros(0, dtype=np.int64)
    cls = _CLASS[raw]
    at = np.arange(raw.size, dtype=np.int64)
    solid = np.maximum.accumulate(np.where(cls != _P, at, -1))  # the last non-punctuation byte
    before = np.full(raw.size, _S, dtype=np.uint8)
    has = solid[:-1] >= 0
    before[1:][has] = cls[solid[:-1][has]]
    after = np.concatenate([cls[1:], [_S]])
    previous = np.concatenate([[_S], cls[:-1]])
    join = ((cls == _UP) & ((before == _LOW) | (before == _DIG))) | (
        (cls == _DIG) & ((before == _LOW) | (before == _UP))
    )
    join |= (cls == _UP) & (previous == _UP) & (after == _LOW)
    lead = raw[:-2] == _SEPARATOR_BYTES[0]
    lead &= (raw[1:-1] == _SEPARATOR_BYTES[1]) & (raw[2:] == _SEPARATOR_BYTES[2])
    join[:-2] |= lead
    joins = np.flatnonzero(join)
    if joins.size < MIN_JOINS:
        return np.zeros(0, dtype=np.int64)
    stretch = np.cumsum(cls == _S)[joins]
    counts = np.bincount(stretch)
    first = np.concatenate([[True], stretch[1:] != stretch[:-1]])
    flagged: IntArray = joins[first & (counts[stretch] >= MIN_JOINS)]
    return flagged


def may_hold(texts: list[str]) -> NDArray[np.bool_]:
    """Whether each text may hold a glued token (the cheap test, over all of them at once)."""
    out = np.zeros(len(texts), dtype=np.bool_)
    if not texts:
        return out
    encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
    flagged = candidates(b"\n".join(encoded))
    if flagged.size:
        ends = np.cumsum(np.fromiter((len(e) + 1 for e in encoded), dtype=np.int64, count=len(encoded)))
        out[np.searchsorted(ends, flagged, side="right")] = True
    return out


def joins(text: str) -> list[int]:
    """Where ``text``'s glued tokens are joined (a space goes before each offset), in order."""
    found: list[int] = []
    token: list[re.Match[str]] = []
    token_end = -1
    for match in _JOIN.finditer(text):
        if token and match.end() > token_end:
            found += _if_glued(text, token)
            token = []
        if not token:
            space = _SPACE.search(text, match.end())
            token_end = len(text) if space is None else space.start()
        token.append(match)
    return found + _if_glued(text, token)


def _if_glued(text: str, token: list[re.Match[str]]) -> list[int]:
    """The joins of one token when it is a glued token (see the module's docstring), else none."""
    if len(token) < MIN_JOINS or sum(m.group("m") is not None for m in token) < MIN_MARKED:
        return []
    at = [m.end() for m in token]
    start = token[0].start()
    while start and not text[start - 1].isspace():
        start -= 1
    space = _SPACE.search(text, at[-1])
    end = len(text) if space is None else space.start()
    pieces = [_NOT_ALNUM.sub("", text[a:b]) for a, b in zip([start, *at], [*at, end])]
    pieces = [p for p in pieces if p]
    wordlike = sum(_WORD.fullmatch(p) is not None for p in pieces)
    return at if pieces and wordlike >= WORDLIKE * len(pieces) else []


@dataclass(frozen=True)
class Derived:
    """A text read the second way: ``text``, and where its inserted spaces are (``inserted``,
    offsets in ``text``), to map its offsets back."""

    text: str
    inserted: IntArray

    def original(self, offset: int) -> int:
        """The offset in the original text of ``offset`` of ``text`` (an inserted space: the
        character after it)."""
        return offset - int(np.searchsorted(self.inserted, offset, side="left"))

    def originals(self, offsets: IntArray) -> IntArray:
        """``original`` of each of ``offsets``."""
        back: IntArray = offsets - np.searchsorted(self.inserted, offsets, side="left")
        return back

    def shifted(self, offset: int) -> int:
        """The offset in ``text`` of ``offset`` of the original text."""
        original_at = self.inserted - np.arange(self.inserted.size, dtype=np.int64)
        return offset + int(np.searchsorted(original_at, offset, side="right"))


def derived(text: str) -> Derived | None:
    """``text`` read the second way, or None when it holds no glued token."""
    at = joins(text)
    if not at:
        return None
    pieces = [text[a:b] for a, b in zip([0, *at], [*at, len(text)])]
    return Derived(" ".join(pieces), np.asarray(at, dtype=np.int64) + np.arange(len(at), dtype=np.int64))


def readings(texts: list[str]) -> dict[int, Derived]:
    """The second reading of each of ``texts`` that holds a glued token, by its place."""
    out: dict[int, Derived] = {}
    for k in np.flatnonzero(may_hold(texts)).tolist():
        reading = derived(texts[k])
        if reading is not None:
            out[k] = reading
    return out
