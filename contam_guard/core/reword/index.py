"""The derived views of a manifest as search structures, numbered as the engine numbers items.

Items are the n-gram engine's (``core.match.index.ManifestIndex``: one per (set, view) and item),
so the rewording rules' per-item numbers sit beside every other rule's. A target whose derived
views are missing (a set registered before them) has no item the rules can see.

Nothing is decoded to start (a scan must not rebuild what registration stored). The
masked 5-grams are searched as the engine searches its own (``core.match.index.Postings``: in the
stored tables for a small scan, through an in-memory hash table once a batch is large), and a
view's content features in its stored window table, sorted by hash as the rule needs them. The
whole-table numbers of a view (each feature's document frequency, each item's weight, the
prefix filter of ``matching.Prefixes``) are decoded from that table the first time a scan
needs them: in one linear pass, since the table is sorted already.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.index import EMPTY_TABLE, ManifestIndex, Postings, windows_of
from contam_guard.core.reword.code import CODE_MIN_FEATURES
from contam_guard.core.reword.content import CURRENT_CONTENT, ContentSpec
from contam_guard.core.reword.views import CODE, NUMBERS, content_spec_of, derived_name
from contam_guard.core.reword.weights import idf, item_weights, runs
from contam_guard.core.spec.hashing import GRAM_N, WINDOW_CHARS
from contam_guard.io.manifest.model import Manifest, View
from contam_guard.io.manifest.packed import PackedTable

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
U64 = NDArray[np.uint64]


@dataclass(frozen=True)
class Table:
    """Hashes sorted, each with its item and a value (a position, or a weight)."""

    hashes: U64
    item: IntArray
    value: NDArray[np.generic]

    @classmethod
    def of(cls, hashes: U64, item: IntArray, value: NDArray[np.generic]) -> Table:
        order = np.argsort(hashes, kind="stable")
        return cls(hashes[order], item[order], value[order])

    def lookup(self, queries: U64) -> tuple[IntArray, IntArray]:
        """(query index, table index) for every table entry equal to a query."""
        counts = np.zeros(queries.size, dtype=np.int64)
        lo = np.searchsorted(self.hashes, queries, side="left").astype(np.int64)
        if self.hashes.size:
            # most queries are in no item: search the right end only for those that are
            hit = np.flatnonzero(self.hashes[np.minimum(lo, self.hashes.size - 1)] == queries)
            counts[hit] = np.searchsorted(self.hashes, queries[hit], side="right") - lo[hit]
        query = np.repeat(np.arange(queries.size, dtype=np.int64), counts)
        starts = np.cumsum(counts) - counts
        entry = np.repeat(lo, counts) + (
            np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
        )
        return query, entry


class TargetWords:
    """One (set, view)'s content features: its stored table (feature hash -> item, sorted by
    hash then item), searched where it lies; the whole-table arrays decoded on first use."""

    def __init__(
        self,
        first_item: int,
        items: int,
        table: Callable[[], PackedTable],
        stored_weights: Callable[[], FloatArray | None] = lambda: None,
    ) -> None:
        """``table``: how to read the view's feature table; ``stored_weights``: how to read the
        item weights ``register`` stored (None: a view stored without them)."""
        self.first_item = first_item
        self.items = items
        self._read = table
        self._stored_weights = stored_weights

    @cached_property
    def table(self) -> PackedTable:
        return self._read()

    @property
    def entries(self) -> int:
        return self.table.count

    def found(self, hashes: U64) -> tuple[IntArray, IntArray, FloatArray]:
        """(query index, global item) of every stored entry equal to one of ``hashes``, by
        query; and each hash's weight. Reads only the buckets the hashes fall in."""
        query, entry = self.table.lookup(hashes)
        df = np.bincount(query, minlength=hashes.size).astype(np.float64)
        df[df == 0] = 0.5
        item = self.table.payload_at(entry).astype(np.int64) + self.first_item
        return query, item, idf(self.items, df)

    # --- the whole table, decoded once -----------------------------------------------------

    @cached_property
    def _runs(self) -> tuple[BoolArray, IntArray, FloatArray]:
        """``runs`` of the whole table, kept (for the prefix filter's arrays)."""
        return runs(self.table.all_hashes)

    @cached_property
    def distinct(self) -> U64:
        """The distinct feature hashes, sorted, with ``df`` the items holding each."""
        return self.table.all_hashes[self._runs[0]]

    @property
    def df(self) -> FloatArray:
        return self._runs[2]

    @cached_property
    def postings(self) -> Table:
        """Feature hash -> (global item, IDF weight), in the table's order."""
        _, number, df = self._runs
        item = self.table.all_payloads.astype(np.int64) + self.first_item
        return Table(self.table.all_hashes, item, idf(self.items, df[number]))

    def let_go(self) -> None:
        """Drop the whole-table arrays (``distinct`` and ``item_weight`` stay): once the compiled
        stage has copied its prefixes, they are a view's size of memory nothing reads (a
        hundred MB against 100,000 items); the numpy stage decodes them again if it runs."""
        self.__dict__.pop("_runs", None)
        self.__dict__.pop("postings", None)
        self.table.let_go()

    @cached_property
    def item_weight(self) -> FloatArray:
        """Per item of the view (local numbering): the sum of its features' weights
        (``core.reword.weights``): as stored, else from the decoded table (let go after)."""
        stored = self._stored_weights()
        if stored is not None:
            return stored
        return item_weights(self.table, self.items)

    def weights(self, hashes: U64) -> FloatArray:
        """ln(1 + N / df) of each hash; a feature no item has counts df = 1/2."""
        return self.numbered(hashes)[2]

    def numbered(self, hashes: U64) -> tuple[IntArray, BoolArray, FloatArray]:
        """Per hash: its place in ``distinct`` (valid where known), whether some item has it,
        and its weight (``weights``)."""
        df = np.full(hashes.size, 0.5)
        where = np.zeros(hashes.size, dtype=np.int64)
        known = np.zeros(hashes.size, dtype=np.bool_)
        if self.distinct.size:
            where = np.searchsorted(self.distinct, hashes).astype(np.int64)
            np.minimum(where, self.distinct.size - 1, out=where)
            known = self.distinct[where] == hashes
            df[known] = self.df[where[known]]
        return where, known, idf(self.items, df)


@dataclass(frozen=True)
class RewordIndex:
    items: int
    masked_words: IntArray
    """Per item: its words with numbers masked (0 where its set has no derived views)."""
    has_numbers: BoolArray
    content_words: IntArray
    """Per item: its distinct content words (an item of a code field: its docstrings' features,
    when there are ``code.CODE_MIN_FEATURES`` of them, else its empty prose view's 0)."""
    has_words: BoolArray
    grams: Postings
    """The masked 5-grams of every target (a target without them: an empty table)."""
    words: list[TargetWords]
    """Per (set, view) with derived views: its content features."""
    content: ContentSpec = CURRENT_CONTENT
    """The content features the views hold (a manifest's newest; views of an older spec are
    left out, with a notice to register them again)."""
    code: list[TargetWords] = field(default_factory=list)
    """Per (set, view) with a code view (``FIELD~code-v1``): its docstrings' content features."""
    code_words: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Per item: its code view's distinct features (0 without one)."""

    @classmethod
    def build(cls, manifest: Manifest, index: ManifestIndex) -> RewordIndex:
        """The index over ``manifest``'s derived views: per-item counts read, nothing decoded."""
        items = index.items
        masked = np.zeros(items, dtype=np.int64)
        content = np.zeros(items, dtype=np.int64)
        has_numbers = np.zeros(items, dtype=np.bool_)
        has_words = np.zeros(items, dtype=np.bool_)
        gram_tables: list[PackedTable | Callable[[], PackedTable]] = []
        targets: list[TargetWords] = []
        code_targets: list[TargetWords] = []
        code_words = np.zeros(items, dtype=np.int64)
        specs = [content_spec_of(manifest.sets[t.set_name].views, t.view) for t in index.targets]
        newest = [spec for spec in specs if spec is not None]
        content_spec = max(newest, key=lambda spec: spec.name) if newest else CURRENT_CONTENT
        for target in index.targets:
            views = manifest.sets[target.set_name].views
            span = slice(target.first_item, target.first_item + target.items)
            numbers = views.get(derived_name(target.view, NUMBERS))
            if numbers is not None and numbers.word_counts.size == target.items:
                masked[span], has_numbers[span] = numbers.word_counts, True
                gram_tables.append(numbers.grams)
            else:
                gram_tables.append(EMPTY_TABLE)
            words = views.get(derived_name(target.view, content_spec.name))
            if words is not None and words.alnum_counts.size == target.items:
                content[span] = np.maximum(words.alnum_counts - (WINDOW_CHARS - 1), 0)
                has_words[span] = True
                targets.append(
                    TargetWords(target.first_item, target.items, windows_of(words), _weights_of(words))
                )
            code = views.get(derived_name(target.view, CODE))
            if code is not None and code.alnum_counts.size == target.items:
                code_words[span] = np.maximum(code.alnum_counts - (WINDOW_CHARS - 1), 0)
                # a code field's items are measured by their docstrings (its prose view is empty)
                measured = code_words[span] >= CODE_MIN_FEATURES
                content[span] = np.where(measured, code_words[span], content[span])
                code_targets.append(
                    TargetWords(target.first_item, target.items, windows_of(code), _weights_of(code))
                )
        gram_counts = np.maximum(masked - (GRAM_N - 1), 0)
        gram_base = np.cumsum(gram_counts) - gram_counts
        first_items = np.array([t.first_item for t in index.targets], dtype=np.int64)
        view_base = np.concatenate([gram_base, [int(gram_counts.sum())]])[first_items]
        per_view = np.array(
            [int(gram_counts[t.first_item : t.first_item + t.items].sum()) for t in index.targets],
            dtype=np.int64,
        )
        grams = Postings(gram_tables, per_view, first_items, items, gram_base, view_base)
        return cls(
            items,
            masked,
            has_numbers,
            content,
            has_words,
            grams,
            targets,
            content_spec,
            code_targets,
            code_words,
        )


def _weights_of(view: View) -> Callable[[], FloatArray | None]:
    return lambda: view.data.item_weights
