"""Scan training files against the manifest: stream, batch, hash, match. Never prints.

Records are read one file at a time and gathered into batches of about ``batch_chars``
characters; each batch is hashed and matched in whole-array passes. Memory stays flat: only the
per-item totals (manifest-sized) and the notable pairs (a run of 8+ words or a shared window)
are kept, each with a short snippet of the training side, at most ``max_pairs`` per item (the
rest counted exactly, by shared run: ``engine.pairs``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from contam_guard.config import MAX_PAIRS_PER_ITEM
from contam_guard.engine import prefilter as prefilter_status
from contam_guard.engine.arrays import sorted_unique
from contam_guard.engine.batching import batches
from contam_guard.engine.index import ManifestIndex
from contam_guard.engine.matcher import Hits, ItemTotals, PairTable, match_batch, match_hits
from contam_guard.engine.pairs import PairStore, Unlisted
from contam_guard.engine.prefilter import FilteredBlock, LineFormat, Prefilter, line_format
from contam_guard.engine.stats import ItemStats, item_stats
from contam_guard.errors import InputError
from contam_guard.readers import (
    ReadOptions,
    Record,
    UnsupportedFileError,
    detect_format,
    read_records,
)
from contam_guard.readers.blocks import LineBlock
from contam_guard.readers.documents import Document, documents, grouped, line_of
from contam_guard.readers.fields import KEY_MARK, general_path
from contam_guard.text.features import TextFeatures, extract_features
from contam_guard.text.hashing import WINDOW_CHARS, HashKey

if TYPE_CHECKING:
    from contam_guard.reword.scan_pass import RewordStats

SNIPPET_CONTEXT = 60
ProgressFn = Callable[[int], None]
NOTABLE_RUN = 8


@dataclass(frozen=True)
class Source:
    path: Path
    display: str
    """The name shown in reports (relative to where the user ran the command)."""
    lines: frozenset[int] | None = None
    """When set, only records starting on these 1-based lines are scanned (the lines a git diff
    adds); record numbers and line numbers stay those of the whole file."""


@dataclass(frozen=True, slots=True)
class Snippet:
    """Training-side text around a shared run: ``before``, the shared ``run``, ``after``."""

    before: str
    run: str
    after: str
    start: int
    """Character offset of ``run`` in the record."""
    span: str = ""
    """The allowlist digest of ``run`` (``engine.pairs.run_span``), when it was taken before the
    run was changed for display (``--redact-pii``); "" when ``run`` is the record's text."""


@dataclass(frozen=True, slots=True)
class PairRow:
    """A notable (test item, training record) pair and its statistics against that record.

    ``field`` is the path of the record's string holding the snippet (the longest shared run,
    or else the first shared window): ``completion``, ``messages[2].content``; "" for text; for
    a run that crosses strings the first and the last, ``sentences[0]..sentences[3]``
    (``readers.documents``). ``line`` is the file line the run starts on.
    """

    item: int
    source: str
    record: int
    line: int | None
    field: str
    longest_run: int
    ngrams8_found: int
    covered_l10: int
    window_hits: int
    snippet: Snippet
    allowed_inline: bool
    numbers_run: int = 0
    """Issue 15: the longest shared run with numbers masked (``rules.numbers``; 0 under 5)."""
    reworded: float = 0.0
    """Issue 15: the reworded score of the pair (``rules.reworded``)."""

    NUMBERS = ("longest_run", "ngrams8_found", "covered_l10", "window_hits")
    """The statistics of the pair (what Spark's tasks send back as columns of these names)."""

    @classmethod
    def of(
        cls,
        table: PairTable,
        row: int,
        *,
        source: str,
        record: int,
        line: int | None,
        field: str,
        snippet: Snippet,
        allowed_inline: bool,
    ) -> PairRow:
        """Row ``row`` of the engine's pair table, for the record named by the rest."""
        return cls(
            item=int(table.item[row]),
            source=source,
            record=record,
            line=line,
            field=field,
            longest_run=int(table.longest[row]),
            ngrams8_found=int(table.ngrams8_found[row]),
            covered_l10=int(table.covered_l10[row]),
            window_hits=int(table.window_hits[row]),
            snippet=snippet,
            allowed_inline=allowed_inline,
        )

    @property
    def in_field(self) -> str:
        """``, field messages[2].content`` for reports; "" for a plain-text record."""
        return f", field {self.field}" if self.field else ""


@dataclass
class ScanResult:
    index: ManifestIndex
    totals: ItemTotals
    pairs: list[PairRow] = field(default_factory=list)
    """The notable pairs, by file (scan order), record and item: at most ``max_pairs`` per item."""
    unlisted: dict[int, Unlisted] = field(default_factory=dict)
    """Per item with more pairs than ``max_pairs``: the others, counted by shared run."""
    max_pairs: int = 0
    """Pairs listed per item (0: all)."""
    reword: RewordStats | None = None
    """Issue 15: the rewording rules' numbers (``reword.scan_pass``), when they ran."""
    store: PairStore | None = field(default=None, repr=False, compare=False)
    """Where pairs go while ``scan`` runs (``settle`` moves them to ``pairs`` and ``unlisted``);
    None: straight into ``pairs``."""
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Notices for files that were not scanned (unknown or binary type)."""
    records: int = 0
    chars: int = 0
    asked: tuple[str, ...] = ()
    """The ``--field`` paths the scan read (empty: every string of every record)."""
    fields: dict[str, set[str]] = field(default_factory=dict)
    """Per file: the fields read (segment paths without list positions, ``messages[].content``)
    as seen in the records that were parsed in Python: all of them on the exact path; on the
    prefilter's path (which reads the same strings), the first records and the notable ones."""

    def fields_note(self, limit: int = 8) -> list[str]:
        """What was read, for the summary: the ``--field`` paths, or per file (the first
        ``limit``) the fields seen when every string was read."""
        if self.asked:
            return [f"fields read: {', '.join(self.asked)} (--field)"]
        notes = []
        for name in self.files[:limit]:
            seen = sorted(general for general in self.fields.get(name, ()) if not general.endswith(KEY_MARK))
            shown = ", ".join(path or "(the text)" for path in seen)
            notes.append(f"{name}: every string read" + (f" (fields: {shown})" if shown else ""))
        if len(self.files) > limit:
            notes.append(f"... and {len(self.files) - limit} more file(s), every string read")
        return notes

    def item_stats(self) -> ItemStats:
        return replace(item_stats(self.index, self.totals), reword=self.reword)

    def add_pair(self, pair: PairRow) -> None:
        if self.store is not None:
            self.store.add(pair)
        else:
            self.pairs.append(pair)

    def settle(self) -> None:
        """Pairs in their final order (and, with a store, capped): call when the scan is done."""
        if self.store is None:
            order_pairs(self)
            return
        self.pairs = self.store.pairs()  # the store ranks files by scan order
        self.unlisted = self.store.unlisted()
        self.store = None


def scan(
    index: ManifestIndex,
    sources: Iterable[Source],
    options: ReadOptions,
    *,
    key: HashKey | None = None,
    windows: bool = True,
    batch_chars: int = 1 << 20,
    on_chars: ProgressFn | None = None,
    skip_unreadable: bool = False,
    max_pairs: int = MAX_PAIRS_PER_ITEM,
) -> ScanResult:
    """Scan every source; raise ``InputError`` on anything that cannot be read.

    With ``skip_unreadable`` (the user's explicit choice), a file that fails is noted in
    ``skipped`` with the reason instead, and the records read before the failure still count.
    At most ``max_pairs`` pairs are listed per item (0: all), the rest counted (``unlisted``).
    """
    store = PairStore(max_pairs)
    result = ScanResult(
        index=index, totals=ItemTotals.empty(index), asked=options.fields, max_pairs=max_pairs, store=store
    )
    sources = list(sources)
    # Manifest 2: a small scan looks up the views' stored tables; a large one builds the
    # prefilter's in-memory tables first (``ManifestIndex.prefers_tables``).
    large = index.prefers_tables(sum(_size(s.path) for s in sources), windows=windows)
    prefilter = Prefilter(index, windows=windows, key=key) if large else None
    for source in sources:
        store.file(source.display)
        fmt = detect_format(source.path)
        if fmt is None and not source.path.is_dir():
            result.skipped.append(f"{source.display}: not a data file type contam-guard reads")
            continue
        try:
            lines = line_format(fmt, options)
            if prefilter is not None and lines is not None and source.lines is None:
                _scan_filtered(result, source, options, prefilter, lines, batch_chars, on_chars)
            else:
                records = read_records(source.path, source.display, options)
                if options.group_by is not None:
                    records = grouped(records)
                if source.lines is not None:
                    records = _on_lines(records, source.lines)
                for batch in record_batches(records, batch_chars):
                    before = result.chars
                    scan_batch(result, batch, key, windows)
                    if on_chars is not None:
                        on_chars(result.chars - before)
        except UnsupportedFileError as exc:
            result.skipped.append(f"{source.display}: {exc.problem}")
            continue
        except InputError as exc:
            if not skip_unreadable:
                raise
            result.skipped.append(f"unreadable, not scanned from there on (--skip-unreadable): {exc}")
            continue
        result.files.append(source.display)
    result.settle()
    return result


def _size(path: Path) -> int:
    """A file's size in bytes (0 for anything else: a folder, a missing file)."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def _scan_filtered(
    result: ScanResult,
    source: Source,
    options: ReadOptions,
    prefilter: Prefilter,
    lines: LineFormat,
    batch_chars: int,
    on_chars: ProgressFn | None,
) -> None:
    """Scan a JSONL or text file through the prefilter, block by block.

    Lines it proves clean are only counted; lines with hits are matched from the hits it
    listed (their text is read again only for a notable pair's snippet); the rest (anything it
    does not handle) are read and matched exactly, in batches as usual. If reading fails
    part-way, what was read before the failure is still matched and counted before the error
    goes on (``--skip-unreadable`` keeps it).
    """
    pending: list[Record] = []
    pending_chars = 0

    def flush() -> None:
        nonlocal pending, pending_chars
        if pending:
            scan_batch(result, pending, prefilter.key, prefilter.windows)  # key: issue 12.4
            pending, pending_chars = [], 0

    try:
        blocks = prefilter.blocks(source.path, source.display, options, lines)
        for number, block in enumerate(blocks):
            if number == 0:
                _sample_fields(result, block)
            before = result.chars
            exact, failure = _read_exact_lines(block)
            limit = len(block.lines.status) if failure is None else failure[0]
            _take_filtered(result, block, limit, prefilter.windows)
            exact_chars = sum(record.chars for record in exact)
            if on_chars is not None:
                on_chars(result.chars - before + exact_chars)
            pending += exact
            pending_chars += exact_chars
            if failure is not None:
                raise failure[1]
            if pending_chars >= batch_chars:
                flush()
    except InputError:
        flush()
        raise
    flush()


_FIELD_SAMPLE = 100


def _sample_fields(result: ScanResult, block: LineBlock[FilteredBlock]) -> None:
    """Parse the first lines the filter read (valid, so this raises nothing) for the census of
    fields: the filter reads the same strings, but never makes Python objects of them."""
    read = np.flatnonzero(
        (block.lines.status == prefilter_status.CLEAN) | (block.lines.status == prefilter_status.HITS)
    )
    count_fields(result, (block.record(int(k)) for k in read[:_FIELD_SAMPLE].tolist()))


def _read_exact_lines(block: LineBlock[FilteredBlock]) -> tuple[list[Record], tuple[int, InputError] | None]:
    """The lines the filter left to the exact path, read; stops at the first that fails."""
    records: list[Record] = []
    for k in np.flatnonzero(block.lines.status == prefilter_status.EXACT).tolist():
        try:
            records.append(block.record(k))
        except InputError as exc:
            return records, (k, exc)
    return records, None


def _take_filtered(result: ScanResult, block: LineBlock[FilteredBlock], limit: int, windows: bool) -> None:
    """Count the block's clean and hit lines before line ``limit``; match the hit lines."""
    lines = block.lines
    status = lines.status[:limit]
    counted = (status == prefilter_status.CLEAN) | (status == prefilter_status.HITS)
    result.records += int(np.count_nonzero(counted))
    result.chars += int(lines.chars[:limit][counted].sum())
    hit_lines, grams, windows_hits = lines.hit_records(limit)
    for first, last, some_grams, some_windows in _hit_slices(grams, windows_hits, int(hit_lines.size)):
        table = match_hits(result.index, some_grams, some_windows, last - first, result.totals)
        notable = _notable(table)
        if notable.size == 0:
            continue
        # Only a notable pair's record is read again: for its snippet, line and inline marker.
        wanted = sorted_unique(table.record[notable])
        units = Units.of([block.record(int(hit_lines[first + r])) for r in wanted.tolist()])
        features = extract_features(units.texts, windows=windows, spec=result.index.spec)
        count_fields(result, units.records)
        _add_pairs(result, table, notable, units, features, np.searchsorted(wanted, table.record))


MATCH_HITS = 1 << 19
"""Hits matched at once. A block whose every line hits (a copied test set) has millions: matched
in one piece, the matcher's arrays and the notable records' features took 250 MB."""


def _hit_slices(grams: Hits, windows: Hits, records: int) -> Iterator[tuple[int, int, Hits, Hits]]:
    """(first, last, grams, windows): the hits of records [first, last), renumbered from 0, in
    pieces of about ``MATCH_HITS`` hits (a record with more is a piece of its own)."""
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
    """``hits`` sorted by record (the filter lists them so already; the sort keeps their order)."""
    if bool(np.all(hits.record[1:] >= hits.record[:-1])):
        return hits
    order = np.argsort(hits.record, kind="stable")
    return Hits(hits.record[order], hits.at[order], hits.posting[order])


def cap_pairs(result: ScanResult, limit: int) -> None:
    """List at most ``limit`` pairs per item of a result collected without a ``PairStore`` (the
    Spark front end's), the others counted: what ``scan`` lists for the same data."""
    store = PairStore(limit)
    for name in result.files:
        store.file(name)
    for pair in result.pairs:
        store.add(pair)
    store.merge((), result.unlisted)
    result.pairs, result.unlisted, result.max_pairs = store.pairs(), store.unlisted(), limit


def order_pairs(result: ScanResult) -> None:
    """Sort pairs by file (in scan order), record and item: batch boundaries must not show.
    (Pairs collected without a ``PairStore``: the Spark workers' and ``dupes``.)"""
    files = {name: number for number, name in enumerate(dict.fromkeys(p.source for p in result.pairs))}
    result.pairs.sort(key=lambda p: (files[p.source], p.record, p.item))


def _on_lines(records: Iterator[Record], lines: frozenset[int]) -> Iterator[Record]:
    return (record for record in records if record.touches(lines))


def record_batches(records: Iterable[Record], batch_chars: int) -> Iterator[list[Record]]:
    """Records in batches of about ``batch_chars`` characters (``engine.batching.batches``)."""
    return batches(records, batch_chars, Record.size)


@dataclass(frozen=True)
class Units:
    """A batch of records as the engine's units: each of a record's documents is hashed on its
    own (``readers.documents``: its value strings as one, each key apart), and ``first_unit[r]``
    is record r's first document (``first_unit[-1]`` the count)."""

    records: list[Record]
    documents: list[Document]
    first_unit: NDArray[np.int64]

    @classmethod
    def of(cls, records: list[Record]) -> Units:
        per_record = [documents(record.segments) for record in records]
        counts = np.fromiter((len(d) for d in per_record), dtype=np.int64, count=len(records))
        first_unit = np.zeros(len(records) + 1, dtype=np.int64)
        np.cumsum(counts, out=first_unit[1:])
        return cls(records, [d for found in per_record for d in found], first_unit)

    @property
    def texts(self) -> list[str]:
        return [document.text for document in self.documents]


def count_fields(result: ScanResult, records: Iterable[Record]) -> None:
    """Add the records' segment paths to the per-file census (``ScanResult.fields``)."""
    for record in records:
        result.fields.setdefault(record.source, set()).update(
            general_path(segment.path) for segment in record.segments
        )


def scan_batch(result: ScanResult, batch: list[Record], key: HashKey | None, windows: bool) -> None:
    units = Units.of(batch)
    features = extract_features(units.texts, key=key, windows=windows, spec=result.index.spec)
    table = match_batch(result.index, features, result.totals, groups=units.first_unit)
    result.records += len(batch)
    result.chars += sum(record.chars for record in batch)
    count_fields(result, batch)
    _add_pairs(result, table, _notable(table), units, features, table.record)


def _notable(table: PairTable) -> NDArray[np.int64]:
    """The rows worth keeping: a run of 8+ words or a shared window."""
    return np.flatnonzero((table.longest >= NOTABLE_RUN) | (table.window_hits > 0))


def _add_pairs(
    result: ScanResult,
    table: PairTable,
    rows: NDArray[np.int64],
    units: Units,
    features: TextFeatures,
    feature_row: NDArray[np.int64],
) -> None:
    """Append the pair rows ``rows`` of ``table``; row r's record is ``units.records[feature_row[r]]``,
    hashed as the units of record ``feature_row[r]`` of ``features``."""
    record_words = features.record_words[units.first_unit]
    record_chars = features.record_chars[units.first_unit]
    for row in rows.tolist():
        at = int(feature_row[row])
        record = units.records[at]
        if table.longest[row] >= 5:
            first = int(record_words[at] + table.run_start[row])
            unit = int(np.searchsorted(features.record_words, first, side="right")) - 1
            start, end = (
                int(features.word_start[first]),
                int(features.word_end[first + int(table.longest[row]) - 1]),
            )
        else:
            first = int(record_chars[at] + table.window_at[row])
            unit = int(np.searchsorted(features.record_chars, first, side="right")) - 1
            start = int(features.char_offset[first])
            end = int(features.char_offset[first + WINDOW_CHARS - 1]) + 1
        document = units.documents[unit]
        result.add_pair(
            PairRow.of(
                table,
                row,
                source=record.source,
                record=record.index,
                line=line_of(record, document, start),
                field=document.field(start, end),
                snippet=_snippet(document, start, end),
                allowed_inline=record.allow,
            )
        )


def _snippet(document: Document, start: int, end: int) -> Snippet:
    """The shared run ``document.text[start:end]`` with some context on each side; ``start``
    counts from the beginning of the string the run starts in."""
    text = document.text
    return Snippet(
        before=text[max(start - SNIPPET_CONTEXT, 0) : start],
        run=text[start:end],
        after=text[end : end + SNIPPET_CONTEXT],
        start=document.local(start)[1],
    )


def check_readable(sources: Iterable[Source]) -> None:
    """Fail early, before any work, on a path that does not exist."""
    for source in sources:
        if not source.path.exists() and not source.path.is_symlink():
            raise InputError(source.display, "no such file or directory")
