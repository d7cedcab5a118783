"""``Scanner``: a manifest opened for scanning, the one entry point of every front end.

    import contam_guard as cg
    scanner = cg.Scanner.open(".contam-guard")   # the folder, or its manifest.json
    report = scanner.scan_records(records)       # dicts (every string read) or strings
    report.exit_code, report.findings

    acc = scanner.accumulator()                  # or, for a scan in parts:
    acc.add_records(batch); acc.add_jsonl_block(raw_lines, source="train.jsonl")
    total.merge(acc)                             # parts from workers, partitions, ...
    report = scanner.finish(total)

``finish`` is the one post-scan step (the per-item cap on listed pairs, the records' allow
markers, the allowlist, redaction, the verdicts) for the command line, ``--jobs``, Spark, Ray
and datatrove. Library code never prints and never exits: what a reader should know comes back
in ``Report.notices``.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from contam_guard import native
from contam_guard.core.accumulator import Accumulator, Census, ScanState
from contam_guard.core.batch import Batch
from contam_guard.core.families import ngram
from contam_guard.core.families.base import FamilyRows
from contam_guard.core.families.reword import RewordFamily, RewordSettings, RewordTotals
from contam_guard.engine.index import ManifestIndex
from contam_guard.engine.matcher import Hits
from contam_guard.engine.pairs import PairStore
from contam_guard.readers.base import ReadOptions, Record
from contam_guard.text.hashing import HashKey

IntArray = NDArray[np.int64]
MATCH_HITS = 1 << 19
"""Hits matched at once. A block whose every line hits (a copied test set) has millions: matched
in one piece, the matcher's arrays and the notable records' features took 250 MB."""


@dataclass(frozen=True)
class FinishOptions:
    """What ``Scanner.finish`` applies (the command line's options)."""

    exit_zero: bool = False
    """Exit 0 even with failing findings (``--exit-zero``)."""
    use_allowlist: bool = True
    """False (``--no-allowlist``): ignore the allowlist and the records' inline markers."""
    check_stale: bool = True
    """Note allowlist entries this scan did not use (off for a diff, which reads a part only)."""
    redact_pii: bool = False
    """Mask e-mail addresses, phone numbers, keys ... in the training-side snippets."""
    today: dt.date | None = None


class Scanner:
    """A manifest, its settings and key, opened for scanning (see the module's docstring)."""

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
        """Prefer ``Scanner.open``. ``manifest``: a ``manifest.model.Manifest`` (opened with its
        key); ``config``: a ``config.Config`` with any rule overrides applied. ``index``: the
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
        self.notices = list(notices)
        self.large = False
        """Inputs large against the manifest: build the in-memory tables (the compiled prefilter,
        the compiled rewording stage) before scanning (``expect``)."""

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        manifest: str | os.PathLike[str] = ".contam-guard",
        *,
        config: str | os.PathLike[str] | None = None,
        rules: Mapping[str, Mapping[str, object]] | None = None,
        max_pairs: int | None = None,
    ) -> Scanner:
        """Open the manifest at ``manifest`` (the guard folder or its ``manifest.json``), with the
        settings found as the command line finds them (from the manifest's project, or the file
        ``config``), ``rules`` overriding some (``{"gpt3": {"n": 10}}``), and the key from the
        environment variable the settings name (``CONTAM_GUARD_KEY``) for a keyed manifest."""
        from contam_guard.core.opening import open_scanner  # noqa: PLC0415 (manifest and config I/O)

        return open_scanner(cls, Path(manifest), None if config is None else Path(config), rules, max_pairs)

    def expect(self, input_bytes: int) -> None:
        """Say how much input is coming (bytes, about): large inputs build the in-memory tables
        once, which then make every line cheaper (``ManifestIndex.prefers_tables``)."""
        if not self.large and self.index.prefers_tables(input_bytes, windows=self.windows):
            self.large = True
            self.__dict__.pop("reword", None)  # built again, compiled
            self.__dict__.pop("prefilter", None)  # built, with the compiled pass's vocabulary

    # --- scanning -------------------------------------------------------------------------

    def accumulator(self, *, max_pairs: int | None = None) -> Accumulator:
        """An empty scan over this manifest; ``max_pairs``: pairs listed per item (0: all;
        default: the scanner's), for a part that a merge caps later."""
        return Accumulator(self, self.empty_state(max_pairs))

    def empty_state(self, max_pairs: int | None = None) -> ScanState:
        reword = None if self.reword_settings is None else RewordTotals.empty(self.index.items)
        limit = self.max_pairs if max_pairs is None else max_pairs
        return ScanState(ngram.NgramTotals.empty(self.index), reword, PairStore(limit), Census())

    def scan_records(
        self,
        records: Iterable[Record | Mapping[str, object] | str],
        *,
        source: str = "<records>",
        fields: Iterable[str] = (),
        options: FinishOptions | None = None,
    ) -> Any:
        """Scan ``records`` (dicts: every string read, or only ``fields``; or strings) and finish."""
        acc = self.accumulator()
        acc.add_records(records, source=source, fields=fields)
        acc.read_input(source)
        return self.finish(acc, options)

    def scrub_records(
        self,
        records: Iterable[Mapping[str, object] | str],
        *,
        fields: Iterable[str] = (),
        settings: Any = None,
    ) -> Any:
        """GPT-3's removal filter on ``records`` (``contam-guard scrub`` on records in memory):
        the records to keep, the spans removed, the records dropped (``core.scrubbing``).
        ``settings``: a ``config.ScrubSettings`` (default: the project's ``scrub:``)."""
        from contam_guard.core.scrubbing import scrub_records  # noqa: PLC0415

        return scrub_records(self, records, fields=fields, settings=settings)

    def batch(self, records: list[Record]) -> Batch:
        return Batch.of(records, spec=self.index.spec, key=self.key, windows=self.windows)

    @cached_property
    def reword(self) -> RewordFamily | None:
        """The rewording family (None when both its rules are off, or no set has its views)."""
        if self.reword_settings is None or self.manifest is None:
            return None
        from contam_guard.reword.index import RewordIndex  # noqa: PLC0415

        reword_index = RewordIndex.build(self.manifest, self.index)
        return RewordFamily(self.index, self.key, reword_index, self.reword_settings, compiled=self.large)

    def reword_notices(self) -> list[str]:
        """The rewording rules' notices (sets registered before them)."""
        if self.reword is None:
            return []
        from contam_guard.core.families.reword import registered_before  # noqa: PLC0415

        return registered_before(self.manifest, self.index, self.reword.reword_index, self.rules)

    def observe(self, batch: Batch, state: ScanState | None) -> list[FamilyRows]:
        """Every family's pairs in ``batch``; with ``state``, its totals updated."""
        rows = [ngram.observe(batch, self.index, None if state is None else state.ngram)]
        if self.reword is not None:
            rows.append(self.reword.observe(batch, None if state is None else state.reword))
        return rows

    @cached_property
    def prefilter(self) -> Any:
        """The compiled prefilter over the manifest (``engine.prefilter``), or None where it
        cannot run (the numpy kernels) or the input is small."""
        from contam_guard.engine.prefilter import Prefilter  # noqa: PLC0415

        if not self.large or not native.has_prefilter():
            return None
        words = None if self.reword is None else self.reword.stage.kernel
        return Prefilter(self.index, windows=self.windows, key=self.key, words=words)

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
        return np.unique(np.concatenate(notable))

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

    def add_jsonl_block(
        self,
        acc: Accumulator,
        block: bytes,
        source: str,
        first_line: int,
        first_record: int,
        first_offset: int,
        options: ReadOptions | None,
    ) -> None:
        from contam_guard.engine.prefilter import line_format  # noqa: PLC0415
        from contam_guard.readers.blocks import LineBlock  # noqa: PLC0415
        from contam_guard.readers.jsonl import JsonLineParser  # noqa: PLC0415

        read = options or ReadOptions()
        parser = JsonLineParser(source, read)
        lines = line_format("jsonl", read)
        if self.prefilter is not None and lines is not None:
            view = memoryview(block)
            acc.add_block(
                LineBlock(
                    view, self.prefilter.filter(view, lines), first_line, first_offset, first_record, parser
                )
            )
            return
        from contam_guard.readers.blocks import parsed_block  # noqa: PLC0415

        acc.add_records(parsed_block(block, parser, first_line, first_record, first_offset), source=source)

    # --- finishing ------------------------------------------------------------------------

    def finish(self, acc: Accumulator | ScanState, options: FinishOptions | None = None) -> Any:
        """The report of a finished scan: verdicts, allowlist, markers, redaction (see the
        module's docstring)."""
        from contam_guard.core.finish import finish  # noqa: PLC0415

        state = acc.state if isinstance(acc, Accumulator) else acc
        return finish(self, state, options or FinishOptions())

    def with_rules(self, rules: Any) -> Scanner:
        """This scanner with other rule settings (a ``config.Rules``)."""
        return Scanner(
            self.manifest,
            self.config.model_copy(update={"rules": rules}),
            self.key,
            root=self.root,
            manifest_path=self.manifest_path,
            max_pairs=self.max_pairs,
            allowlist_path=self.allowlist_path,
            notices=self.notices,
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


__all__ = ["FinishOptions", "Scanner"]
