"""The rewording rules' pass over what a scan read: per item its best numbers run and reworded
score, and the (item, record) pairs that reach a rule's bar.

It reads the sources the scan read completely (the same readers and options, a diff's lines
only), masks and stems each string's words (``words.word_lists``) and hashes them under the
manifest's spec and key. The numbers rule's runs are read over a record's documents as the
n-gram engine reads them (``readers.documents``: its value strings as one, so a run crosses
from one string into the next); the reworded score compares each string on its own, the unit
its windows were calibrated on (a question joined with its answer would dilute them). It runs
in Python over every record (the n-gram engine's compiled prefilter does not know these
views), so it costs more than a GPT-3 scan: see README, "What the rules catch".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from contam_guard.engine.batching import batches
from contam_guard.engine.scanner import Snippet
from contam_guard.readers import ReadOptions, Record, detect_format, read_records
from contam_guard.readers.documents import Document, documents, grouped
from contam_guard.reword.hashing import grams_of, unigrams_of
from contam_guard.reword.index import RewordIndex
from contam_guard.reword.matching import (
    REPORT_FLOOR,
    Scorer,
    best_per_pair,
    longest_runs,
    reworded_scores,
    windows,
)
from contam_guard.reword.numbers import PLACEHOLDER
from contam_guard.reword.words import word_lists
from contam_guard.text.hashing import HashKey
from contam_guard.text.normalise import TextSpec

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Bars:
    """What a pair needs to be kept: a masked run of ``numbers`` words (per item), a reworded
    score of ``reworded``; None for a rule that is off."""

    numbers: IntArray | None
    reworded: float | None


@dataclass(frozen=True)
class Hit:
    """A kept (item, record) pair: the best of its strings."""

    item: int
    source: str
    record: int
    line: int | None
    field: str
    text: str
    """The string holding the best score (for the snippet)."""
    numbers_run: int
    reworded: float
    allowed_inline: bool
    shown: Snippet | None = None
    """The snippet already taken from ``text`` (a Spark task's hit, whose ``text`` is cut to
    it); None: ``reword.step`` takes it from ``text``."""


@dataclass
class RewordStats:
    """Per item, over everything read: the longest masked run with one record (0 under 5
    words), and the best reworded score with one record (0 under ``matching.REPORT_FLOOR``, or
    under the rule's threshold when that is lower: such pairs are never scored)."""

    index: RewordIndex
    numbers_run: IntArray
    reworded: FloatArray
    hits: list[Hit] = field(default_factory=list)

    @classmethod
    def empty(cls, index: RewordIndex) -> RewordStats:
        return cls(index, np.zeros(index.items, np.int64), np.zeros(index.items, np.float64))


@dataclass(frozen=True)
class _Unit:
    record: Record
    path: str
    text: str


@dataclass(frozen=True)
class _Document:
    record: Record
    document: Document

    def size(self) -> int:
        return len(self.document.text)

    @property
    def unit(self) -> _Unit:
        text = self.document.text
        return _Unit(self.record, self.document.field(0, len(text)), text)


def run(
    index: RewordIndex,
    records: Iterable[Record],
    spec: TextSpec,
    key: HashKey | None,
    bars: Bars,
    batch_chars: int = 1 << 20,
) -> RewordStats:
    """Match every string of ``records`` against the derived views."""
    accumulator = Accumulator(index, spec, key, bars)
    accumulator.add(records, batch_chars)
    return accumulator.stats()


def scorers_for(index: RewordIndex, bars: Bars) -> list[Scorer]:
    """The reworded rule's scorers of ``index`` at the floor ``bars`` need (none when it is off)."""
    if bars.reworded is None:
        return []
    return [Scorer(target, min(bars.reworded, REPORT_FLOOR)) for target in index.words]


class Accumulator:
    """The pass over records given in any number of calls (a Spark task gives its partition's
    batches): per item the maxima, per (item, record) the best hit. Maxima and best hits do not
    depend on how the records were split, so partial passes merge (``keep``) into the one pass."""

    def __init__(
        self,
        index: RewordIndex,
        spec: TextSpec,
        key: HashKey | None,
        bars: Bars,
        scorers: Sequence[Scorer] | None = None,
    ) -> None:
        """``scorers``: ``scorers_for(index, bars)`` kept from an earlier pass over the same
        index (they keep what they decoded), or None for new ones."""
        self.spec = spec
        self.key = key
        self.bars = bars
        self.scorers = scorers_for(index, bars) if scorers is None else scorers
        self._stats = RewordStats.empty(index)
        self._best: dict[tuple[int, str, int], Hit] = {}

    def add(self, records: Iterable[Record], batch_chars: int = 1 << 20) -> None:
        """Match every document of ``records`` (``readers.documents``: a record's values as one,
        each key on its own), as the n-gram engine reads them."""
        found = (_Document(r, d) for r in records for d in documents(r.segments))
        for batch in batches(found, batch_chars, _Document.size):
            _batch(self._stats, batch, self.spec, self.key, self.bars, self.scorers, self._best)

    def stats(self) -> RewordStats:
        """What was found so far, the hits by (item, source, record)."""
        self._stats.hits = sorted(self._best.values(), key=lambda h: (h.item, h.source, h.record))
        return self._stats


def _batch(
    stats: RewordStats,
    batch: Sequence[_Document],
    spec: TextSpec,
    key: HashKey | None,
    bars: Bars,
    scorers: Sequence[Scorer],
    best: dict[tuple[int, str, int], Hit],
) -> None:
    index = stats.index
    strings = [_Unit(d.record, s.path, s.text) for d in batch for s in d.document.segments]
    masked, content = word_lists([u.text for u in strings], spec)
    # Found pairs by (unit, item): units are the strings, then the documents (len(strings) + d).
    found: dict[tuple[int, int], list[float]] = {}
    if bars.numbers is not None:
        unit, item, length = longest_runs(grams_of(_joined(masked, batch), key), index)
        np.maximum.at(stats.numbers_run, item, length)
        keep = length >= bars.numbers[item]
        for u, i, r in zip(unit[keep].tolist(), item[keep].tolist(), length[keep].tolist()):
            found.setdefault((len(strings) + u, i), [0, 0.0])[0] = r
    if bars.reworded is not None:
        sizes = np.array([len(c) for c in content], dtype=np.int64)
        owner, start, end = windows(sizes)
        lists = [content[u][s:e] for u, s, e in zip(owner.tolist(), start.tolist(), end.tolist())]
        hashes, first = unigrams_of(lists, key)
        window, item, score = reworded_scores(hashes, first, scorers)
        unit, item, score = best_per_pair(owner[window], item, score, index.items)
        np.maximum.at(stats.reworded, item, score)
        keep = score >= bars.reworded
        for u, i, s in zip(unit[keep].tolist(), item[keep].tolist(), score[keep].tolist()):
            found.setdefault((u, i), [0, 0.0])[1] = s
    for (u, i), (r, s) in found.items():
        _keep(best, strings[u] if u < len(strings) else batch[u - len(strings)].unit, i, int(r), float(s))


def _joined(masked: list[list[str]], batch: Sequence[_Document]) -> list[list[str]]:
    """Each document's masked words: its strings' lists in order, one placeholder where a number
    ends one string and another begins the next (what masking the joined text gives)."""
    lists: list[list[str]] = []
    at = 0
    for found in batch:
        words: list[str] = []
        for part in masked[at : at + len(found.document.segments)]:
            words += part[1:] if words and part and words[-1] == part[0] == PLACEHOLDER else part
        at += len(found.document.segments)
        lists.append(words)
    return lists


def _keep(best: dict[tuple[int, str, int], Hit], unit: _Unit, item: int, run: int, score: float) -> None:
    record = unit.record
    hit = Hit(item, record.source, record.index, record.line, unit.path, unit.text, run, score, record.allow)
    keep(best, hit)


def keep(best: dict[tuple[int, str, int], Hit], hit: Hit) -> None:
    """Keep the pair's best numbers run and score over its strings (the field and text shown are
    those of the string with the better (run, score))."""
    name = (hit.item, hit.source, hit.record)
    old = best.get(name)
    if old is None:
        best[name] = hit
        return
    better = (hit.numbers_run, hit.reworded) > (old.numbers_run, old.reworded)
    best[name] = replace(
        old,
        field=hit.field if better else old.field,
        text=hit.text if better else old.text,
        shown=hit.shown if better else old.shown,
        numbers_run=max(hit.numbers_run, old.numbers_run),
        reworded=max(hit.reworded, old.reworded),
    )


def read_sources(
    sources: Iterable[tuple[Path, str, frozenset[int] | None]], options: ReadOptions
) -> Iterator[Record]:
    """The records of each (path, display name, diff lines or None), as the scan read them."""
    for path, display, lines in sources:
        if detect_format(path) is None and not path.is_dir():
            continue
        records = read_records(path, display, options)
        for record in records if options.group_by is None else grouped(records):
            if lines is None or record.touches(lines):
                yield record
