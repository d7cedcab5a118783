"""The manifest as search structures: every (set, view) item numbered globally, and postings
from each 5-gram and window hash to the (item, position) pairs that hold it, sorted by hash."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.manifest.model import Manifest, View

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

    @property
    def items(self) -> int:
        return len(self.ids)

    @property
    def label(self) -> str:
        return f"{self.set_name}:{self.view}"


@dataclass(frozen=True)
class Postings:
    """Sorted hashes with, for each, the item and the position within the item.

    ``present`` is a bitmap over the top ``PREFILTER_BITS`` bits of the hashes: one gather
    rules out almost every training hash before the (much slower) binary search.
    """

    hashes: NDArray[np.uint64]
    item: IntArray
    position: IntArray
    present: NDArray[np.bool_]

    @classmethod
    def build(cls, hashes: NDArray[np.uint64], counts: IntArray) -> Postings:
        item = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        position = np.arange(hashes.size, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        order = np.argsort(hashes, kind="stable")
        # About 16 slots per hash (so ~6% of absent hashes pass), within 64 KiB .. 64 MiB.
        bits = min(max(int(hashes.size * 16).bit_length(), 16), 26)
        present = np.zeros(1 << bits, dtype=np.bool_)
        present[hashes >> np.uint64(64 - bits)] = True
        return cls(hashes=hashes[order], item=item[order], position=position[order], present=present)

    def candidates(self, hashes: NDArray[np.uint64]) -> NDArray[np.bool_]:
        """False where a hash is certainly absent; True where it may be present."""
        shift = np.uint64(64 - (self.present.size.bit_length() - 1))
        result: NDArray[np.bool_] = self.present[hashes >> shift]
        return result


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
    windows: Postings

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
                view = golden.views[view_name]
                targets.append(
                    Target(set_name, view_name, golden.version, golden.ids, golden.test_index(), first)
                )
                views.append(view)
                first += golden.items
        return cls.from_views(targets, views)

    @classmethod
    def from_views(cls, targets: list[Target], views: list[View]) -> ManifestIndex:
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
            windows=Postings.build(_hashes([v.window_hashes for v in views]), window_counts),
        )


def _ints(arrays: list[IntArray]) -> IntArray:
    return np.concatenate(arrays).astype(np.int64) if arrays else np.zeros(0, dtype=np.int64)


def _hashes(arrays: list[NDArray[np.uint64]]) -> NDArray[np.uint64]:
    return np.concatenate(arrays).astype(np.uint64) if arrays else np.zeros(0, dtype=np.uint64)
