"""Compiled kernels for the two passes that touch every character (numba, cached on disk).

Whole-array numpy needed about twenty passes over every character to find, normalise and hash
words (classify, find spaces, find tokens, count punctuation, compress, lowercase, hash...), and
memory traffic, not arithmetic, set the speed. These loops make one pass each. They compute
exactly what ``hashing.hash_words`` and ``hashing.hash_windows`` define (the tests compare them
against the spec's reference words on random Unicode), so the hashes in a manifest do not
depend on which path made them.

``cache=True`` stores the machine code beside this module (or in ``NUMBA_CACHE_DIR``), so only
the first run on a machine pays the compilation (about a second).
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray

from contam_guard.text import normalise
from contam_guard.text.hashing import CHAR_BASE, LEN_MIX, WINDOW_CHARS

_SPACE = np.uint8(normalise.SPACE)
_REMOVED = np.uint8(normalise.REMOVED)
_SPECIAL = np.uint8(normalise.SPECIAL)


@numba.njit(cache=True, nogil=True, inline="always")
def _fmix64(x: np.uint64) -> np.uint64:
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


@numba.njit(cache=True, nogil=True)
def count_tokens(codepoints: NDArray[np.uint32], classes: NDArray[np.uint8]) -> int:
    """How many maximal runs of non-space code points there are (an upper bound on words)."""
    count = 0
    in_token = False
    for position in range(codepoints.size):
        space = classes[codepoints[position]] == _SPACE
        if not space and not in_token:
            count += 1
        in_token = not space
    return count


@numba.njit(cache=True, nogil=True)
def words_pass(
    codepoints: NDArray[np.uint32],
    classes: NDArray[np.uint8],
    lower: NDArray[np.uint32],
    record_start: NDArray[np.int64],
    word_record: NDArray[np.int64],
    word_start: NDArray[np.int64],
    word_end: NDArray[np.int64],
    word_hash: NDArray[np.uint64],
    flagged: NDArray[np.bool_],
) -> int:
    """Find, normalise and hash every word; returns the number of words written.

    Every code point must be classified already (``CodepointTables.classify_new``). Records
    holding a SPECIAL code point are marked in ``flagged`` and produce no
    words here (the reference path does them).
    """
    base = np.uint64(CHAR_BASE)
    length_mix = np.uint64(LEN_MIX)
    count = 0
    record = 0
    next_start = record_start[1]
    acc = np.uint64(0)
    power = np.uint64(1)
    length = 0
    first = -1
    last = -1
    position = 0
    size = codepoints.size
    while position < size:
        while position >= next_start:
            record += 1
            next_start = record_start[record + 1]
        char = codepoints[position]
        kind = classes[char]
        if kind == _SPACE:
            if length > 0:
                word_record[count] = record
                word_start[count] = first - record_start[record]
                word_end[count] = last + 1 - record_start[record]
                word_hash[count] = _fmix64(acc ^ (np.uint64(length) * length_mix))
                count += 1
            acc = np.uint64(0)
            power = np.uint64(1)
            length = 0
            first = -1
        elif kind == _SPECIAL:
            # Drop this record's words so far and skip to its end (its separator is a space).
            flagged[record] = True
            while count > 0 and word_record[count - 1] == record:
                count -= 1
            acc = np.uint64(0)
            power = np.uint64(1)
            length = 0
            first = -1
            position = next_start - 1
            continue
        elif kind != _REMOVED:
            acc += np.uint64(lower[char]) * power
            power *= base
            length += 1
            if first < 0:
                first = position
            last = position
        position += 1
    return count


@numba.njit(cache=True, nogil=True)
def alnum_pass(
    codepoints: NDArray[np.uint32],
    is_alnum: NDArray[np.bool_],
    record_start: NDArray[np.int64],
    alnum: NDArray[np.uint32],
    record_chars: NDArray[np.int64],
) -> int:
    """Copy each record's alnum view into ``alnum`` (records in order); returns its length.

    ``record_chars[r]`` receives the offset of record r's first alnum character.
    """
    written = 0
    for record in range(record_start.size - 1):
        record_chars[record] = written
        for position in range(record_start[record], record_start[record + 1]):
            char = codepoints[position]
            if is_alnum[char]:
                alnum[written] = char
                written += 1
    record_chars[record_start.size - 1] = written
    return written


@numba.njit(cache=True, nogil=True)
def windows_pass(
    alnum: NDArray[np.uint32],
    record_chars: NDArray[np.int64],
    window_hash: NDArray[np.uint64],
    window_valid: NDArray[np.bool_],
) -> None:
    """Hash every 50-character window lying inside one record, rolling: one pass.

    H(i) = sum(a[i + u] * B**u, u < 50); H(i + 1) = (H(i) - a[i]) / B + a[i + 50] * B**49,
    where dividing by B is multiplying by its inverse mod 2**64 (B is odd).
    """
    base = np.uint64(CHAR_BASE)
    top = np.uint64(1)
    for _ in range(WINDOW_CHARS - 1):
        top *= base
    inverse = base  # Newton's iteration: each step doubles the number of correct low bits
    for _ in range(6):
        inverse *= np.uint64(2) - base * inverse
    for record in range(record_chars.size - 1):
        start = record_chars[record]
        end = record_chars[record + 1]
        if end - start < WINDOW_CHARS:
            continue
        acc = np.uint64(0)
        weight = np.uint64(1)
        for u in range(WINDOW_CHARS):
            acc += np.uint64(alnum[start + u]) * weight
            weight *= base
        position = start
        while True:
            window_hash[position] = _fmix64(acc)
            window_valid[position] = True
            if position + WINDOW_CHARS >= end:
                break
            acc = (acc - np.uint64(alnum[position])) * inverse + np.uint64(
                alnum[position + WINDOW_CHARS]
            ) * top
            position += 1
