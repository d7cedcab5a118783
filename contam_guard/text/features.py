"""From a batch of texts to hashed words, 5-grams and 50-character windows, vectorised.

A batch is joined into one string with a newline after each record (a newline is whitespace,
so no word crosses records), decoded to a numpy array of code points, and classified with
``normalise.TABLES``. Everything after that is whole-array numpy. Positions are kept so that a
match can be pointed at in the original text: each word knows the character offsets (in its
record) of its first and last kept character, each window those of its first and last
character.

Records with a code point whose lowercase form is not one code point, or depends on its
neighbours (Greek capital sigma), are rare; their words are computed by the reference
``normalise.words`` logic instead, so both paths give exactly the spec's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.text import normalise
from contam_guard.text.hashing import (
    GRAM_N,
    WINDOW_CHARS,
    HashArray,
    HashKey,
    hash_grams,
    hash_windows,
    hash_words,
)

IntArray = NDArray[np.int64]
_TOKEN = re.compile(r"\S+")  # re's \s is str.isspace(), the same split as str.split()


@dataclass(frozen=True)
class TextFeatures:
    """Hashes of a batch of records and where each hashed unit lies in its record.

    Word arrays are indexed by word (grouped by record, in order); ``record_words[r]`` is the
    index of record r's first word. ``gram_hash[p]`` hashes the 5 words starting at word p and
    is meaningful only where ``gram_valid[p]`` (the 5 words lie in one record). Window arrays
    are indexed by position in the alnum view, likewise with ``record_chars`` and
    ``window_valid``; they are empty when windows were not asked for.
    """

    n_records: int
    word_record: IntArray
    word_start: IntArray
    word_end: IntArray
    record_words: IntArray
    gram_hash: HashArray
    gram_valid: NDArray[np.bool_]
    char_record: IntArray
    char_offset: IntArray
    record_chars: IntArray
    window_hash: HashArray
    window_valid: NDArray[np.bool_]

    @property
    def word_counts(self) -> IntArray:
        return np.diff(self.record_words)

    @property
    def alnum_counts(self) -> IntArray:
        return np.diff(self.record_chars)


def extract_features(
    texts: Sequence[str], *, key: HashKey | None = None, windows: bool = True
) -> TextFeatures:
    """Normalise and hash ``texts`` (one record each)."""
    n = len(texts)
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=n)
    record_start = np.zeros(n, dtype=np.int64)
    if n:
        np.cumsum(lengths[:-1] + 1, out=record_start[1:])
    joined = "\n".join(texts) + "\n" if n else ""
    codepoints = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    codepoints = codepoints.astype(np.uint32, copy=False)
    normalise.TABLES.ensure(codepoints)
    classes = normalise.TABLES.cls[codepoints]

    words = _words_vectorised(codepoints, classes, record_start, lengths)
    special = np.flatnonzero(classes == normalise.SPECIAL)
    if special.size:
        special_records = np.unique(np.searchsorted(record_start, special, side="right") - 1)
        words = _merge(words, _words_reference(texts, special_records))
    word_record, word_start, word_end, word_hash = words

    gram_hash = hash_grams(word_hash)
    gram_valid = np.zeros(word_hash.size, dtype=np.bool_)
    if gram_hash.size:
        gram_valid[: gram_hash.size] = word_record[: gram_hash.size] == word_record[GRAM_N - 1 :]
        gram_hash = np.concatenate([gram_hash, np.zeros(GRAM_N - 1, dtype=np.uint64)])
    else:
        gram_hash = np.zeros(word_hash.size, dtype=np.uint64)
    if key is not None:
        gram_hash = key.apply(gram_hash)

    if windows:
        char_record, char_offset, window_hash, window_valid = _windows(codepoints, record_start, key)
    else:
        char_record = char_offset = np.zeros(0, dtype=np.int64)
        window_hash = np.zeros(0, dtype=np.uint64)
        window_valid = np.zeros(0, dtype=np.bool_)
    records = np.arange(n + 1)
    return TextFeatures(
        n_records=n,
        word_record=word_record,
        word_start=word_start,
        word_end=word_end,
        record_words=np.searchsorted(word_record, records).astype(np.int64),
        gram_hash=gram_hash,
        gram_valid=gram_valid,
        char_record=char_record,
        char_offset=char_offset,
        record_chars=np.searchsorted(char_record, records).astype(np.int64),
        window_hash=window_hash,
        window_valid=window_valid,
    )


_Words = tuple[IntArray, IntArray, IntArray, HashArray]


def _words_vectorised(
    codepoints: NDArray[np.uint32],
    classes: NDArray[np.uint8],
    record_start: IntArray,
    lengths: IntArray,
) -> _Words:
    keep = classes != normalise.REMOVED
    special = classes == normalise.SPECIAL
    if special.any():
        # Drop whole records holding a special code point; the reference path does them.
        owners = np.searchsorted(record_start, np.flatnonzero(special), side="right") - 1
        flagged = np.zeros(lengths.size, dtype=np.bool_)
        flagged[owners] = True
        keep &= ~np.repeat(flagged, lengths + 1)
    kept = np.flatnonzero(keep)
    if kept.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty.copy(), np.zeros(0, dtype=np.uint64)
    space = classes[kept] == normalise.SPACE
    letter = ~space
    before = np.concatenate([[True], space[:-1]])
    after = np.concatenate([space[1:], [True]])
    first = np.flatnonzero(letter & before)
    last = np.flatnonzero(letter & after)
    chars = normalise.TABLES.lower[codepoints[kept[letter]]]
    word_hash = hash_words(chars, (last - first + 1).astype(np.int64))
    start_abs = kept[first]
    end_abs = kept[last] + 1
    word_record = (np.searchsorted(record_start, start_abs, side="right") - 1).astype(np.int64)
    base = record_start[word_record]
    return word_record, start_abs - base, end_abs - base, word_hash


def _words_reference(texts: Sequence[str], records: IntArray) -> _Words:
    """The spec's words for a few records, with offsets, hashed like the vectorised path."""
    record_ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    word_texts: list[str] = []
    for record in records.tolist():
        for token in _TOKEN.finditer(texts[record]):
            kept = [i for i, ch in enumerate(token.group()) if not normalise._is_removed(ch)]
            if not kept:
                continue
            word = "".join(token.group()[i] for i in kept).lower()
            record_ids.append(record)
            starts.append(token.start() + kept[0])
            ends.append(token.start() + kept[-1] + 1)
            word_texts.append(word)
    chars = np.frombuffer("".join(word_texts).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    word_lengths = np.fromiter((len(w) for w in word_texts), dtype=np.int64, count=len(word_texts))
    return (
        np.asarray(record_ids, dtype=np.int64),
        np.asarray(starts, dtype=np.int64),
        np.asarray(ends, dtype=np.int64),
        hash_words(chars.astype(np.uint32), word_lengths),
    )


def _merge(a: _Words, b: _Words) -> _Words:
    merged = [np.concatenate([x, y]) for x, y in zip(a, b)]
    order = np.argsort(merged[0], kind="stable")
    return merged[0][order], merged[1][order], merged[2][order], merged[3][order]


def _windows(
    codepoints: NDArray[np.uint32], record_start: IntArray, key: HashKey | None
) -> tuple[IntArray, IntArray, HashArray, NDArray[np.bool_]]:
    positions = np.flatnonzero(normalise.TABLES.is_alnum[codepoints])
    char_record = (np.searchsorted(record_start, positions, side="right") - 1).astype(np.int64)
    char_offset = positions - record_start[char_record]
    window_hash = hash_windows(codepoints[positions])
    valid = np.zeros(positions.size, dtype=np.bool_)
    if window_hash.size:
        valid[: window_hash.size] = char_record[: window_hash.size] == char_record[WINDOW_CHARS - 1 :]
        window_hash = np.concatenate([window_hash, np.zeros(WINDOW_CHARS - 1, dtype=np.uint64)])
    else:
        window_hash = np.zeros(positions.size, dtype=np.uint64)
    if key is not None:
        window_hash = key.apply(window_hash)
    return char_record, char_offset, window_hash, valid
