"""The rewording rules' word streams, computed from the word hashes the n-gram pass made.

The n-gram engine already normalises every string and hashes each of its words (spec
``cg-poly64-v1``: ``core.spec.hashing.hash_words``). Masking numbers (``numbers.py``) and taking
content features (``content.py``) are functions of the normalised word alone, so they are
computed once per *distinct* word and kept in a ``Vocabulary`` keyed by the word's hash; a
string's masked words and content features then follow from its word hashes by whole-array
lookups, with no second read, no second normalisation and no Python loop per word.

A feature is hashed as the word it spells (``core.reword.hashing.word_hashes``); the pair of a
number with the content word after it (``#16~egg``) is the word ``#16`` + ``~`` + ``egg``,
whose polynomial hash is assembled from its parts (a polynomial hash of a concatenation is the
first part's plus the second's shifted by the first's length), so pairs need no vocabulary.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.arrays import first_of_each, members, sorted_unique
from contam_guard.core.reword.content import ContentSpec, features_of, number_feature
from contam_guard.core.reword.numbers import PLACEHOLDER, mask_word
from contam_guard.core.spec.hashing import CHAR_BASE, LEN_MIX, fmix64, power_table
from contam_guard.core.spec.normalise import TextSpec

U64 = NDArray[np.uint64]
I64 = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
_ASCII_REMOVED = str.maketrans("", "", string.punctuation)


def _raws(words: Sequence[str]) -> tuple[U64, I64]:
    """Each word's polynomial before its length is mixed in (sum of c[u] * B**u mod 2**64) and
    its length, for all the words at once (an empty word: 0 and 0)."""
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    if lengths.size == 0 or not lengths.any():
        return np.zeros(lengths.size, dtype=np.uint64), lengths
    chars = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    position = np.arange(chars.size, dtype=np.int64) - np.repeat(starts, lengths)
    terms = chars.astype(np.uint64) * power_table(int(lengths.max()))[position]
    summed = np.zeros(chars.size + 1, dtype=np.uint64)
    np.cumsum(terms, out=summed[1:])
    return summed[ends] - summed[starts], lengths  # mod 2**64, as the kernels compute


def _finish(raw: U64, length: I64) -> U64:
    """Raw polynomials and lengths to word hashes (``hash_words``'s last step)."""
    return fmix64(raw ^ (length.astype(np.uint64) * np.uint64(LEN_MIX)))


@dataclass(frozen=True)
class Entries:
    """What each of some distinct words gives the rewording rules (one row per word)."""

    keys: U64
    """The word's hash (unkeyed): how the n-gram pass names it."""
    masked: U64
    """The hash of the word with its numbers masked (``numbers.mask_word``)."""
    number: BoolArray
    """The word is a number (masked to the placeholder ``#``)."""
    value_raw: U64
    value_len: I64
    """A number's value feature (``#16``) as a raw polynomial and length; length 0: none."""
    stem_raw: U64
    stem_len: I64
    """Another word's stem, likewise; length 0: a function word, too short, or a number."""
    inside_first: I64
    """``inside[inside_first[k]:inside_first[k + 1]]``: the numbers inside word k (``10foot``)."""
    inside: U64

    @classmethod
    def of(cls, words: Sequence[str], spec: ContentSpec) -> Entries:
        masked: list[str] = []
        number: list[bool] = []
        value: list[str] = []
        stem: list[str] = []
        inside_first: list[int] = [0]
        inside: list[str] = []
        for word in words:
            if word.isascii() and word.isdigit():
                # most distinct words of a numeric corpus are plain numbers: what
                # features_of and mask_word give them, without their caches' lookups
                masked.append(PLACEHOLDER)
                number.append(True)
                value.append(number_feature(word))
                stem.append("")
                inside_first.append(len(inside))
                continue
            is_number, value_feature, numbers_inside, word_stem = features_of(word)
            masked.append(mask_word(word))
            number.append(is_number)
            value.append(value_feature or "")
            stem.append(spec.cut(word_stem) if word_stem else "")
            inside += numbers_inside
            inside_first.append(len(inside))
        value_raw, value_len = _raws(value)
        stem_raw, stem_len = _raws(stem)
        return cls(
            keys=_hashes(list(words)),
            masked=_hashes(masked),
            number=np.array(number, dtype=np.bool_),
            value_raw=value_raw,
            value_len=value_len,
            stem_raw=stem_raw,
            stem_len=stem_len,
            inside_first=np.array(inside_first, dtype=np.int64),
            inside=_hashes(inside),
        )

    @property
    def value_hash(self) -> U64:
        return _finish(self.value_raw, self.value_len)

    @property
    def stem_hash(self) -> U64:
        return _finish(self.stem_raw, self.stem_len)


def word_hashes(words: Sequence[str]) -> U64:
    """The hash of each normalised word (unkeyed), as ``core.spec.hashing.hash_words`` makes it."""
    return _hashes(words)


def _hashes(words: Sequence[str]) -> U64:
    return _finish(*_raws(words))


class Vocabulary:
    """The distinct words met so far, sorted by hash, each with its ``Entries`` row under one
    content spec; grows as a scan meets new words (``add``). About 80 bytes per distinct word."""

    def __init__(self, spec: ContentSpec) -> None:
        self.spec = spec
        self.entries = Entries.of([], spec)

    def __len__(self) -> int:
        return int(self.entries.keys.size)

    def missing(self, hashes: U64) -> U64:
        """The distinct hashes among ``hashes`` that are not in the vocabulary yet."""
        distinct = sorted_unique(hashes)  # np.unique would import numpy.ma
        return distinct[~self._found(distinct)[1]]

    def add(self, words: Sequence[str]) -> None:
        """Add ``words`` (normalised; each new, or already present and then left as it is)."""
        new = Entries.of(sorted(set(words)), self.spec)
        keep = ~self._found(new.keys)[1]
        if not keep.any():
            return
        self.entries = _merged(self.entries, _rows(new, np.flatnonzero(keep)))

    def rows(self, hashes: U64) -> I64:
        """The entry of each hash (every one must be present: see ``missing``)."""
        where, found = self._found(hashes)
        if not bool(found.all()):
            raise KeyError("a word hash is not in the vocabulary")
        return where

    def _found(self, hashes: U64) -> tuple[I64, BoolArray]:
        keys = self.entries.keys
        if keys.size == 0:
            return np.zeros(hashes.size, np.int64), np.zeros(hashes.size, np.bool_)
        where = np.minimum(np.searchsorted(keys, hashes), keys.size - 1).astype(np.int64)
        return where, keys[where] == hashes


def _rows(e: Entries, rows: I64) -> Entries:
    counts = np.diff(e.inside_first)[rows]
    starts = e.inside_first[rows]
    gather = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))
    first = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    return Entries(
        e.keys[rows], e.masked[rows], e.number[rows], e.value_raw[rows], e.value_len[rows],
        e.stem_raw[rows], e.stem_len[rows], first, e.inside[gather],
    )  # fmt: skip


def _merged(a: Entries, b: Entries) -> Entries:
    """The rows of ``a`` and ``b`` (disjoint keys) sorted by key."""
    both = Entries(
        np.concatenate([a.keys, b.keys]),
        np.concatenate([a.masked, b.masked]),
        np.concatenate([a.number, b.number]),
        np.concatenate([a.value_raw, b.value_raw]),
        np.concatenate([a.value_len, b.value_len]),
        np.concatenate([a.stem_raw, b.stem_raw]),
        np.concatenate([a.stem_len, b.stem_len]),
        np.concatenate([a.inside_first, b.inside_first[1:] + a.inside_first[-1]]),
        np.concatenate([a.inside, b.inside]),
    )
    return _rows(both, np.argsort(both.keys, kind="stable"))


class WordSpans(Protocol):
    """Words of several texts: each one's hash (unkeyed) and span in its text; text t's words
    are ``record_words[t]:record_words[t + 1]`` (``core.spec.features.TextFeatures``)."""

    @property
    def word_hash(self) -> U64: ...
    @property
    def word_start(self) -> I64: ...
    @property
    def word_end(self) -> I64: ...
    @property
    def record_words(self) -> I64: ...


@dataclass(frozen=True)
class Stream:
    """Hashes of several units, concatenated: unit u's are ``hashes[first[u]:first[u + 1]]``."""

    hashes: U64
    first: I64


def masked_stream(vocab: Vocabulary, rows: I64, first: I64) -> Stream:
    """Each unit's words with numbers masked and consecutive numbers one ``#`` (``numbers.py``),
    as word hashes; ``rows``: the vocabulary row of each word, unit u's at ``first[u]:first[u+1]``."""
    e = vocab.entries
    number = e.number[rows]
    unit_start = np.zeros(rows.size, dtype=np.bool_)
    unit_start[first[:-1][first[:-1] < rows.size]] = True
    repeat = np.zeros(rows.size, dtype=np.bool_)
    repeat[1:] = number[1:] & number[:-1]
    keep = ~(repeat & ~unit_start)
    kept = np.concatenate([[0], np.cumsum(keep)])
    return Stream(e.masked[rows][keep], kept[first].astype(np.int64))


def content_stream(vocab: Vocabulary, rows: I64, first: I64) -> Stream:
    """Each unit's content features in order (``content.masked_and_content``'s second list under
    the vocabulary's spec), as unkeyed hashes: per number its value (and, ``words-v2``, the pair
    of the number with a value before it); per other word the numbers inside it, its stem, and
    the pair of the last number with it when no stem came in between."""
    e = vocab.entries
    unit = np.repeat(np.arange(first.size - 1, dtype=np.int64), np.diff(first))
    number = e.number[rows]
    value_len = e.value_len[rows]
    valued = number & (value_len > 0)
    stem_len = np.where(number, 0, e.stem_len[rows])
    inside_count = np.where(number, 0, np.diff(e.inside_first)[rows])
    has_stem = stem_len > 0
    # A stem pairs with the number before it when that number is the last event (a number, or a
    # stem) before it in its unit, and it has a value.
    pair, partner = _after(number | has_stem, has_stem, unit, valued)
    # words-v2: a number with a value pairs with the number with a value before it in its unit.
    number_pair, number_partner = _after(valued, valued, unit, valued)
    if not vocab.spec.number_pairs:
        number_pair[:] = False
    counts = np.where(number, valued.astype(np.int64) + number_pair, inside_count + has_stem + pair)
    offset = np.cumsum(counts) - counts
    out = np.zeros(int(counts.sum()), dtype=np.uint64)
    at = np.flatnonzero(valued)
    out[offset[at]] = e.value_hash[rows[at]]
    at = np.flatnonzero(number_pair)
    if at.size:
        out[offset[at] + 1] = _joined(
            e, rows[number_partner[at]], ">", e.value_raw[rows[at]], e.value_len[rows[at]]
        )
    holders = np.flatnonzero(inside_count > 0)
    if holders.size:
        c = inside_count[holders]
        k = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
        source = np.repeat(e.inside_first[rows[holders]], c) + k
        out[np.repeat(offset[holders], c) + k] = e.inside[source]
    stemmed = np.flatnonzero(has_stem)
    out[offset[stemmed] + inside_count[stemmed]] = e.stem_hash[rows[stemmed]]
    at = np.flatnonzero(pair)
    if at.size:
        out[offset[at] + inside_count[at] + 1] = _joined(
            e, rows[partner[at]], "~", e.stem_raw[rows[at]], e.stem_len[rows[at]]
        )
    ends = np.concatenate([[0], np.cumsum(counts)])
    return Stream(out, ends[first].astype(np.int64))


def _after(event: BoolArray, wanted: BoolArray, unit: I64, partner_ok: BoolArray) -> tuple[BoolArray, I64]:
    """For each ``wanted`` position: whether the event before it in its unit (among ``event``
    positions) is one with ``partner_ok``, and that position (-1: none)."""
    pair = np.zeros(unit.size, dtype=np.bool_)
    partner = np.full(unit.size, -1, dtype=np.int64)
    events = np.flatnonzero(event)
    chosen = np.flatnonzero(wanted[events])
    chosen = chosen[chosen > 0]
    if chosen.size:
        p, q = events[chosen], events[chosen - 1]
        ok = (unit[p] == unit[q]) & partner_ok[q]
        pair[p[ok]] = True
        partner[p[ok]] = q[ok]
    return pair, partner


def _joined(e: Entries, firsts: I64, mark: str, raw: U64, length: I64) -> U64:
    """The hash of the word ``#N`` + ``mark`` + second (a stem, or another ``#M``) for each
    number row of ``firsts`` and second given as raw polynomial and length."""
    value_len = e.value_len[firsts]
    powers = power_table(int(value_len.max()) + 2)
    tail = np.uint64(ord(mark)) + np.uint64(CHAR_BASE) * raw
    return _finish(e.value_raw[firsts] + powers[value_len] * tail, value_len + 1 + length)


def spell(texts: Sequence[str], words: WordSpans, wanted: U64, spec: TextSpec) -> list[str]:
    """The normalised words whose hashes are ``wanted`` (each found among ``words``, the words of
    ``texts``): each read off its span in its text (an ASCII span is the word once punctuation
    is dropped and letters lowered, as in every spec), or for the rare word whose span
    normalises to something else on its own, off the whole text's words."""
    at = np.flatnonzero(members(words.word_hash, wanted))
    hashes, first = first_of_each(words.word_hash[at])
    at = at[first]
    unit = np.searchsorted(words.record_words, at, side="right") - 1
    spans = [
        texts[u][s:e]
        for u, s, e in zip(unit.tolist(), words.word_start[at].tolist(), words.word_end[at].tolist())
    ]
    found = [
        span.translate(_ASCII_REMOVED).lower() if span.isascii() else _one(spec.words(span)) for span in spans
    ]
    wrong = np.flatnonzero(_hashes(found) != hashes)
    for k in wrong.tolist():  # NFKC, case folding or markup (spec 4) that reached past the span
        h = int(hashes[k])
        whole = spec.words(texts[int(unit[k])])
        found[k] = next((w for w, wh in zip(whole, _hashes(whole).tolist()) if wh == h), "")
    return [word for word in found if word]


def _one(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ""
