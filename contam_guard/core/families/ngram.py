"""The n-gram family: shared runs of words and shared 50-character windows.

What GPT-3's, PaLM's and Llama 2's rules read (the longest shared run R[i] at every word
position of an item, ``core.match.matcher``) and GPT-4's (the item's windows found), per pair and,
over everything scanned, per item (``NgramTotals``: mergeable, so that a scan split over
processes adds up to one process's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.batch import Batch
from contam_guard.core.families.base import FamilyRows, Located
from contam_guard.core.match.chains import NO_CHAINS, ChainSettings
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.match.matcher import Hits, ItemTotals, PairTable, match_batch, match_hits
from contam_guard.core.pairs import Column
from contam_guard.core.spec.hashing import WINDOW_CHARS

NAME = "ngram"
NOTABLE_RUN = 8
"""A pair is listed when it shares a run of this many words, or a window."""

COLUMNS = (
    Column(
        "longest_run", "longest_run", lambda s: s.longest_run, "longest run {} words", "longest shared run"
    ),
    Column("ngrams8_found", "ngrams8_found", lambda s: s.ngrams8_found, "{} 8-grams", "8-grams found"),
    Column(
        "covered_l10",
        "tokens_covered_L10",
        lambda s: s.covered_l10,
        "{} words in runs of 10+",
        "words in shared runs of 10+",
    ),
    Column("window_hits", "sub50_hits", lambda s: s.window_hits, "{} windows", "50-character windows found"),
)

IntArray = NDArray[np.int64]


@dataclass
class NgramTotals:
    """Per item position over everything scanned: R[i], each window posting found, and the
    chained spans when the scan chains (``core.match.chains``)."""

    totals: ItemTotals

    @classmethod
    def empty(cls, index: ManifestIndex, chains: ChainSettings = NO_CHAINS) -> NgramTotals:
        return cls(ItemTotals.empty(index, chains))

    def merge(self, other: NgramTotals) -> None:
        mine, theirs = self.totals, other.totals
        for own, more in ((mine.run, theirs.run), (mine.skip, theirs.skip), (mine.gapped, theirs.gapped)):
            if own is not None and more is not None:
                at = np.flatnonzero(more)
                own[at] = np.maximum(own[at], more[at])
        mine.window_found[np.flatnonzero(theirs.window_found)] = True

    def __getstate__(self) -> _State:
        # Sparse: a part of a scan touches a few of the manifest's positions, and the dense
        # arrays are manifest-sized.
        t = self.totals
        at = np.flatnonzero(t.run)
        found = np.flatnonzero(t.window_found)
        chained = (_sparse(t.skip), _sparse(t.gapped))
        return t.run.size, t.window_found.size, at, t.run[at], found, t.chains, chained

    def __setstate__(self, state: _State) -> None:
        runs, windows, at, values, found, chains, (skip, gapped) = state
        totals = ItemTotals(
            run=np.zeros(runs, dtype=np.int64), window_found=np.zeros(windows, dtype=np.bool_), chains=chains
        )
        totals.run[at] = values
        totals.window_found[found] = True
        totals.skip, totals.gapped = _dense(skip, runs), _dense(gapped, runs)
        self.totals = totals


_Sparse = tuple[IntArray, IntArray] | None
_State = tuple[int, int, IntArray, IntArray, IntArray, ChainSettings, tuple[_Sparse, _Sparse]]


def _sparse(flat: IntArray | None) -> _Sparse:
    if flat is None:
        return None
    at = np.flatnonzero(flat)
    return at, flat[at]


def _dense(kept: _Sparse, size: int) -> IntArray | None:
    if kept is None:
        return None
    flat = np.zeros(size, dtype=np.int64)
    flat[kept[0]] = kept[1]
    return flat


def observe(
    batch: Batch, index: ManifestIndex, totals: NgramTotals | None, chains: ChainSettings = NO_CHAINS
) -> FamilyRows:
    """The batch's pairs; ``totals`` updated unless None (records counted elsewhere already,
    then chained as ``chains`` says)."""
    scratch = totals.totals if totals is not None else ItemTotals.empty(index, chains)
    table = match_batch(index, batch.features, scratch, groups=batch.units.first_unit)
    return rows(table, batch)


def observe_hits(
    index: ManifestIndex, grams: Hits, windows: Hits, records: int, totals: NgramTotals
) -> PairTable:
    """The pairs of ``records`` records from the prefilter's hits; ``totals`` updated."""
    return match_hits(index, grams, windows, records, totals.totals)


def notable(table: PairTable) -> NDArray[np.bool_]:
    listed = (table.longest >= NOTABLE_RUN) | (table.window_hits > 0)
    if table.chained is not None:  # a copy cut into short runs by small edits
        listed |= table.chained >= NOTABLE_RUN
    return np.asarray(listed)


def NUMBERS(table: PairTable) -> dict[str, IntArray]:  # noqa: N802 (the family's columns, by name)
    """The family's columns of a pair table."""
    return {
        "longest_run": table.longest,
        "ngrams8_found": table.ngrams8_found,
        "covered_l10": table.covered_l10,
        "window_hits": table.window_hits,
    }


def rows(table: PairTable, batch: Batch) -> FamilyRows:
    features, first_unit = batch.features, batch.units.first_unit
    record_words = features.record_words[first_unit]
    record_chars = features.record_chars[first_unit]

    def locate(row: int) -> Located | None:
        record = int(table.record[row])
        longest = int(table.longest[row])
        if longest >= 5:
            first = int(record_words[record] + table.run_start[row])
            unit = int(np.searchsorted(features.record_words, first, side="right")) - 1
            end = int(features.word_end[first + longest - 1])
            return Located(unit, int(features.word_start[first]), end, "run")
        if table.window_hits[row] > 0:
            first = int(record_chars[record] + table.window_at[row])
            unit = int(np.searchsorted(features.record_chars, first, side="right")) - 1
            start = int(features.char_offset[first])
            return Located(unit, start, int(features.char_offset[first + WINDOW_CHARS - 1]) + 1, "window")
        return None

    return FamilyRows(
        record=table.record,
        item=table.item,
        numbers=NUMBERS(table),
        notable=notable(table),
        locate=locate,
    )
