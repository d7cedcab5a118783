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

Only a *glued token* is read again (``joins``): a whitespace-free token with ``MIN_JOINS``
joins or more, ``MIN_JOINS`` of them in a row at most ``MAX_GAP`` characters apart, at least
``MIN_MARKED`` a capital after a lowercase letter or digit or a U+180E (hex digests and version
strings have only letter/digit joins), ``LOWER_SHARE`` of its characters or more in lowercase
runs and ``WORDLIKE`` of its pieces or more word-like (base64 fails both). Identifiers of code
rarely reach ``MIN_JOINS`` (``getElementsByTagName`` has four), so code is seldom read twice.

Two tests, one cheap: ``candidates`` works on the UTF-8 bytes of a block of JSON Lines or text
(or of documents: ``may_hold``), in one compiled pass (numpy with the numpy kernels), and flags
every whitespace-free stretch holding such a run of joins in a looser sense (any byte of a
multi-byte character or of an escape sequence passes as punctuation, and an escape's own letters
and digits can only add joins), so that every glued token lies in a flagged stretch, JSON escapes
included; ``joins`` then reads the decoded text of the flagged documents exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice, pairwise
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec import native

IntArray = NDArray[np.int64]

MIN_JOINS = 7
"""Joins a token needs to be read again: a run of 8 words, what the scan lists (``NOTABLE_RUN``)."""
MIN_MARKED = 4
"""... of them a capital after a lowercase letter or digit, or a U+180E."""
LOWER_SHARE = 0.42
"""... and at least this share of its characters in runs of two lowercase letters or more, a cheap
first test (camelCase GSM8K questions, test and train: 0.48 or more; base64 of 100 bytes or
more: 0.41 at most, of 600: about 0.33)."""
WORDLIKE = 0.8
"""The share of its pieces that must look like words (camelCase GSM8K questions: 0.89 or more;
random base64: 0.64 to 0.72)."""

_PUNCT = r"[!-/:-@\[-`{-~]*"
_JOIN = re.compile(
    rf"(?P<m>[a-z0-9]{_PUNCT}(?=[A-Z])|(?=\u180e))|[A-Za-z]{_PUNCT}(?=[0-9])|[A-Z](?=[A-Z][a-z])"
)
"""Each match ends where a join is (a space goes there); group ``m`` marks the distinctive ones."""
_MARKED = re.compile(rf"[a-z0-9]{_PUNCT}[A-Z]|\u180e")
_WORD = re.compile(r"[A-Z]?[a-z]+|[0-9]+[a-z]*|[AI]")
_LOWER_RUN = re.compile(r"[a-z]{2,}")
_LONG_TOKEN = re.compile(r"\S{12,}")
_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]+")

# Byte classes of ``candidates``.
_S, _LOW, _UP, _DIG, _P = 0, 1, 2, 3, 4
_CLASS = np.full(256, _P, dtype=np.uint8)
_CLASS[[ord(c) for c in " \t\n\r\x0b\x0c"]] = _S
_CLASS[ord("a") : ord("z") + 1] = _LOW
_CLASS[ord("A") : ord("Z") + 1] = _UP
_CLASS[ord("0") : ord("9") + 1] = _DIG
_SEPARATOR_BYTES = (0xE1, 0xA0, 0x8E)  # U+180E in UTF-8
_MAX_PUNCT = 16
MAX_GAP = 40
"""Characters between two joins of a glued token's run of ``MIN_JOINS`` (a word's length)."""
_MAX_GAP_BYTES = 12 * MAX_GAP + 12  # a character as a JSON surrogate pair: 12 bytes


def candidates(data: bytes | memoryview, kernels: ModuleType | None = None) -> IntArray:
    """Byte offsets in ``data`` (UTF-8, or JSON Lines) of a join in each whitespace-free stretch
    that may hold a glued token: a superset, to be read exactly (``joins``). The compiled kernels
    (``kernels``, by default ``native.module()``) find them in one pass over the bytes
    (``glued_candidates``: the scan calls this on every block, where whole-array numpy took longer
    than the prefilter itself); the numpy kernels, in numpy, with the same offsets."""
    kernels = native.module() if kernels is None else kernels
    if not hasattr(kernels, "glued_candidates"):
        return _numpy_candidates(data)
    found = kernels.glued_candidates(data, MIN_JOINS, _MAX_PUNCT, _MAX_GAP_BYTES)
    flagged: IntArray = np.frombuffer(found, dtype=np.int64)
    return flagged


def _numpy_candidates(data: bytes | memoryview) -> IntArray:
    """``candidates`` in whole-array numpy: over the bytes only to find the capitals, digits,
    spaces and U+180E; the rest works on those."""
    raw = np.frombuffer(data, dtype=np.uint8)
    none = np.zeros(0, dtype=np.int64)
    if raw.size < MIN_JOINS:
        return none
    # (byte - c) < n in uint8 arithmetic: c <= byte < c + n, without a table lookup per byte
    at = np.flatnonzero(((raw - np.uint8(65)) < 26) | ((raw - np.uint8(48)) < 10))
    at = at[at > 0]
    cls = _CLASS[raw[at]]
    before = _CLASS[raw[at - 1]]
    # The class of the last byte before each that is not punctuation, looked for up to
    # ``_MAX_PUNCT`` bytes back; a longer run of punctuation counts as a join (still a superset).
    back = np.flatnonzero(before == _P)
    for step in range(2, _MAX_PUNCT + 2):
        if back.size == 0:
            break
        where = at[back] - step
        found = np.full(back.size, _S, dtype=np.uint8)
        inside = where >= 0
        found[inside] = _CLASS[raw[where[inside]]]
        before[back] = found
        back = back[found == _P]
    before[back] = _LOW
    after = np.full(at.size, _S, dtype=np.uint8)
    inside = at + 1 < raw.size
    after[inside] = _CLASS[raw[at[inside] + 1]]
    join = ((cls == _UP) & ((before == _LOW) | (before == _DIG))) | (
        (cls == _DIG) & ((before == _LOW) | (before == _UP))
    )
    join |= (cls == _UP) & (_CLASS[raw[at - 1]] == _UP) & (after == _LOW)
    lead = np.flatnonzero(raw[:-2] == _SEPARATOR_BYTES[0])
    lead = lead[(raw[lead + 1] == _SEPARATOR_BYTES[1]) & (raw[lead + 2] == _SEPARATOR_BYTES[2])]
    joins = at[join] if lead.size == 0 else np.sort(np.concatenate([at[join], lead]))
    if joins.size < MIN_JOINS:
        return none
    # Runs of joins with no space between two of them and at most ``_MAX_GAP_BYTES`` bytes apart
    # (``MAX_GAP`` characters, JSON escapes included). A JSON escape ``\n``, ``\t`` or ``\r`` is a
    # space too (its backslash not escaped itself: else it is kept, which only flags more).
    space = (raw == 32) | ((raw - np.uint8(9)) < 5)  # " ", \t \n \v \f \r
    slash = raw == 92
    space[2:] |= slash[1:-1] & ~slash[:-2] & ((raw[2:] == 110) | (raw[2:] == 116) | (raw[2:] == 114))
    apart = np.logical_or.reduceat(space, joins)[:-1] | (np.diff(joins) > _MAX_GAP_BYTES)
    group = np.concatenate([[0], np.cumsum(apart)])
    counts = np.bincount(group)
    first = np.concatenate([[True], apart])
    flagged: IntArray = joins[first & (counts[group] >= MIN_JOINS)]
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
    for token in _LONG_TOKEN.finditer(text):
        word = token.group()
        # Two cheap tests first (one C-speed regex each): base64 fails the second.
        if (
            _lower_share(word) < LOWER_SHARE
            or sum(1 for _ in islice(_MARKED.finditer(word), MIN_MARKED)) < MIN_MARKED
        ):
            continue
        at = [m.end() for m in _JOIN.finditer(word)]
        if _longest_run(at) < MIN_JOINS:
            continue
        pieces = [_NOT_ALNUM.sub("", word[a:b]) for a, b in zip([0, *at], [*at, len(word)])]
        pieces = [p for p in pieces if p]
        if sum(_WORD.fullmatch(p) is not None for p in pieces) >= WORDLIKE * len(pieces):
            found += [token.start() + a for a in at]
    return found


def _longest_run(at: list[int]) -> int:
    """The most joins in a row each at most ``MAX_GAP`` characters after the one before."""
    longest = run = min(len(at), 1)
    for before, here in pairwise(at):
        run = run + 1 if here - before <= MAX_GAP else 1
        longest = max(longest, run)
    return longest


def _lower_share(word: str) -> float:
    """The share of its characters that lie in runs of two lowercase letters or more."""
    return sum(map(len, _LOWER_RUN.findall(word))) / len(word)


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
