"""The scan's running state: add records or blocks of lines, merge with another part, finish.

An ``Accumulator`` holds what a scan has found so far (``ScanState``: every family's per-item
totals, the listed pairs with the count of the others, and what was read) and the compiled
machinery of its ``Scanner`` (the manifest's index, the prefilter, the rewording stage). Every
engine drives the same two entry points:

- ``add_records``: records read by any reader, or a library user's dicts and strings: hashed
  once (``core.batch``) and seen by every family;
- ``add_block``: a block of JSONL or text lines through the compiled prefilter, which proves
  most lines clean without making a Python object of them; only the lines it cannot handle,
  and those with a notable pair, are read in Python.

Parts of a scan (``--jobs`` workers, Spark or Ray partitions) merge (``merge``): totals by
maximum, pairs through a ``PairStore`` that lists the same pairs whatever order they arrive
in, provided the inputs are registered in scan order first (``note_input``). The state pickles
without the machinery (``ScanState``), so a worker sends back only what it found.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.batch import Batch
from contam_guard.core.families import COLUMN_NAMES
from contam_guard.core.families.base import FamilyRows, Located
from contam_guard.core.glued_lines import read_again
from contam_guard.core.match import prefilter as line_status
from contam_guard.core.match.arrays import sorted_unique
from contam_guard.core.match.pairs import run_span
from contam_guard.core.match.prefilter import line_format
from contam_guard.core.pairs import Pair, Snippet
from contam_guard.core.scan_pass import ScanPass
from contam_guard.core.state import ScanState
from contam_guard.errors import InputError
from contam_guard.io.batching import batches
from contam_guard.io.readers.base import ReadOptions, Record, Segment
from contam_guard.io.readers.blocks import LineBlock, parsed_block
from contam_guard.io.readers.documents import Document, line_of
from contam_guard.io.readers.fields import record_from_object
from contam_guard.io.readers.jsonl import JsonLineParser

if TYPE_CHECKING:
    from contam_guard.core.match.prefilter import FilteredBlock

IntArray = NDArray[np.int64]
SNIPPET_CONTEXT = 60
SNIPPET_CHARS = 200
"""A passage shown for a rewording (no shared run to centre on) is cut to this length."""
_FIELD_SAMPLE = 100
"""Lines of each block parsed for the summary's census of fields (the filter reads the same
strings without making Python objects of them)."""


class Accumulator:
    """A scan in progress over one manifest (see the module's docstring). ``scanner``: the
    manifest opened for scanning (a ``Scanner``, or the ``ScanPass`` it is)."""

    def __init__(self, scanner: ScanPass, state: ScanState | None = None) -> None:
        self.scanner = scanner
        self.state = state if state is not None else scanner.empty_state()
        self._next_index: dict[str, int] = {}
        """Per input fed through ``add_records``: the number its next record gets."""

    # --- inputs ---------------------------------------------------------------------------

    def note_input(self, name: str, rank: int | None = None) -> None:
        """Register input ``name`` (in scan order, or at ``rank`` in it) before any of its
        records arrive: which pairs are listed when an item has too many depends on it."""
        self.state.store.file(name, rank)

    def read_input(self, name: str) -> None:
        """Input ``name`` was read to its end: the summary names it."""
        if name not in self.state.census.files:
            self.state.census.files.append(name)

    def skip_input(self, notice: str) -> None:
        """An input was not read (or not to its end): say why in the summary (once)."""
        if notice not in self.state.census.skipped:
            self.state.census.skipped.append(notice)

    def add_records(
        self,
        records: Iterable[Record | Mapping[str, object] | str],
        *,
        source: str = "<records>",
        fields: Iterable[str] = (),
        options: ReadOptions | None = None,
    ) -> None:
        """Scan ``records``: ``Record``s from a reader, or dicts (every string read, as the
        command line reads a JSONL record; ``fields`` to read only those) or strings, numbered
        from 0 in the order given under the input name ``source`` (and on from there at the
        next call with the same ``source``). ``options``: the readers' options, for callers
        that have them (``fields`` is then theirs)."""
        read = options or ReadOptions(fields=tuple(fields))
        self.state.census.asked = self.state.census.asked or read.fields
        self.note_input(source)
        numbered = _as_records(records, source, read, start=self._next_index.get(source, 0))
        for batch in batches(numbered, self.scanner.batch_chars, Record.size):
            self.add_batch(batch)

    def add_batch(self, records: list[Record]) -> None:
        """Scan one batch of records (a few MB of text at most: see ``Scanner.batch_chars``)."""
        if not records:
            return
        for record in records:
            self._next_index[record.source] = max(self._next_index.get(record.source, 0), record.index + 1)
            self.note_input(record.source)
        batch = self.scanner.batch(records)
        self.scanner.note_read(batch.chars)  # records fed with no total said: compiled once many
        census = self.state.census
        census.records += len(records)
        census.chars += batch.chars
        census.count_fields(records)
        rows = self.scanner.observe(batch, self.state)
        self._list_pairs(batch, rows)

    def add_block(self, block: LineBlock[FilteredBlock]) -> None:
        """Scan a block of lines the prefilter read (``core.match.prefilter``); lines it left to
        the exact path are read here. If reading a line fails, what came before it in the block
        is still scanned, then the ``InputError`` goes on."""
        block = read_again(block)  # lines holding glued words: read twice, on the exact path
        lines = block.lines
        if block.first_record == 0 or not self.state.census.fields:
            self._sample_fields(block)
        exact: list[Record] = []
        failure: InputError | None = None
        limit = int(lines.status.size)
        for k in np.flatnonzero(lines.status == line_status.EXACT).tolist():
            try:
                exact.append(block.record(k))
            except InputError as exc:
                limit, failure = k, exc
                break
        self._add_filtered(block, limit)
        for batch in batches(iter(exact), self.scanner.batch_chars, Record.size):
            self.add_batch(batch)
        if failure is not None:
            raise failure

    def add_jsonl_block(
        self,
        block: bytes,
        *,
        source: str,
        first_line: int = 1,
        first_record: int = 0,
        first_offset: int = 0,
        fields: Iterable[str] = (),
        options: ReadOptions | None = None,
    ) -> None:
        """Scan whole JSONL lines (``block``; the last may lack its newline) through the compiled
        prefilter when it can read them, else line by line: line and record numbers count from
        ``first_line`` and ``first_record`` (where the block starts in its input); ``fields``
        as in ``add_records``."""
        read = options or ReadOptions(fields=tuple(fields))
        self.state.census.asked = self.state.census.asked or read.fields
        self.note_input(source)
        parser = JsonLineParser(source, read)
        lines = line_format("jsonl", read)
        prefilter = self.scanner.prefilter
        if prefilter is not None and lines is not None:
            view = memoryview(block)
            filtered = prefilter.filter(view, lines)
            self.add_block(LineBlock(view, filtered, first_line, first_offset, first_record, parser))
            return
        self.add_records(parsed_block(block, parser, first_line, first_record, first_offset), source=source)

    def merge(self, other: Accumulator | ScanState) -> Accumulator:
        """Add another part of the same scan (its inputs after this one's): returns self."""
        self.state.merge(other.state if isinstance(other, Accumulator) else other)
        return self

    # --- the prefilter's path -------------------------------------------------------------

    def _sample_fields(self, block: LineBlock[FilteredBlock]) -> None:
        status = block.lines.status
        read = np.flatnonzero((status == line_status.CLEAN) | (status == line_status.HITS))
        self.state.census.count_fields(block.record(int(k)) for k in read[:_FIELD_SAMPLE].tolist())

    def _add_filtered(self, block: LineBlock[FilteredBlock], limit: int) -> None:
        """Count the block's clean and hit lines before line ``limit``, accumulate their totals,
        and list the pairs of the lines with a notable one (read again, exactly)."""
        lines = block.lines
        status = lines.status[:limit]
        read = (status == line_status.CLEAN) | (status == line_status.HITS)
        census = self.state.census
        census.records += int(np.count_nonzero(read))
        census.chars += int(lines.chars[:limit][read].sum())
        notable = self.scanner.observe_block(block, limit, read, self.state)
        if notable.size == 0:
            return
        records = [block.record(int(k)) for k in notable.tolist()]
        census.count_fields(records)
        for batch in batches(iter(records), self.scanner.batch_chars, Record.size):
            hashed = self.scanner.batch(batch)
            self._list_pairs(hashed, self.scanner.observe(hashed, None))

    # --- pairs ----------------------------------------------------------------------------

    def _list_pairs(self, batch: Batch, rows: list[FamilyRows]) -> None:
        """Add every pair some family finds notable, with every family's numbers."""
        span = max(self.scanner.index.items, 1)
        keys = [r.record * span + r.item for r in rows]
        listed = sorted_unique(np.concatenate([k[r.notable] for k, r in zip(keys, rows)]))
        where = [_rows_of(k, listed) for k in keys]  # per family, the row of each listed pair
        units = batch.units
        for position, key in enumerate(listed.tolist()):
            record = units.records[key // span]
            numbers = dict.fromkeys(COLUMN_NAMES, 0.0)
            located: Located | None = None
            for family, row_of in zip(rows, where):
                row = int(row_of[position])
                if row >= 0:
                    numbers.update((name, float(values[row])) for name, values in family.numbers.items())
                    located = located or family.locate(row)
            if located is not None:  # a second reading's place is shown in the text it reads
                unit, start, end = units.original(located.unit, located.start, located.end)
                located = replace(located, unit=unit, start=start, end=end)
            unit = int(units.first_unit[key // span]) if located is None else located.unit
            document = units.documents[unit]
            start, end = (0, len(document.text)) if located is None else (located.start, located.end)
            pair = Pair(
                key % span,
                record.source,
                record.index,
                line_of(record, document, start),
                document.field(start, end),
                numbers,
                _snippet(document, located),
                record.allow,
            )
            self.state.store.add(pair)


def _rows_of(keys: IntArray, wanted: IntArray) -> IntArray:
    """The row of ``keys`` holding each of ``wanted`` (-1 where none does)."""
    if keys.size == 0:
        return np.full(wanted.size, -1, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], wanted), keys.size - 1)
    return np.where(keys[order][at] == wanted, order[at], -1)


def _snippet(document: Document, where: Located | None) -> Snippet:
    """The located text with some context on each side (a rewording: its passage, cut);
    ``start`` counts from the beginning of the string the snippet starts in."""
    text = document.text
    if where is None or where.kind == "reworded":
        start = 0 if where is None else where.start
        end = len(text) if where is None else where.end
        shown = text[start : min(end, start + SNIPPET_CHARS)]
        return Snippet(
            "",
            shown,
            "…" if end > start + SNIPPET_CHARS else "",
            document.local(start)[1],
            run_span(text[start:end]),  # the allowlist key: the whole string's words
            "reworded",
        )
    start, end = where.start, where.end
    return Snippet(
        before=text[max(start - SNIPPET_CONTEXT, 0) : start],
        run=text[start:end],
        after=text[end : end + SNIPPET_CONTEXT],
        start=document.local(start)[1],
        kind=where.kind,
    )


def _as_records(
    items: Iterable[Record | Mapping[str, object] | str], source: str, options: ReadOptions, *, start: int
) -> Iterator[Record]:
    for index, item in enumerate(items, start):
        if isinstance(item, Record):
            yield item
        elif isinstance(item, str):
            yield Record(source, index, None, (Segment("", item),))
        elif isinstance(item, Mapping):
            yield record_from_object(dict(item), options, source=source, index=index, line=None, raw=None)
        else:
            raise InputError(
                source, f"record {index} is a {type(item).__name__}, not a dict or a str", line=None
            )
