"""From a batch of texts to hashed words, 5-grams and 50-character windows, vectorised.

A batch is joined into one string with a newline after each record (a newline is whitespace,
so no word crosses records), decoded to a numpy array of code points, and classified with the
spec's code point tables (``core/spec/tables.py``). Everything after that is compiled or whole-array
numpy, arranged so that only a few passes touch every character.

Positions are kept so that a match can be pointed at in the original text: each word knows the
character offsets (in its record) of its first and last kept character; each alnum character
its offset (computed on demand: only reviews and scrubs need it).

Spec v4 first rewrites the batch's markup (step m, ``kernel.markup_pass``): the same number of
code points, each where it was, so every offset below is one in the original text.

Records holding a SPECIAL code point (one whose words are not one code point's business: a
lowercase of several code points, a context-dependent case, in version 2 NFKC or case folding
to several code points or joining it to its neighbour) are rare; their words, and in version 2
their alnum view, are computed by the reference path (``located.py``) instead, so both paths
give exactly the spec's words and alnum view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec import kernel, located
from contam_guard.core.spec.hashing import GRAM_N, HashArray, HashKey, hash_grams, hash_words
from contam_guard.core.spec.normalise import CURRENT, TextSpec
from contam_guard.core.spec.tables import CodepointTables, tables_for

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
_G = TypeVar("_G", bound=np.generic)


@dataclass(frozen=True)
class _AlnumFix:
    """Where the alnum view of flagged records (version 2) came from: the kernel's per-record
    offsets before the fix, and each flagged record's reference offsets."""

    raw_chars: IntArray
    records: IntArray
    offsets: list[IntArray]


class TextFeatures:
    """Hashes of a batch of records and where each hashed unit lies in its record.

    Word arrays are indexed by word (grouped by record, in order); ``record_words[r]`` is the
    index of record r's first word. ``gram_hash[p]`` hashes the 5 words starting at word p and
    is meaningful only where ``gram_valid[p]`` (the 5 words lie in one record). Window arrays
    are indexed by position in the alnum view, likewise with ``record_chars`` and
    ``window_valid``; they are empty when windows were not asked for.
    """

    def __init__(
        self,
        *,
        n_records: int,
        record_words: IntArray,
        word_start: IntArray,
        word_end: IntArray,
        gram_hash: HashArray,
        gram_valid: BoolArray,
        record_chars: IntArray,
        window_hash: HashArray,
        window_valid: BoolArray,
        alnum_positions: IntArray | None = None,
        codepoints: NDArray[np.uint32] | None = None,
        record_start: IntArray | None = None,
        tables: CodepointTables | None = None,
        alnum_fix: _AlnumFix | None = None,
        word_hash: HashArray | None = None,
    ) -> None:
        self.n_records = n_records
        self.word_hash = np.zeros(0, dtype=np.uint64) if word_hash is None else word_hash
        """Each word's hash, unkeyed (what the rewording rules' vocabulary is keyed by)."""
        self.record_words = record_words
        self.word_start = word_start
        self.word_end = word_end
        self.gram_hash = gram_hash
        self.gram_valid = gram_valid
        self.record_chars = record_chars
        self.window_hash = window_hash
        self.window_valid = window_valid
        self._alnum_positions = alnum_positions
        self._codepoints = codepoints
        self._record_start = record_start
        self._tables = tables
        self._alnum_fix = alnum_fix

    @property
    def word_counts(self) -> IntArray:
        return np.diff(self.record_words)

    @property
    def alnum_counts(self) -> IntArray:
        return np.diff(self.record_chars)

    @cached_property
    def word_record(self) -> IntArray:
        """The record of each word."""
        return np.repeat(np.arange(self.n_records, dtype=np.int64), self.word_counts)

    @cached_property
    def char_record(self) -> IntArray:
        """The record of each character of the alnum view."""
        return np.repeat(np.arange(self.n_records, dtype=np.int64), self.alnum_counts)

    @cached_property
    def char_offset(self) -> IntArray:
        """Offset in its record of each alnum-view character (computed on first use)."""
        if self._alnum_positions is not None:
            return self._alnum_positions
        if self._codepoints is None or self._record_start is None or self._tables is None:
            return np.zeros(int(self.record_chars[-1]) if self.record_chars.size else 0, dtype=np.int64)
        fix = self._alnum_fix
        raw_chars = self.record_chars if fix is None else fix.raw_chars
        raw_record = np.repeat(np.arange(self.n_records, dtype=np.int64), np.diff(raw_chars))
        offsets = np.flatnonzero(self._tables.is_alnum[self._codepoints]) - self._record_start[raw_record]
        if fix is not None:
            offsets, _ = _splice(offsets, raw_chars, fix.records, fix.offsets)
        return offsets


@dataclass(frozen=True)
class Words:
    """The hashed, unkeyed normalised words of a batch of records: ``hashes[w]`` and its span
    ``start[w]``..``end[w]`` (characters in its record); ``record_words[r]`` is the index of
    record r's first word (one more entry). What the other passes need of the batch comes along:
    its code points, where each record starts in them, the spec's tables, and the records the
    reference path did (``special``, with their ``parts`` in versions 2 and up)."""

    hashes: HashArray
    start: IntArray
    end: IntArray
    record_words: IntArray
    codepoints: NDArray[np.uint32]
    record_start: IntArray
    tables: CodepointTables
    special: IntArray
    parts: list[list[located.Piece]] | None


def words_of(texts: Sequence[str], spec: TextSpec = CURRENT) -> Words:
    """The words of ``texts`` (one record each) under ``spec``: the compiled pass for most
    records, the reference path for the flagged ones, merged in record order."""
    tables = tables_for(spec)
    n = len(texts)
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=n)
    record_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths + 1, out=record_start[1:])
    joined = "\n".join(texts) + "\n" if n else ""
    codepoints = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    codepoints = codepoints.astype(np.uint32, copy=False)
    if spec.version >= 4:  # step m: markup rewritten in place of the same length (new code points)
        rewritten = np.empty_like(codepoints)
        kernel.markup_pass(codepoints, record_start, rewritten)
        codepoints = rewritten

    record, start, end, hashes, flagged = _words(codepoints, record_start, tables)
    special = np.flatnonzero(flagged)
    parts = [located.pieces(texts[r], spec) for r in special.tolist()] if spec.version >= 2 else None
    if special.size:
        reference = _words_reference(texts, special, spec, parts)
        record, start, end, hashes = _merge((record, start, end, hashes), reference)
    record_words = np.searchsorted(record, np.arange(n + 1)).astype(np.int64)
    return Words(hashes, start, end, record_words, codepoints, record_start, tables, special, parts)


def extract_features(
    texts: Sequence[str], *, key: HashKey | None = None, windows: bool = True, spec: TextSpec = CURRENT
) -> TextFeatures:
    """Normalise ``texts`` (one record each) under ``spec`` and hash them."""
    found = words_of(texts, spec)
    n, tables, codepoints, record_start = len(texts), found.tables, found.codepoints, found.record_start
    special, parts = found.special, found.parts
    record_words, word_start, word_end, word_hash = found.record_words, found.start, found.end, found.hashes

    gram_hash = np.zeros(word_hash.size, dtype=np.uint64)
    grams = hash_grams(word_hash)
    gram_hash[: grams.size] = grams
    if key is not None:
        gram_hash = key.apply(gram_hash)
    gram_valid = _valid_starts(record_words, word_hash.size, GRAM_N)

    record_chars = np.zeros(n + 1, dtype=np.int64)
    fix = None
    if windows:
        alnum, record_chars, fix = _alnum(texts, codepoints, record_start, tables, special, spec, parts)
        window_hash = np.zeros(alnum.size, dtype=np.uint64)
        window_valid = np.zeros(alnum.size, dtype=np.bool_)
        kernel.windows_pass(alnum, record_chars, window_hash, window_valid)
        if key is not None:
            window_hash = key.apply(window_hash)
    else:
        window_hash = np.zeros(0, dtype=np.uint64)
        window_valid = np.zeros(0, dtype=np.bool_)
    return TextFeatures(
        n_records=n,
        record_words=record_words,
        word_start=word_start,
        word_end=word_end,
        gram_hash=gram_hash,
        gram_valid=gram_valid,
        record_chars=record_chars,
        window_hash=window_hash,
        window_valid=window_valid,
        codepoints=codepoints if windows else None,
        record_start=record_start,
        tables=tables,
        alnum_fix=fix,
        word_hash=word_hash,
    )


def _alnum(
    texts: Sequence[str],
    codepoints: NDArray[np.uint32],
    record_start: IntArray,
    tables: CodepointTables,
    special: IntArray,
    spec: TextSpec,
    parts: list[list[located.Piece]] | None,
) -> tuple[NDArray[np.uint32], IntArray, _AlnumFix | None]:
    """The alnum view of every record, and where it is each record's (``record_chars``)."""
    record_chars = np.zeros(record_start.size, dtype=np.int64)
    alnum = np.empty(codepoints.size, dtype=np.uint32)
    total = kernel.alnum_pass(codepoints, tables.is_alnum, record_start, alnum, record_chars)
    alnum = alnum[:total]
    # Spec v2: a code point may give the view another one (fullwidth "Ａ" gives "A"). Such code
    # points are rare and none lies below ``first_alnum_remap``: map only the ones at or above.
    remap = np.flatnonzero(alnum >= tables.first_alnum_remap)
    if remap.size:
        alnum[remap] = tables.alnum_char[alnum[remap]]
    if parts is None or special.size == 0:
        return alnum, record_chars, None  # version 1's view is exact per code point, SPECIAL or not
    views = [located.alnum(texts[r], spec, part) for r, part in zip(special.tolist(), parts)]
    chars = [np.frombuffer(view.encode("utf-32-le", "surrogatepass"), dtype="<u4") for view, _ in views]
    fixed, fixed_chars = _splice(alnum, record_chars, special, chars)
    offsets = [np.asarray(where, dtype=np.int64) for _, where in views]
    return fixed.astype(np.uint32, copy=False), fixed_chars, _AlnumFix(record_chars, special, offsets)


def _splice(
    values: NDArray[_G], bounds: IntArray, records: IntArray, parts: Sequence[NDArray[_G]]
) -> tuple[NDArray[_G], IntArray]:
    """Replace the segments of ``records`` (sorted) in ``values`` (record r's values are
    ``values[bounds[r]:bounds[r + 1]]``) by ``parts``; returns the new values and bounds."""
    counts = np.diff(bounds)
    counts[records] = [part.size for part in parts]
    new_bounds = np.zeros(bounds.size, dtype=np.int64)
    np.cumsum(counts, out=new_bounds[1:])
    runs, done = [], 0
    for record, part in zip(records.tolist(), parts):  # a few slices: copies at memory speed
        runs += [values[done : bounds[record]], part]
        done = int(bounds[record + 1])
    runs.append(values[done:])
    return np.concatenate(runs).astype(values.dtype, copy=False), new_bounds


def _valid_starts(offsets: IntArray, total: int, width: int) -> BoolArray:
    """True at each position whose ``width`` units all lie inside one group (record)."""
    valid = np.ones(total, dtype=np.bool_)
    tail = np.minimum(np.diff(offsets), width - 1)
    # The last ``width - 1`` positions of each group start a span that runs past its end.
    starts = np.repeat(offsets[1:] - tail, tail)
    valid[starts + np.arange(starts.size) - np.repeat(np.cumsum(tail) - tail, tail)] = False
    return valid


_Words = tuple[IntArray, IntArray, IntArray, HashArray]


def _words(
    codepoints: NDArray[np.uint32], record_start: IntArray, tables: CodepointTables
) -> tuple[IntArray, IntArray, IntArray, HashArray, BoolArray]:
    """Words of every record but the flagged ones (records the reference path must do)."""
    tables.classify_new(codepoints)
    capacity = kernel.count_tokens(codepoints, tables.cls)  # exact sizes: a 100 MB line is fine
    record = np.empty(capacity, dtype=np.int64)
    start = np.empty(capacity, dtype=np.int64)
    end = np.empty(capacity, dtype=np.int64)
    hashes = np.empty(capacity, dtype=np.uint64)
    flagged = np.zeros(record_start.size - 1, dtype=np.bool_)
    count = kernel.words_pass(
        codepoints, tables.cls, tables.lower, record_start, record, start, end, hashes, flagged
    )
    if count < capacity:  # tokens of punctuation alone, or flagged records, made no word
        record, start, end, hashes = record[:count], start[:count], end[:count], hashes[:count]
    return record, start, end, hashes, flagged


def _words_reference(
    texts: Sequence[str], records: IntArray, spec: TextSpec, parts: list[list[located.Piece]] | None
) -> _Words:
    """The spec's words for a few records, with offsets, hashed like the vectorised path."""
    record_ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    word_texts: list[str] = []
    for number, record in enumerate(records.tolist()):
        part = parts[number] if parts is not None else None
        for word, start, end in located.words(texts[record], spec, part):
            record_ids.append(record)
            starts.append(start)
            ends.append(end)
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
    """The words of ``a`` with those of ``b`` (records ``a`` has no word of) put in record order;
    both are in record order already, so one insertion, no sort."""
    # Cut ``a`` where ``b``'s records go: a few slices, joined with ``b``'s runs in between.
    cuts, first = np.unique(np.searchsorted(a[0], b[0]), return_index=True)
    a_bounds, b_bounds = [0, *cuts.tolist(), a[0].size], [0, *first.tolist()[1:], b[0].size]

    def join(x: NDArray[_G], y: NDArray[_G]) -> NDArray[_G]:
        runs = [x[a_bounds[0] : a_bounds[1]]]
        for k in range(1, len(a_bounds) - 1):
            runs += [y[b_bounds[k - 1] : b_bounds[k]], x[a_bounds[k] : a_bounds[k + 1]]]
        return np.concatenate(runs)

    return join(a[0], b[0]), join(a[1], b[1]), join(a[2], b[2]), join(a[3], b[3])
