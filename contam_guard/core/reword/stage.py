"""The rewording rules' work on a batch of units, from the word hashes the n-gram pass made.

Two implementations give the same numbers, bit for bit (tests/reword/test_stage.py):

- ``CompiledStage``: the compiled kernel (``csrc/reword.c``, ``_native.RewordPass``), one loop
  per unit over its words: masks numbers and looks the masked 5-grams up, takes the content
  features and scores each window against every item through the prefix filter;
- ``NumpyStage``: whole-array numpy over the same streams (``core.reword.vocab``) and the rule's
  own scorer (``core.reword.matching``): what runs with the numpy kernels, and for a small batch,
  which it scores without decoding whole views (``matching.Scorer``'s direct path).

Both keep a vocabulary of the distinct words met (``missing``, ``add``): the caller spells the
new ones (the normalised word of each hash), so that only new words are ever masked or stemmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.reword.index import RewordIndex, TargetWords
from contam_guard.core.reword.matching import (
    RECORD_SHARE,
    SLACK,
    Prefixes,
    Scorer,
    best_per_pair,
    reworded_scores,
    windows,
)
from contam_guard.core.reword.vocab import Entries, Vocabulary, content_stream, masked_stream
from contam_guard.core.reword.weights import idf
from contam_guard.core.spec import native
from contam_guard.core.spec.hashing import GRAM_N, HashKey, hash_grams
from contam_guard.core.thread_pool import Threads

U64 = NDArray[np.uint64]
U8 = NDArray[np.uint8]
I64 = NDArray[np.int64]
I32 = NDArray[np.int32]
F64 = NDArray[np.float64]

PROSE = 0
"""The targets prose units score against: every content view (``FIELD~words-v2``)."""
CODE = 1
"""The targets docstring units score against: the code views (``FIELD~code-v1``)."""


@dataclass(frozen=True)
class StageResult:
    """What a batch of units gave: every masked 5-gram found (unit, position, posting: the
    numbers rule's hits) and the best reworded score of every (unit, item) at or over the floor."""

    gram_unit: I64
    gram_at: I64
    gram_posting: I64
    pair_unit: I64
    pair_item: I64
    pair_score: F64


_NO_INTS = np.zeros(0, dtype=np.int64)
EMPTY = StageResult(_NO_INTS, _NO_INTS, _NO_INTS, _NO_INTS, _NO_INTS, np.zeros(0, dtype=np.float64))


class Stage(Protocol):
    numbers: bool
    floor: float | None

    @property
    def kernel(self) -> object:
        """The compiled pass (whose vocabulary the prefilter reads), or None."""
        ...

    def missing(self, word_hashes: U64) -> U64: ...
    def add(self, words: Sequence[str]) -> None: ...
    def run(
        self,
        word_hashes: U64,
        unit_first: I64,
        *,
        numbers: bool | None = None,
        reworded: bool | None = None,
        breaks: U8 | None = None,
        kind: int = PROSE,
        rows: I32 | None = None,
    ) -> StageResult: ...


class NumpyStage:
    """The stage in numpy (see the module's docstring)."""

    def __init__(
        self, index: RewordIndex, key: HashKey | None, *, numbers: bool, floor: float | None
    ) -> None:
        """``numbers``: find masked 5-grams; ``floor``: score pairs down to it (None: no scores)."""
        self.index = index
        self.key = key
        self.numbers = numbers
        self.floor = floor
        self.vocab = Vocabulary(index.content)
        self.scorers: dict[int, list[Scorer]] = {PROSE: [], CODE: []}
        if floor is not None:
            self.scorers = {
                PROSE: [Scorer(target, floor) for target in index.words],
                CODE: [Scorer(target, floor) for target in index.code],
            }

    @property
    def kernel(self) -> object:
        return None

    def missing(self, word_hashes: U64) -> U64:
        return self.vocab.missing(word_hashes)

    def add(self, words: Sequence[str]) -> None:
        self.vocab.add(words)

    def run(
        self,
        word_hashes: U64,
        unit_first: I64,
        *,
        numbers: bool | None = None,
        reworded: bool | None = None,
        breaks: U8 | None = None,
        kind: int = PROSE,
        rows: I32 | None = None,
    ) -> StageResult:
        """The masked 5-grams found (``numbers``, default: if the stage finds them) and the
        pairs scored (``reworded``, default: if it scores them) of the units of ``word_hashes``
        against the targets of ``kind``. ``breaks`` (a flag per word): the words that begin a
        line; each line of a unit of several is scored as a unit too, the unit's best kept.
        ``rows`` (the compiled pass's vocabulary rows) are not this stage's: it looks words up
        in its own vocabulary."""
        own = self.vocab.rows(word_hashes)
        gram = _NO_INTS, _NO_INTS, _NO_INTS
        if self.numbers and numbers is not False:
            gram = self._gram_hits(masked_stream(self.vocab, own, unit_first))
        pairs = _NO_INTS, _NO_INTS, np.zeros(0, dtype=np.float64)
        scorers = self.scorers[kind]
        if scorers and reworded is not False:
            unit, item, score = self._scores(content_stream(self.vocab, own, unit_first), scorers)
            if breaks is not None:
                words, line_first, owner = line_units(unit_first, breaks)
                if owner.size:
                    more = self._scores(content_stream(self.vocab, own[words], line_first), scorers)
                    unit = np.concatenate([unit, owner[more[0]]])
                    item = np.concatenate([item, more[1]])
                    score = np.concatenate([score, more[2]])
                    unit, item, score = best_per_pair(unit, item, score, self.index.items)
            pairs = unit, item, score
        return StageResult(*gram, *pairs)

    def _gram_hits(self, stream: object) -> tuple[I64, I64, I64]:
        hashes, first = stream.hashes, stream.first  # type: ignore[attr-defined]
        units = first.size - 1
        grams = hash_grams(hashes)
        unit = np.repeat(np.arange(units, dtype=np.int64), np.diff(first))[: grams.size]
        at = np.arange(grams.size, dtype=np.int64) - first[unit]
        valid = at + GRAM_N <= first[unit + 1] - first[unit]
        if self.key is not None and grams.size:
            grams = self.key.apply(grams)
        query, posting = self.index.grams.lookup(grams, valid)
        return unit[query], at[query], posting

    def _scores(self, stream: object, scorers: list[Scorer]) -> tuple[I64, I64, F64]:
        hashes, first = stream.hashes, stream.first  # type: ignore[attr-defined]
        if self.key is not None and hashes.size:
            hashes = self.key.apply(hashes)
        owner, start, end = windows(np.diff(first))
        features, window_first = _distinct_per_window(hashes, first[owner] + start, first[owner] + end)
        window, item, score = reworded_scores(features, window_first, scorers)
        if window.size == 0:
            return _NO_INTS, _NO_INTS, np.zeros(0, dtype=np.float64)
        unit, item, best = best_per_pair(owner[window], item, score, self.index.items)
        return unit, item, best


def line_units(unit_first: I64, breaks: U8) -> tuple[I64, I64, I64]:
    """The extra units of the units that hold more than one line (a line: from a word that
    begins one, or its unit's first word, to the next such): each line, and the unit without its
    first line (a question's choices after its stem). Returns the words they hold (indices, one
    extra unit after another), where each begins among those, and each one's unit."""
    words = int(unit_first[-1])
    start = breaks[:words] != 0
    begins = unit_first[:-1][np.diff(unit_first) > 0]
    start[begins] = True
    at = np.flatnonzero(start)
    unit = np.searchsorted(unit_first, at, side="right") - 1
    keep = np.bincount(unit, minlength=unit_first.size - 1)[unit] > 1
    length = np.diff(np.append(at, words))
    seconds = np.flatnonzero(keep & _first_after_start(at, unit, unit_first))
    begin = np.concatenate([at[keep], at[seconds]])
    length = np.concatenate([length[keep], unit_first[unit[seconds] + 1] - at[seconds]])
    owner = np.concatenate([unit[keep], unit[seconds]]).astype(np.int64)
    first = np.zeros(length.size + 1, dtype=np.int64)
    np.cumsum(length, out=first[1:])
    index = (
        np.repeat(begin, length) + np.arange(int(first[-1]), dtype=np.int64) - np.repeat(first[:-1], length)
    )
    return index.astype(np.int64), first, owner


def _first_after_start(at: I64, unit: I64, unit_first: I64) -> NDArray[np.bool_]:
    """Per line start: whether it is its unit's second line."""
    out = np.zeros(at.size, dtype=np.bool_)
    out[1:] = (unit[1:] == unit[:-1]) & (at[:-1] == unit_first[unit[:-1]])
    return out


def _distinct_per_window(hashes: U64, start: I64, end: I64) -> tuple[U64, I64]:
    """Each window's distinct hashes, sorted, concatenated; and where each window's begin."""
    counts = end - start
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    at = np.repeat(start - (np.cumsum(counts) - counts), counts) + np.arange(
        int(counts.sum()), dtype=np.int64
    )
    values = hashes[at]
    order = np.lexsort((values, owner))
    values, owner = values[order], owner[order]
    keep = np.ones(values.size, dtype=np.bool_)
    keep[1:] = (values[1:] != values[:-1]) | (owner[1:] != owner[:-1])
    values, owner = values[keep], owner[keep]
    return values, np.searchsorted(owner, np.arange(counts.size + 1)).astype(np.int64)


class CompiledStage:
    """The stage in the compiled kernel (see the module's docstring)."""

    def __init__(
        self,
        index: RewordIndex,
        key: HashKey | None,
        *,
        numbers: bool,
        floor: float | None,
        threads: Threads | None = None,
    ) -> None:
        """``threads``: how many threads a large ``run`` may use (``thread_cuts``; default 1)."""
        self.index = index
        self.numbers = numbers
        self.floor = floor
        self.threads = Threads() if threads is None else threads
        kernel_key = np.zeros(0, dtype=np.uint64) if key is None else key.kernel_key
        self.content = index.content
        self._pass = native.module().RewordPass(kernel_key, index.content.number_pairs)
        if numbers:
            grams = index.grams
            self._pass.set_grams(grams.hashes, grams.slots, grams.chain, grams.bits)
        if floor is not None:
            for kind, targets in ((PROSE, index.words), (CODE, index.code)):
                for target in targets:
                    self._add_target(target, floor, kind)

    def _add_target(self, target: TargetWords, floor: float, kind: int) -> None:
        if target.items == 0 or target.entries == 0:
            return
        p = Prefixes.of(target, floor)
        self._pass.add_target(
            target.distinct,
            idf(target.items, target.df),
            p.starts,
            p.item,
            p.weight,
            p.rest,
            np.ascontiguousarray(target.item_weight, dtype=np.float64),
            p.keys,
            target.first_item,
            float(idf(target.items, np.array([0.5]))[0]),
            floor,
            floor * (1 - SLACK),
            RECORD_SHARE,
            kind,
        )
        target.let_go()  # the pass holds what it reads (the prefixes, the distinct features)

    @property
    def kernel(self) -> object:
        return self._pass

    def missing(self, word_hashes: U64) -> U64:
        return np.frombuffer(self._pass.missing(native.need(word_hashes, np.uint64)), dtype=np.uint64)

    def add(self, words: Sequence[str]) -> None:
        e = Entries.of(sorted(set(words)), self.content)
        self._pass.add_words(
            e.keys, e.masked, e.number.view(np.uint8), e.value_raw, e.value_len,
            e.stem_raw, e.stem_len, e.inside_first, e.inside,
        )  # fmt: skip

    def run(
        self,
        word_hashes: U64,
        unit_first: I64,
        *,
        numbers: bool | None = None,
        reworded: bool | None = None,
        breaks: U8 | None = None,
        kind: int = PROSE,
        rows: I32 | None = None,
    ) -> StageResult:
        """As ``NumpyStage.run``; ``rows``: each word's row in this pass's vocabulary where the
        prefilter found it (-1: looked up here), so that a word is looked up once. A batch of at
        least ``SPLIT_WORDS`` words is cut into ``threads`` runs of consecutive units, run at once
        (the kernel reads the pass without the GIL) and joined in unit order: the same result."""
        hashes = native.need(word_hashes, np.uint64)
        first = native.need(unit_first, np.int64)
        if first.size == 0 or int(first[0]) != 0 or int(first[-1]) != hashes.size:
            raise ValueError("run: unit_first must run from 0 to the number of word hashes")
        flags = (self.numbers and numbers is not False, self.floor is not None and reworded is not False)
        lines = None if breaks is None else native.need(breaks, np.uint8)
        known = None if rows is None else native.need(rows, np.int32)
        cuts = thread_cuts(first, self.threads.count)

        def part(a: int, b: int) -> tuple[bytes, bytes]:
            lo, hi = int(first[a]), int(first[b])
            return self._pass.run(  # type: ignore[no-any-return]
                hashes[lo:hi],
                first[a : b + 1] - lo,
                *flags,
                None if lines is None else lines[lo:hi],
                kind,
                None if known is None else known[lo:hi],
            )

        (here, *elsewhere) = pairwise(cuts)
        others = [self.threads.pool().submit(part, a, b) for a, b in elsewhere]
        parts = [part(*here)] + [f.result() for f in others]
        return _result(parts, cuts[:-1])


SPLIT_WORDS = 1 << 16
"""The fewest words a batch must hold for ``CompiledStage.run`` to cut it between threads (about
400 KB of prose: a commit's few records stay on one thread; a choice, not a measured break-even)."""


def thread_cuts(unit_first: I64, threads: int) -> list[int]:
    """Where to cut units ``unit_first`` between ``threads`` runs: unit numbers from 0 to the
    number of units, each run holding about as many words (only one run for a small batch)."""
    units, words = unit_first.size - 1, int(unit_first[-1])
    if threads < 2 or words < SPLIT_WORDS or units < 2:
        return [0, units]
    targets = np.arange(1, threads, dtype=np.int64) * words // threads
    inner = np.searchsorted(unit_first, targets).tolist()
    return sorted({0, units, *(int(u) for u in inner if 0 < u < units)})


def _result(parts: list[tuple[bytes, bytes]], starts: list[int]) -> StageResult:
    """The runs' outputs (each numbering its units from 0) as one result: units moved to where
    each run's first unit is in the whole batch."""
    hits = [np.frombuffer(h, dtype=np.int64).reshape(-1, 3) for h, _ in parts]
    pairs = [np.frombuffer(p, dtype=[("unit", "<i8"), ("item", "<i8"), ("score", "<f8")]) for _, p in parts]
    shift = [np.int64(start) for start in starts]
    return StageResult(
        np.concatenate([h[:, 0] + s for h, s in zip(hits, shift, strict=True)]),
        np.concatenate([h[:, 1] for h in hits]),
        np.concatenate([h[:, 2] for h in hits]),
        np.concatenate([p["unit"].astype(np.int64) + s for p, s in zip(pairs, shift, strict=True)]),
        np.concatenate([p["item"].astype(np.int64) for p in pairs]),
        np.concatenate([p["score"].astype(np.float64) for p in pairs]),
    )


def has_compiled_stage() -> bool:
    """Whether the kernels include the compiled stage (the numpy kernels do not)."""
    return hasattr(native.module(), "RewordPass")
