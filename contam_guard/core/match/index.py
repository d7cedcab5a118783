"""The manifest as search structures: every (set, view) item numbered globally, and the postings
of every 5-gram and window hash, found through each view's stored table.

Each view stores its hashes as a sorted packed table (``io.manifest.packed``), memory-mapped from
its file: a posting is an entry of one of them, numbered globally (view k's entries follow view
k - 1's, in each table's sorted order). A 5-gram's entry says where it lies in its item (its
place among the view's 5-grams in item order); a window's says its item (every rule counts an
item's windows found, none needs where they lie).

Nothing is built to start: a small scan (a commit's few records) looks its hashes up in the
views' tables where they lie. A large one (``prefers_tables``) has the hash table and Bloom
filter of ``core.match.table`` built over every view's hashes in memory first, for the compiled
prefilter: a one-pass build that pays for itself within a few megabytes of input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match import table
from contam_guard.core.match.arrays import sorted_unique
from contam_guard.core.spec.hashing import GRAM_N, WINDOW_CHARS
from contam_guard.core.spec.normalise import CURRENT, TextSpec
from contam_guard.errors import ManifestError
from contam_guard.io.manifest.model import Manifest, View
from contam_guard.io.manifest.packed import PackedTable, width_for
from contam_guard.io.manifest.templates import TemplateLookup, TemplateMarks

IntArray = NDArray[np.int64]

TABLE_BYTES_PER_ENTRY = 4
"""A scan builds the in-memory tables when it reads at least one byte of input per this many
stored hashes (``ManifestIndex.prefers_tables``): building costs about as much per hash as the
exact path costs per few bytes of input."""


@dataclass(frozen=True)
class Target:
    """One view of one golden set; its items are ``first_item .. first_item + items - 1``."""

    set_name: str
    view: str
    version: int
    ids: Sequence[str]
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


class Postings:
    """The hashes of every view (5-grams, or windows), numbered globally.

    ``item_of`` and ``position_of`` say where a posting lies; ``lookup`` finds the postings of
    given hashes. ``hashes``, ``slots``, ``chain`` and ``bits`` are the in-memory hash table of
    ``core.match.table`` over all of them (built on first use: the compiled prefilter reads it).
    """

    def __init__(
        self,
        tables: Sequence[PackedTable | Callable[[], PackedTable]],
        counts: IntArray,
        first_items: IntArray,
        items: int,
        item_base: IntArray | None = None,
        view_base: IntArray | None = None,
    ) -> None:
        """``tables``: each view's (or how to read it: it is read when first needed), with
        ``counts`` entries; ``first_items``: each view's first global item, of ``items``. For
        5-grams, ``item_base`` (each global item's first 5-gram in the global item order) and
        ``view_base`` (each view's first 5-gram there); None for windows."""
        self._tables = list(tables)
        self.first_items = first_items
        self.view_end = np.concatenate([first_items[1:], [items]]).astype(np.int64)
        self.item_base = item_base
        self.view_base = view_base
        self.bases = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def table(self, k: int) -> PackedTable:
        """View k's table (read on first use)."""
        part = self._tables[k]
        if not isinstance(part, PackedTable):
            part = self._tables[k] = part()
            if part.count != self.bases[k + 1] - self.bases[k]:
                raise ManifestError(
                    "a view's table does not hold as many entries as its counts give (damaged)"
                )
        return part

    @property
    def tables(self) -> list[PackedTable]:
        return [self.table(k) for k in range(len(self._tables))]

    @classmethod
    def build(cls, hashes: NDArray[np.uint64], counts: IntArray) -> Postings:
        """The postings of one view held in memory: ``hashes`` in item order, ``counts`` per item."""
        table_ = PackedTable.build(
            hashes, np.arange(hashes.size, dtype=np.uint64), width_for(max(hashes.size - 1, 0))
        )
        return cls(
            [table_],
            np.array([hashes.size], np.int64),
            np.zeros(1, np.int64),
            int(counts.size),
            np.cumsum(counts) - counts,
            np.zeros(1, np.int64),
        )

    @property
    def size(self) -> int:
        return int(self.bases[-1])

    # --- where a posting lies --------------------------------------------------------------

    def _view_of(self, postings: IntArray) -> IntArray:
        return np.searchsorted(self.bases, postings, side="right") - 1

    def _payload(self, postings: IntArray) -> tuple[IntArray, IntArray]:
        """(view, payload) of each posting."""
        view = self._view_of(postings)
        if postings.size and (int(view.min()) < 0 or int(view.max()) >= len(self._tables)):
            raise ValueError("a posting outside the manifest's tables")
        payload = np.zeros(postings.size, dtype=np.int64)
        for k in sorted_unique(view).tolist():
            here = view == k
            payload[here] = self.table(k).payload_at(postings[here] - self.bases[k]).astype(np.int64)
        return view, payload

    def item_of(self, postings: IntArray) -> IntArray:
        """The global item of each posting."""
        return self._item_of(*self._payload(postings))

    def _item_of(self, view: IntArray, payload: IntArray) -> IntArray:
        if self.item_base is None:
            items = self.first_items[view] + payload
        else:
            assert self.view_base is not None
            items = np.searchsorted(self.item_base, self.view_base[view] + payload, side="right") - 1
        # A damaged table could name an item of another view, or none: the engine would count
        # it against the wrong item, or index outside its arrays.
        if items.size and bool(((items < self.first_items[view]) | (items >= self.view_end[view])).any()):
            raise ManifestError(
                "the manifest's tables name an item outside their view (damaged): run contam-guard verify"
            )
        return items

    def position_of(self, postings: IntArray) -> IntArray:
        """Each 5-gram posting's word position in its item."""
        return self.item_and_position(postings)[1]

    def item_and_position(self, postings: IntArray) -> tuple[IntArray, IntArray]:
        """Each 5-gram posting's global item and word position in it (the postings decoded
        once: with many items a scan's candidates are millions of postings)."""
        assert self.item_base is not None and self.view_base is not None
        view, payload = self._payload(postings)
        item = self._item_of(view, payload)
        return item, self.view_base[view] + payload - self.item_base[item]

    @cached_property
    def item(self) -> IntArray:
        """Every posting's item (decodes every table)."""
        return self.item_of(np.arange(self.size, dtype=np.int64))

    @cached_property
    def position(self) -> IntArray:
        """Every 5-gram posting's position in its item (decodes every table)."""
        return self.position_of(np.arange(self.size, dtype=np.int64))

    # --- finding postings ------------------------------------------------------------------

    def lookup(self, queries: NDArray[np.uint64], valid: NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
        """(query index, posting) for every valid query equal to a posting's hash, by query and
        posting. Through the in-memory table once it is built (or once a batch is large enough
        to pay for building it); through each view's stored table otherwise."""
        if self.built or int(valid.sum()) * len(self._tables) * 8 >= self.size:
            where, found = table.probe(self.hashes, self.slots, self.chain, queries, valid)
            return where, found
        asked = np.flatnonzero(valid)
        wheres, founds = [], []
        for k in range(len(self._tables)):
            if self.bases[k + 1] == self.bases[k]:
                continue  # an empty table (a view without windows): nothing to read
            where, entry = self.table(k).lookup(queries[asked])
            wheres.append(asked[where])
            founds.append(entry + self.bases[k])
        if not wheres:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        where, found = np.concatenate(wheres), np.concatenate(founds)
        order = np.argsort(where, kind="stable")  # by query; each query's postings stay in order
        return where[order], found[order]

    @property
    def built(self) -> bool:
        """Whether the in-memory hash table exists."""
        return "slots" in self.__dict__

    @cached_property
    def hashes(self) -> NDArray[np.uint64]:
        """Every posting's hash, in posting order (decodes every table into one array; a table
        keeps no copy of its own: against 100,000 items the windows' hashes alone are 133 MiB)."""
        out = np.empty(self.size, dtype=np.uint64)
        for k, part in enumerate(self.tables):
            out[self.bases[k] : self.bases[k + 1]] = part.decode_hashes()
        return out

    @cached_property
    def _table(self) -> tuple[NDArray[np.uint64], IntArray]:
        return table.build(self.hashes)

    @cached_property
    def slots(self) -> NDArray[np.uint64]:
        return self._table[0]

    @cached_property
    def chain(self) -> IntArray:
        return self._table[1]

    @cached_property
    def bits(self) -> NDArray[np.uint64]:
        return table.build_bits(self.hashes)


@dataclass(frozen=True)
class ManifestIndex:
    targets: list[Target]
    item_target: IntArray
    """For each global item, the index of its target."""
    word_counts: IntArray
    alnum_counts: IntArray
    window_counts: IntArray
    """Windows per item (none for a set stored without windows: not registered for GPT-4's rule)."""
    word_base: IntArray
    """Offset of each item's first word in the flat per-word arrays (``R``)."""
    window_base: IntArray
    """Offset of each item's first window in a flat per-window array in item order."""
    grams: Postings
    windows: Postings
    spec: TextSpec = CURRENT
    """The normalisation the manifest was hashed with: text is hashed under it to be compared."""
    templates: TemplateLookup = field(default_factory=TemplateLookup)
    """Each word position's longest template n-gram (``io.manifest.templates``): runs made only of
    template words are ignored by the matcher and the statistics."""

    @property
    def items(self) -> int:
        return int(self.item_target.size)

    @cached_property
    def whole_runs(self) -> IntArray:
        """Per item, the shared run that a copy of the whole item in one string gives: its word
        count, less the template words it begins and ends with (runs are trimmed of those); 0
        when that leaves a template word inside (a run is cut there, so no one run holds the
        item) or fewer than 5 words (runs are measured through 5-grams)."""
        start, end = self.word_base, self.word_base + self.word_counts
        if self.templates.marked:
            start, end = self.templates.trim(start, end)
            end = np.maximum(end, start)
            end = np.where(self.templates.words_in(start, end) > 0, start, end)
        whole = (end - start).astype(np.int64)
        return np.where(whole >= GRAM_N, whole, 0)

    def prefers_tables(self, input_bytes: int, *, windows: bool) -> bool:
        """Whether a scan of ``input_bytes`` should build the in-memory hash tables first (for
        the compiled prefilter): yes once the input is large against the manifest, or when they
        are built already."""
        entries = self.grams.size + (self.windows.size if windows else 0)
        built = self.grams.built and (self.windows.built or not windows)
        return built or input_bytes * TABLE_BYTES_PER_ENTRY >= entries

    def build_tables(self, *, windows: bool) -> None:
        """Build the in-memory hash tables now (before worker processes are forked, so that they
        share them)."""
        for postings in (self.grams, self.windows) if windows else (self.grams,):
            postings.slots, postings.chain, postings.bits  # noqa: B018  (cached on first use)

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> ManifestIndex:
        targets: list[Target] = []
        views: list[View] = []
        first = 0
        for set_name in sorted(manifest.sets):
            golden = manifest.sets[set_name]
            for view_name in sorted(golden.views):
                if "~" in view_name:  # derived views are the reword rules' (reword.views)
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
        gram_counts = np.maximum(word_counts - (GRAM_N - 1), 0)
        sizes = [t.items for t in targets]
        windowed = np.repeat(np.array([v.has_windows for v in views], dtype=np.bool_), sizes)
        window_counts = np.where(windowed, np.maximum(alnum_counts - (WINDOW_CHARS - 1), 0), 0)
        item_target = np.repeat(np.arange(len(targets), dtype=np.int64), sizes)
        first_items = np.array([t.first_item for t in targets], dtype=np.int64)
        gram_base = np.cumsum(gram_counts) - gram_counts
        view_gram_base = np.concatenate([gram_base, [int(gram_counts.sum())]])[first_items]
        items = int(item_target.size)
        per_view = np.array([int(v.window_counts.sum()) for v in views], dtype=np.int64)
        word_base = np.cumsum(word_counts) - word_counts
        marks = [
            (_marks_of(v), v.word_counts, word_base[t.first_item : t.first_item + t.items])
            for t, v in zip(targets, views, strict=True)
        ]
        gram_per_view = np.array([v.grams.count for v in views], dtype=np.int64)
        return cls(
            targets=targets,
            item_target=item_target,
            word_counts=word_counts,
            alnum_counts=alnum_counts,
            window_counts=window_counts,
            word_base=word_base,
            window_base=np.cumsum(window_counts) - window_counts,
            grams=Postings(
                [v.grams for v in views], gram_per_view, first_items, items, gram_base, view_gram_base
            ),
            windows=Postings([windows_of(v) for v in views], per_view, first_items, items),
            spec=spec,
            templates=TemplateLookup(marks),
        )


def _marks_of(view: View) -> Callable[[], TemplateMarks]:
    return lambda: view.templates


EMPTY_TABLE = PackedTable.build(np.zeros(0, np.uint64), np.zeros(0, np.uint64), 1)
"""The table of a view that stores none (no windows; no derived view)."""


def windows_of(view: View) -> Callable[[], PackedTable]:
    """How to read a view's window table (an empty table for a view stored without windows)."""
    return lambda: view.windows or EMPTY_TABLE


def _ints(arrays: list[IntArray]) -> IntArray:
    return np.concatenate(arrays).astype(np.int64) if arrays else np.zeros(0, dtype=np.int64)
