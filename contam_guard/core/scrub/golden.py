"""The golden n-grams and where they occur in a batch of texts.

The manifest keeps, per item, only its 5-gram hashes in order. A run of n >= 5 words is exactly
n - 4 consecutive 5-grams, so an n-gram is identified by the key ``hash_grams`` gives its n - 4
consecutive 5-gram hashes. The same function over each item's 5-gram sequence (never across two
items) gives the golden keys; over a record's 5-gram hashes (never across two records) it gives
the key of every n-gram of the record. Keyed manifests work unchanged: both sides hash with the
same key. Normalisation (the manifest's spec, ``index.spec``) and hashing are
``extract_features``'s: there is no second tokeniser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.spec import glued
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import GRAM_N, HashArray, HashKey, hash_grams

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Hits:
    """Occurrences of golden n-grams in a batch: one row per (text, word position).

    ``doc`` is the text's number in the batch, ``key`` the n-gram's number in
    ``GoldenNgrams.keys``; ``start``/``end`` the character span [start, end) in that text, from
    the first kept character of the first word to the last of the n-th word.
    """

    doc: IntArray
    key: IntArray
    start: IntArray
    end: IntArray

    @classmethod
    def empty(cls) -> Hits:
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none.copy(), none.copy(), none.copy())

    def __len__(self) -> int:
        return int(self.doc.size)

    def where(self, mask: NDArray[np.bool_]) -> Hits:
        return Hits(self.doc[mask], self.key[mask], self.start[mask], self.end[mask])


@dataclass(frozen=True)
class Label:
    """A golden item as the log names it."""

    set_name: str
    view: str
    item: str


@dataclass(frozen=True)
class GoldenNgrams:
    """The distinct golden n-gram keys (sorted) and, for each, the items that hold it."""

    n: int
    keys: HashArray
    item_start: IntArray
    """Items of ``keys[k]`` are ``items[item_start[k]:item_start[k + 1]]`` (global item numbers)."""
    items: IntArray
    index: ManifestIndex
    present: NDArray[np.bool_]
    """Flags over the top ``bits`` bits of the keys: one gather rules out most n-grams before
    the binary search (which costs far more per n-gram)."""
    bits: int

    @classmethod
    def build(cls, index: ManifestIndex, n: int) -> GoldenNgrams:
        if n < GRAM_N:
            raise ValueError(f"n must be at least {GRAM_N}")
        grams = index.grams
        order = np.lexsort((grams.position, grams.item))  # each item's 5-grams, in order
        sequence, owner = grams.hashes[order], grams.item[order]
        span = n - GRAM_N + 1
        keys = hash_grams(sequence, span)
        inside = owner[: keys.size] == owner[span - 1 :] if keys.size else np.zeros(0, dtype=np.bool_)
        if keys.size and index.templates.marked:  # an n-gram with a template word
            start = index.word_base[owner[: keys.size]] + grams.position[order][: keys.size]
            inside &= index.templates.words_in(start, start + n) == 0  # is not golden for scrub
        keys, owner = keys[inside], owner[: inside.size][inside]
        unique, inverse = np.unique(keys, return_inverse=True)
        pairs = np.unique(inverse.astype(np.int64) * max(index.items, 1) + owner)
        pair_key, pair_item = pairs // max(index.items, 1), pairs % max(index.items, 1)
        item_start = np.searchsorted(pair_key, np.arange(unique.size + 1)).astype(np.int64)
        # About 16 flags per key keeps the false-positive rate near 6%, within 64 KiB .. 32 MiB.
        bits = int(np.clip(int(unique.size).bit_length() + 4, 16, 25))
        present = np.zeros(1 << bits, dtype=np.bool_)
        present[unique >> np.uint64(64 - bits)] = True
        return cls(
            n=n,
            keys=unique,
            item_start=item_start,
            items=pair_item.astype(np.int64),
            index=index,
            present=present,
            bits=bits,
        )

    @property
    def size(self) -> int:
        return int(self.keys.size)

    def items_of(self, key: int) -> IntArray:
        return self.items[self.item_start[key] : self.item_start[key + 1]]

    def label(self, item: int) -> Label:
        target = self.index.targets[int(self.index.item_target[item])]
        return Label(target.set_name, target.view, target.ids[item - target.first_item])

    def find(self, texts: Sequence[str], key: HashKey | None) -> Hits:
        """Every occurrence of a golden n-gram in ``texts`` (one record or piece each)."""
        return self.find_segmented([(text,) for text in texts], key)

    def find_segmented(self, docs: Sequence[Sequence[str]], key: HashKey | None) -> Hits:
        """Every occurrence of a golden n-gram in ``docs``, each a record's segments: an n-gram
        never spans two segments, and ``start``/``end`` count characters of the doc's segments
        joined by newlines (``core.scrub.lines.Parsed.text``)."""
        texts = [text for doc in docs for text in doc]
        if not texts or self.size == 0:
            return Hits.empty()
        counts = np.fromiter((len(doc) for doc in docs), dtype=np.int64, count=len(docs))
        unit_doc = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
        lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        # Where each segment starts in its doc's joined text: after the earlier ones and a newline each.
        ends = np.cumsum(lengths + 1)
        first = np.cumsum(counts) - counts
        unit_offset = (ends - lengths - 1) - np.repeat(
            (ends - lengths - 1)[first[counts > 0]], counts[counts > 0]
        )
        unit, found, start, end = self._occurrences(texts, key)
        again = glued.readings(texts)
        if again:  # glued words (camelCase, U+180E for spaces) read a second time, as a scan does
            read = list(again)
            more, more_found, more_start, more_end = self._occurrences([again[k].text for k in read], key)
            readings = [again[k] for k in read]
            rows = np.unique(
                np.stack(
                    [
                        np.concatenate([unit, np.asarray(read, dtype=np.int64)[more]]),
                        np.concatenate([found, more_found]),
                        np.concatenate([start, _originals(readings, more, more_start)]),
                        np.concatenate([end, _originals(readings, more, more_end)]),
                    ],
                    axis=1,
                ),
                axis=0,
            )
            unit, found, start, end = (np.ascontiguousarray(column) for column in rows.T)
        return Hits(
            doc=unit_doc[unit],
            key=found,
            start=start + unit_offset[unit],
            end=end + unit_offset[unit],
        )

    def _occurrences(
        self, texts: list[str], key: HashKey | None
    ) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """(text, golden n-gram, start, end) of every occurrence in ``texts``, offsets in the text."""
        none = np.zeros(0, dtype=np.int64)
        features = extract_features(texts, key=key, windows=False, spec=self.index.spec)
        n = self.n
        positions = features.word_record.size - n + 1
        if positions <= 0:
            return none, none, none, none
        word_unit = features.word_record
        # Valid where the n words lie in one segment; gram hashes past a segment's end are padding.
        valid = word_unit[:positions] == word_unit[n - 1 :]
        ngram = hash_grams(features.gram_hash, n - GRAM_N + 1)[:positions]
        maybe = valid & self.present[ngram >> np.uint64(64 - self.bits)]
        where = np.flatnonzero(maybe)
        found = np.searchsorted(self.keys, ngram[where])
        found = np.minimum(found, self.size - 1)
        hit = self.keys[found] == ngram[where]
        where, found = where[hit], found[hit]
        return (
            word_unit[where].astype(np.int64),
            found.astype(np.int64),
            features.word_start[where].astype(np.int64),
            features.word_end[where + n - 1].astype(np.int64),
        )


def _originals(readings: list[glued.Derived], unit: IntArray, offsets: IntArray) -> IntArray:
    """Offsets of second readings (``unit[k]`` the reading of ``offsets[k]``) in the texts they read."""
    out: IntArray = offsets.copy()
    for u in np.unique(unit).tolist():
        rows = unit == u
        out[rows] = readings[u].originals(offsets[rows])
    return out
