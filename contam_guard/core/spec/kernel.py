"""The two passes that touch every character, compiled ahead of time (``csrc/native.c``).

Whole-array numpy needed about twenty passes over every character to find, normalise and hash
words, and memory traffic, not arithmetic, set the speed; these loops make one pass each. They
compute exactly what ``hashing.hash_words`` and ``hashing.hash_windows`` define (the tests
compare them with the spec's reference words on random Unicode), so the hashes in a manifest
do not depend on which path made them. They know no Unicode and no spec version: every
normalisation decision arrives in the per code point tables of ``core/spec/tables.py``.

The loops are C rather than a JIT: a JIT's import and first-call start-up cost more than a
whole pre-commit scan of a small file should take. Where the C module is not built (or
``CONTAM_GUARD_PURE=1``), ``native.module()`` gives the numpy kernels (``pure_kernels``) instead,
with the same results. The wrappers check dtypes, so that a caller's mistake names the array;
the kernels check everything again themselves (formats, lengths, offsets: ValueError or
TypeError, never a read or write out of bounds).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec import native
from contam_guard.core.spec.native import need

_native = native.module()


def count_tokens(codepoints: NDArray[np.uint32], classes: NDArray[np.uint8]) -> int:
    """How many maximal runs of non-space code points there are (an upper bound on words)."""
    return int(_native.count_tokens(need(codepoints, np.uint32), need(classes, np.uint8)))


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
    holding a SPECIAL code point are marked in ``flagged`` and produce no words here (the
    reference path does them). Records are separated in ``codepoints`` by a space code point.
    """
    return int(
        _native.words_pass(
            need(codepoints, np.uint32),
            need(classes, np.uint8),
            need(lower, np.uint32),
            need(record_start, np.int64),
            need(word_record, np.int64),
            need(word_start, np.int64),
            need(word_end, np.int64),
            need(word_hash, np.uint64),
            need(flagged, np.bool_),
        )
    )


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
    return int(
        _native.alnum_pass(
            need(codepoints, np.uint32),
            need(is_alnum, np.bool_),
            need(record_start, np.int64),
            need(alnum, np.uint32),
            need(record_chars, np.int64),
        )
    )


def markup_pass(
    codepoints: NDArray[np.uint32], record_start: NDArray[np.int64], out: NDArray[np.uint32]
) -> int:
    """Spec v4's step m (``core/spec/markup.py``) on each record: ``out`` receives ``codepoints``
    with each record's markup rewritten (the same length); returns how many code points changed.
    A record is ``codepoints[record_start[r]:record_start[r + 1]]``: markup never spans two."""
    return int(
        _native.markup_pass(need(codepoints, np.uint32), need(record_start, np.int64), need(out, np.uint32))
    )


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
    _native.windows_pass(
        need(alnum, np.uint32),
        need(record_chars, np.int64),
        need(window_hash, np.uint64),
        need(window_valid, np.bool_),
    )


def chain_runs(
    pair: NDArray[np.int64],
    i0: NDArray[np.int64],
    i1: NDArray[np.int64],
    j0: NDArray[np.int64],
    j1: NDArray[np.int64],
    by_end: NDArray[np.int64],
    params: NDArray[np.int64],
    start: NDArray[np.int64],
) -> None:
    """For each exact shared run (item words ``[i0, i1)``, record words ``[j0, j1)``, runs of one
    (item, record) ``pair`` together), write to ``start`` the first item word of the longest
    span ending with it that follows runs back through their cheapest predecessors while the
    links' cost fits a budget (``core.match.chains``). ``by_end`` orders the runs by (pair, i1);
    ``params``: the most one link costs, the budget's fixed part, its part per ``every`` words
    of span, ``every``, the most links followed."""
    _native.chain_runs(
        need(pair, np.int64),
        need(i0, np.int64),
        need(i1, np.int64),
        need(j0, np.int64),
        need(j1, np.int64),
        need(by_end, np.int64),
        need(params, np.int64),
        need(start, np.int64),
    )
