"""The manifest as search structures: every (set, view) item numbered globally, and postings
from each 5-gram and window hash to the (item, position) pairs that hold it, sorted by hash."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from contam_guard.engine import table
from contam_guard.manifest.model import Manifest, View
from contam_guard.text.normalise import CURRENT, TextSpec

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Target:
    """One view of one golden set; its items are ``first_item .. first_item + items - 1``."""

    set_name: str
    view: str
    version: int
    ids: list[str]
    test_index: IntArray
    first_item: int
    n: int | None = None
    """The set's own GPT-3 N (``GoldenSet.n``); None: the rule's setting."""

    @property
    def items(self) -> int:
        return len(self.ids)

    @property
    def label(self) -> str:
        return f"{self.set_name}:{self.view}"


@dataclass(frozen=True)
class Postings:
    """Hashes in manifest order, with for each its item and position within the item, and a
    hash table over them (``engine.table``) to find every posting of a given hash, with its
    bit set for the prefilter."""

    hashes: NDArray[np.uint64]
    item: IntArray
    position: IntArray
    slots: IntArray
    chain: IntArray
    bits: NDArray[np.uint64]

    @classmethod
    def build(cls, hashes: NDArray[np.uint64], counts: IntArray) -> Postings:
        item = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        position = np.arange(hashes.size, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        slots, chain = table.build(hashes)
        bits = table.build_bits(hashes)
        return cls(hashes=hashes, item=item, position=position, slots=slots, chain=chain, bits=bits)

    def lookup(self, queries: NDArray[np.uint64], valid: NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
        """(query index, posting index) for every valid query equal to a posting's hash."""
        where, found = table.probe(self.hashes, self.slots, self.chain, queries, valid)
        return where, found


@dataclass(frozen=True)
class ManifestIndex:
    targets: list[Target]
    item_target: IntArray
    """For each global item, the index of its target."""
    word_counts: IntArray
    alnum_counts: IntArray
    word_base: IntArray
    """Offset of each item's first word in the flat per-word arrays (``R``)."""
    window_base: IntArray
    """Offset of each item's first window in the flat per-window arrays."""
    grams: Postings
    window_hashes: NDArray[np.uint64]
    spec: TextSpec = CURRENT
    """The normalisation the manifest was hashed with: text is hashed under it to be compared."""

    @cached_property
    def windows(self) -> Postings:
        """The window postings, built on first use: a scan without GPT-4's rule never needs
        them (their table is the larger one)."""
        return Postings.build(self.window_hashes, self.window_counts)

    @property
    def items(self) -> int:
        return int(self.item_target.size)

    @property
    def window_counts(self) -> IntArray:
        return np.maximum(self.alnum_counts - 49, 0)

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> ManifestIndex:
        targets: list[Target] = []
        views: list[View] = []
        first = 0
        for set_name in sorted(manifest.sets):
            golden = manifest.sets[set_name]
            for view_name in sorted(golden.views):
                if "~" in view_name:  # issue 15: derived views are the reword rules' (reword.views)
                    continue
                view = golden.views[view_name]
                targets.append(
                    Target(
                        set_name, view_name, golden.version, golden.ids, golden.test_index(), first, golden.n
                    )
                )
                views.append(view)
                first += golden.items
        return cls.from_views(targets, views, manifest.spec.text())

    @classmethod
    def from_views(cls, targets: list[Target], views: list[View], spec: TextSpec = CURRENT) -> ManifestIndex:
        word_counts = _ints([v.word_counts for v in views])
        alnum_counts = _ints([v.alnum_counts for v in views])
        gram_counts = np.maximum(word_counts - 4, 0)
        window_counts = np.maximum(alnum_counts - 49, 0)
        item_target = np.repeat(np.arange(len(targets), dtype=np.int64), [t.items for t in targets])
        return cls(
            targets=targets,
            item_target=item_target,
            word_counts=word_counts,
            alnum_counts=alnum_counts,
            word_base=np.cumsum(word_counts) - word_counts,
            window_base=np.cumsum(window_counts) - window_counts,
            grams=Postings.build(_hashes([v.gram_hashes for v in views]), gram_counts),
            window_hashes=_hashes([v.window_hashes for v in views]),
            spec=spec,
        )


def _ints(arrays: list[IntArray]) -> IntArray:
    return np.concatenate(arrays).astype(np.int64) if arrays else np.zeros(0, dtype=np.int64)


def _hashes(arrays: list[NDArray[np.uint64]]) -> NDArray[np.uint64]:
    return np.concatenate(arrays).astype(np.uint64) if arrays else np.zeros(0, dtype=np.uint64)
