"""``ScanPass``: a manifest opened for scanning, and the machinery every part of a scan shares.

It holds the manifest's index, its settings and key, the rule families (the n-gram family and,
when its rules are on, the rewording family with its compiled stage) and the compiled prefilter,
and computes what each family finds in a batch of records or a filtered block of lines. What a
scan has found lives apart (``core.state``), added to by an ``Accumulator`` and made a report
by ``core.finish``; ``Scanner`` (``core.scanner``) is the public face over all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.batch import Batch
from contam_guard.core.families import ngram
from contam_guard.core.families.base import FamilyRows
from contam_guard.core.families.reword import RewordFamily, RewordSettings, RewordTotals
from contam_guard.core.match.arrays import sorted_unique
from contam_guard.core.match.chains import ChainSettings
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.match.matcher import Hits
from contam_guard.core.match.pairs import PairStore
from contam_guard.core.spec import native
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.state import Census, ScanState
from contam_guard.core.thread_pool import Threads
from contam_guard.io.readers.base import Record

IntArray = NDArray[np.int64]
MATCH_HITS = 1 << 19
"""Hits matched at once. A block whose every line hits (a copied test set) has millions: matched
in one piece, the matcher's arrays and the notable records' features took 250 MB."""
COMPILED_REWORD_BYTES = 8 << 10
"""Input from which the rewording rules run in their compiled stage, whatever the manifest's size.
Its set-up (the masked 5-grams' table, each view's prefixes) and the numpy stage's cost per record
both grow with the registered items, so the break-even is a number of records: about ten against
GSM8K test (1,319 items), between ten and twenty against 100,000 items; 8 KiB is some fourteen
GSM8K train records (decision Q11)."""


class ScanPass:
    """A manifest, its settings and key, opened for scanning: the index, the rule families and
    the compiled machinery every part of a scan shares (see the module's docstring)."""

    def __init__(
        self,
        manifest: Any,
        config: Any,
        key: HashKey | None,
        *,
        root: Path,
        manifest_path: Path | None = None,
        max_pairs: int | None = None,
        allowlist_path: Path | None = None,
        notices: Iterable[str] = (),
        index: ManifestIndex | None = None,
    ) -> None:
        """Prefer ``Scanner.open``. ``manifest``: a ``io.manifest.model.Manifest`` (opened with its
        key); ``config``: a ``core.config.Config`` with any rule overrides applied. ``index``: the
        n-gram index to scan against, when there is no manifest (``dupes``, tests): then the
        rewording rules, which read the manifest's derived views, do not run."""
        self.manifest = manifest
        self.config = config
        self.key = key
        self.root = root
        self.manifest_path = manifest_path
        self.allowlist_path = allowlist_path
        self.index = ManifestIndex.from_manifest(manifest) if index is None else index
        self.rules = config.rules
        self.windows = bool(self.rules.windows)
        self.batch_chars = int(config.scan.batch_chars)
        self.max_pairs = int(config.scan.max_pairs_per_item if max_pairs is None else max_pairs)
        self.reword_settings = RewordSettings.of(self.rules)
        self.chains = chain_settings(self.rules)
        self.notices = list(notices)
        self.large = False
        """Inputs large against the manifest: build the in-memory tables (the compiled prefilter,
        the compiled rewording stage) before scanning (``expect``)."""
        self.expected_bytes = 0
        """The most input this scan has been told of (``expect``) or has read (``note_read``)."""
        self._read_chars = 0
        self._threads = Threads()
        """Threads the compiled passes may cut a large block between (``use_threads``), shared by
        the prefilter and the rewording stage."""

    def expect(self, input_bytes: int) -> None:
        """Say how much input is coming (bytes, about): large inputs build the in-memory tables
        once, which then make every line cheaper (``ManifestIndex.prefers_tables``), and more
        than a few records run the compiled rewording stage (``COMPILED_REWORD_BYTES``)."""
        self.expected_bytes = max(self.expected_bytes, input_bytes)
        if not self.large and self.index.prefers_tables(self.expected_bytes, windows=self.windows):
            self.large = True
            self.__dict__.pop("prefilter", None)  # built, with the compiled pass's vocabulary
        family = self.__dict__.get("reword")
        if family is not None and family.compiled != self.compiled_reword:
            del self.__dict__["reword"]  # built again, compiled (the totals live in the state)

    def note_read(self, chars: int) -> None:
        """``chars`` more of input were read: a scan fed records as they come (the library's,
        with no total to ``expect``) goes compiled once it has read enough."""
        self._read_chars += chars
        self.expect(self._read_chars)

    @property
    def compiled_reword(self) -> bool:
        """Whether the rewording rules run in their compiled stage: on a large input, and on
        any but a few records (``COMPILED_REWORD_BYTES``)."""
        return self.large or self.expected_bytes >= COMPILED_REWORD_BYTES

    @property
    def threads(self) -> int:
        return self._threads.count

    def use_threads(self, threads: int) -> None:
        """Let the compiled passes run a large block on up to ``threads`` threads: the prefilter
        two parts of it at once, the rewording stage as many runs of its records (the result is
        the same; 1: this thread only). A ``--jobs`` worker, a Spark or Ray task keeps 1: their
        engine already gives each core a part."""
        self._threads.count = threads

    # --- the families ---------------------------------------------------------------------

    def empty_state(self, max_pairs: int | None = None) -> ScanState:
        reword = None if self.reword_settings is None else RewordTotals.empty(self.index.items)
        limit = self.max_pairs if max_pairs is None else max_pairs
        return ScanState(ngram.NgramTotals.empty(self.index, self.chains), reword, PairStore(limit), Census())

    def batch(self, records: list[Record]) -> Batch:
        return Batch.of(records, spec=self.index.spec, key=self.key, windows=self.windows)

    @cached_property
    def reword(self) -> RewordFamily | None:
        """The rewording family (None when both its rules are off, or no set has its views)."""
        if self.reword_settings is None or self.manifest is None:
            return None
        from contam_guard.core.reword.index import RewordIndex  # noqa: PLC0415

        reword_index = RewordIndex.build(self.manifest, self.index)
        return RewordFamily(
            self.index,
            self.key,
            reword_index,
            self.reword_settings,
            compiled=self.compiled_reword,
            threads=self._threads,
        )

    def reword_notices(self) -> list[str]:
        """The rewording rules' notices (sets registered before them)."""
        if self.reword is None:
            return []
        from contam_guard.core.families.reword import registered_before  # noqa: PLC0415

        return registered_before(self.manifest, self.index, self.reword.reword_index, self.rules)

    def observe(self, batch: Batch, state: ScanState | None) -> list[FamilyRows]:
        """Every family's pairs in ``batch``; with ``state``, its totals updated."""
        rows = [ngram.observe(batch, self.index, None if state is None else state.ngram, self.chains)]
        if self.reword is not None:
            rows.append(self.reword.observe(batch, None if state is None else state.reword))
        return rows

    @cached_property
    def prefilter(self) -> Any:
        """The compiled prefilter over the manifest (``core.match.prefilter``), or None where it
        cannot run (the numpy kernels) or the input is small."""
        from contam_guard.core.match.prefilter import Prefilter  # noqa: PLC0415

        if not self.large or not native.has_prefilter():
            return None
        words = None if self.reword is None else self.reword.stage.kernel
        return Prefilter(self.index, windows=self.windows, key=self.key, words=words, threads=self._threads)

    def observe_block(self, block: Any, limit: int, read: NDArray[np.bool_], state: ScanState) -> IntArray:
        """Accumulate the totals of a filtered block's lines before ``limit`` (``read``: the lines
        the filter read); the lines holding a notable pair, to read again exactly."""
        lines = block.lines
        hit_lines, grams, windows = lines.hit_records(limit)
        notable = [np.zeros(0, dtype=np.int64)]
        for first, last, some_grams, some_windows in _hit_slices(grams, windows, int(hit_lines.size)):
            table = ngram.observe_hits(self.index, some_grams, some_windows, last - first, state.ngram)
            notable.append(hit_lines[first + table.record[ngram.notable(table)]])
        if self.reword is not None:
            assert state.reword is not None
            words = lines.words
            found = None if words is None else self.reword.observe_words(words.before(limit), state.reword)
            notable.append(self._reword_lines(block, np.flatnonzero(read), state) if found is None else found)
        return sorted_unique(np.concatenate(notable))

    def _reword_lines(self, block: Any, lines: IntArray, state: ScanState) -> IntArray:
        """The rewording family over the lines the filter read: the lines with a notable pair."""
        assert self.reword is not None
        records = [block.record(int(k)) for k in lines.tolist()]
        found: list[IntArray] = []
        for start in range(0, len(records), 4096):
            part = records[start : start + 4096]
            rows = self.reword.observe(self.batch(part), state.reword)
            found.append(lines[start + rows.record[rows.notable]])
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def chain_settings(rules: Any) -> ChainSettings:
    """What the scan chains across gaps: Llama 2's skip-gram budget and the gapped rule's gaps,
    each where its rule is on (``core.match.chains``)."""
    llama2, gapped = rules.llama2, rules.gapped
    return ChainSettings(
        skip_budget=int(llama2.skip_budget) if llama2.enabled else 0,
        gaps=int(gapped.gaps) if gapped.enabled else 0,
    )


def _hit_slices(grams: Hits, windows: Hits, records: int) -> Any:
    """(first, last, grams, windows): the hits of records [first, last), renumbered from 0, in
    pieces of about ``MATCH_HITS`` hits (a record with more is a piece of its own): a block whose
    every line hits (a copied test set) would otherwise match millions at once."""
    per_record = np.bincount(grams.record, minlength=records) + np.bincount(windows.record, minlength=records)
    if int(per_record.sum()) <= MATCH_HITS:
        yield 0, records, grams, windows
        return
    ends = np.cumsum(per_record)
    by_record = [_by_record(hits) for hits in (grams, windows)]
    first = 0
    while first < records:
        done = int(ends[first - 1]) if first else 0
        last = max(int(np.searchsorted(ends, done + MATCH_HITS, side="right")), first + 1)
        pieces = []
        for hits in by_record:
            a, b = np.searchsorted(hits.record, (first, last)).tolist()
            pieces.append(Hits(hits.record[a:b] - first, hits.at[a:b], hits.posting[a:b]))
        yield first, last, pieces[0], pieces[1]
        first = last


def _by_record(hits: Hits) -> Hits:
    if bool(np.all(hits.record[1:] >= hits.record[:-1])):
        return hits
    order = np.argsort(hits.record, kind="stable")
    return Hits(hits.record[order], hits.at[order], hits.posting[order])


__all__ = ["ScanPass"]
