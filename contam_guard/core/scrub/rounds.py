"""Rounds of the filter until nothing more collides (see the package docstring, "Rounds").

Round 1 applies the filter to the records the counting pass found. After a round, the count of
each golden n-gram over the scrubbed corpus is known without re-reading it: the input count,
minus the touched records that held it, plus the pieces that still hold it. If some n-gram now
occurs in 1..``max_doc_freq`` records, another round removes it; otherwise the corpus is final.

Each round reads the inputs once and parses only touched records, found by their line numbers
(plus, in the rare round where an n-gram that was common has become rare, every record, to find
where it is).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.arrays import sorted_unique
from contam_guard.core.scrub.count import Candidates, InputTotals, Job, stamp
from contam_guard.core.scrub.cuts import CutSettings, Mode, Removal, cut
from contam_guard.core.scrub.golden import GoldenNgrams
from contam_guard.core.scrub.lines import (
    Line,
    Parsed,
    changed_error,
    lines_in,
    open_blocks,
    open_lines,
    parse_line,
)
from contam_guard.core.spec.hashing import HashKey
from contam_guard.errors import InputError
from contam_guard.io.batching import batches
from contam_guard.io.readers import ReadOptions

IntArray = NDArray[np.int64]


@dataclass
class RecordState:
    """A touched record: what is kept of it so far and every removal (absolute offsets)."""

    file: int
    record: int
    line: int
    length: int = -1
    mode: Mode | None = None
    item_id: object = None
    kept: list[tuple[int, int]] = field(default_factory=list)
    removed: list[tuple[int, Removal]] = field(default_factory=list)
    """(round, removal), in round order."""


ModeSetting = Literal["auto", "pieces", "drop"]


@dataclass(frozen=True, slots=True)
class Taken:
    """A record a round reads: its state when it is touched already (None: a record that may
    hold an n-gram that has just become rare), its number, line and parsed text."""

    state: RecordState | None
    record: int
    line: int
    parsed: Parsed

    def size(self) -> int:
        return len(self.parsed.text)


@dataclass(frozen=True)
class RoundSettings:
    mode: ModeSetting
    cut: CutSettings
    max_doc_freq: int
    read: ReadOptions
    batch_chars: int


@dataclass
class RoundsResult:
    states: dict[tuple[int, int], RecordState]
    counts: IntArray
    """Final count of each golden n-gram over the scrubbed corpus (distinct records)."""
    rounds: int


def record_mode(fmt: str, parsed: Parsed, setting: ModeSetting, display: str, line: int) -> Mode:
    """The mode for one record: the setting, or under ``auto`` the default for its shape."""
    if setting == "drop":
        return "drop"
    if fmt == "text":
        return "pieces"
    if setting == "pieces":
        if parsed.target is None:
            raise InputError(
                display,
                "--mode pieces needs the text in one string field, but this record's text is "
                "several strings (every string is read without --field; chat turns; a list)",
                line=line,
                hint="use --mode drop (the default for such records), or name one string field, "
                "e.g. --field text",
            )
        return "pieces"
    return "pieces" if parsed.target is not None and len(parsed.target) == 1 else "drop"


class _Round:
    """One round over every input: apply the active n-grams, recount what remains."""

    def __init__(
        self,
        number: int,
        active: NDArray[np.bool_],
        locate: bool,
        golden: GoldenNgrams,
        key: HashKey | None,
        settings: RoundSettings,
        states: dict[tuple[int, int], RecordState],
        in_touched: IntArray,
    ) -> None:
        self.number, self.active, self.locate = number, active, locate
        self.golden, self.key, self.settings, self.states = golden, key, settings, states
        self.in_touched = in_touched
        self.piece_counts = np.zeros(golden.size, dtype=np.int64)
        self.changed = False

    def run(self, jobs: list[Job], totals: InputTotals) -> None:
        for number, job in enumerate(jobs):
            if stamp(job.path) != totals.stamps[number]:
                raise changed_error(job.display)
            lines = self._every_record(job, number) if self.locate else self._touched_records(job, number)
            self.take(job, number, (self._parsed(job, line, state) for line, state in lines))

    def take(self, job: Job, number: int, items: Iterable[Taken]) -> None:
        """Cut the records ``items`` give, in the engine's batches (``io.batching``)."""
        for chunk in batches(items, self.settings.batch_chars, Taken.size):
            touched = [(item.state, item.parsed) for item in chunk if item.state is not None]
            others = [(item.record, item.line, item.parsed) for item in chunk if item.state is None]
            self._flush(job, number, touched, others)

    def _every_record(self, job: Job, number: int) -> Iterator[tuple[Line, RecordState | None]]:
        """Every record: an n-gram that was common has become rare, and any record may hold it
        (rare: see the package docstring)."""
        with open_lines(job.path, job.display, job.fmt) as (_, lines):
            for line in lines:
                if line.record is not None and line.record not in job.keep:
                    yield line, self.states.get((number, line.record))

    def _touched_records(self, job: Job, number: int) -> Iterator[tuple[Line, RecordState | None]]:
        """Only the touched records, found by their line numbers."""
        touched = {state.line: state for (file, _), state in self.states.items() if file == number}
        wanted = sorted(touched)
        with open_blocks(job.path, job.display, job.fmt) as (_, blocks):
            for block in blocks:
                for line_number in lines_in(block, wanted):
                    state = touched[line_number]
                    start, end = block.span(line_number)
                    yield Line(line_number, bytes(block.data[start:end]), state.record), state

    def _parsed(self, job: Job, line: Line, state: RecordState | None) -> Taken:
        assert line.record is not None
        parsed = parse_line(job.fmt, line, job.display, self.settings.read)
        if state is not None and (state.line != line.number or state.length not in (-1, len(parsed.text))):
            raise changed_error(job.display, line.number)
        return Taken(state, line.record, line.number, parsed)

    def _flush(
        self,
        job: Job,
        number: int,
        batch: list[tuple[RecordState, Parsed]],
        others: list[tuple[int, int, Parsed]],
    ) -> None:
        if others:  # find records holding an n-gram that has just become rare
            hits = self.golden.find_segmented([p.segments for _, _, p in others], self.key)
            found = sorted_unique(hits.doc[self.active[hits.key]])
            for doc in found.tolist():
                record, line, parsed = others[doc]
                state = RecordState(number, record, line)
                self.states[(number, record)] = state
                batch.append((state, parsed))
        if not batch:
            return
        fresh = [(s, p) for s, p in batch if s.length < 0]
        for state, parsed in fresh:
            state.length = len(parsed.text)
            state.kept = [(0, state.length)]
            state.mode = record_mode(job.fmt, parsed, self.settings.mode, job.display, state.line)
            state.item_id = parsed.item_id
        # The n-grams of the current pieces of every touched record in the batch.
        fresh_ids = {id(s) for s, _ in fresh}
        docs: list[tuple[RecordState, int, int]] = [(s, a, b) for s, _ in batch for a, b in s.kept]
        parsed_of = {id(s): p for s, p in batch}
        texts = {id(s): p.text for s, p in batch}
        # A whole record is hashed segment by segment; a piece (of a one-string record) as it is.
        hits = self.golden.find_segmented(
            [
                parsed_of[id(s)].segments if (a, b) == (0, s.length) else (texts[id(s)][a:b],)
                for s, a, b in docs
            ],
            self.key,
        )
        # A record entering the touched set (its one piece is still the whole record) no longer
        # counts as an untouched input record for the n-grams it holds.
        entering = np.array([id(s) in fresh_ids for s, _, _ in docs], dtype=np.bool_)[hits.doc]
        _add_distinct(self.in_touched, hits.doc[entering], hits.key[entering])
        lengths = np.array([b - a for _, a, b in docs], dtype=np.int64)
        modes: list[Mode] = [s.mode or "pieces" for s, _, _ in docs]
        outcomes = cut(hits.where(self.active[hits.key]), lengths, modes, self.settings.cut)
        unchanged = ~np.isin(hits.doc, np.array(list(outcomes), dtype=np.int64))
        _add_distinct(self.piece_counts, hits.doc[unchanged], hits.key[unchanged])
        new_pieces: list[str] = []
        self.changed |= bool(outcomes)
        for doc, outcome in outcomes.items():
            state, start, end = docs[doc]
            state.kept.remove((start, end))
            state.kept.extend((start + a, start + b) for a, b in outcome.kept)
            state.kept.sort()
            state.removed.extend((self.number, r.shifted(start)) for r in outcome.removed)
            new_pieces.extend(texts[id(state)][start + a : start + b] for a, b in outcome.kept)
        after = self.golden.find(new_pieces, self.key)
        _add_distinct(self.piece_counts, after.doc, after.key)


def _add_distinct(counts: IntArray, doc: IntArray, gram: IntArray) -> None:
    """Add to ``counts[g]`` the number of distinct docs among the (doc, n-gram g) rows."""
    if doc.size == 0:
        return
    stride = int(doc.max()) + 1
    grams, per_gram = np.unique(sorted_unique(gram * stride + doc) // stride, return_counts=True)
    counts[grams] += per_gram  # grams are distinct: a plain fancy-index add is exact


RoundStep = Callable[[int, NDArray[np.bool_], bool], tuple[IntArray, IntArray, bool]]
"""One round (``number``, the active n-grams, whether to look through every record): returns
the n-grams' records that entered the touched set this round, the n-grams' records among the
pieces, and whether anything was cut. The local rounds are ``_Round``; Spark's run in tasks."""


def loop_rounds(counts: IntArray, limit: int, step: RoundStep) -> tuple[IntArray, int]:
    """Run rounds until no golden n-gram occurs in 1..``limit`` records; returns the final count
    of each n-gram over the scrubbed corpus and the number of rounds. The one loop both the local
    scrub and Spark's run."""
    in_touched = np.zeros(counts.size, dtype=np.int64)
    current = counts
    active = (current > 0) & (current <= limit)
    locate = False  # round 1's records were found by the counting pass
    rounds = 0
    while active.any():
        rounds += 1
        entering, pieces, changed = step(rounds, active, locate)
        if not changed:
            # Every active n-gram occurs somewhere (the counts say so) and the round looked
            # everywhere it could be, so it must have cut something: never loop forever.
            raise RuntimeError(f"scrub round {rounds} removed nothing although n-grams were active")
        in_touched += entering
        untouched = counts - in_touched  # records outside the touched set holding each n-gram
        current = untouched + pieces
        active = (current > 0) & (current <= limit)
        locate = bool((untouched[active] > 0).any())
    return current, rounds


def run_rounds(
    jobs: list[Job],
    golden: GoldenNgrams,
    key: HashKey | None,
    settings: RoundSettings,
    counts: IntArray,
    candidates: Candidates,
    totals: InputTotals,
) -> RoundsResult:
    """Apply rounds until no golden n-gram occurs in 1..max_doc_freq records."""
    states = {
        (f, r): RecordState(f, r, line)
        for f, r, line in zip(candidates.file.tolist(), candidates.record.tolist(), candidates.line.tolist())
    }

    def step(number: int, active: NDArray[np.bool_], locate: bool) -> tuple[IntArray, IntArray, bool]:
        entering = np.zeros(golden.size, dtype=np.int64)
        one = _Round(number, active, locate, golden, key, settings, states, entering)
        one.run(jobs, totals)
        return entering, one.piece_counts, one.changed

    current, rounds = loop_rounds(counts, settings.max_doc_freq, step)
    return RoundsResult(states=states, counts=current, rounds=rounds)
