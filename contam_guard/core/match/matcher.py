"""Pair statistics: for each (test item, training record) pair, the numbers every rule needs.

For each word position i of a test item, R[i] is the longest run of words starting at i that
also occurs in one training record (exact for runs of 5 words or more, 0 below; the seed
article's definition). A shared run of r >= 5 words is exactly r - 4 consecutive shared
5-grams on one diagonal (test position - record position constant), so the engine looks up
every 5-gram of the batch in the manifest's postings, sorts the hits by (item, record,
diagonal, position) and reads the runs off as stretches of consecutive positions. Everything
word-based follows from R: GPT-3's longest run is max R, PaLM's found 8-grams the union of
[i, i + R[i] - 7) with R[i] >= 8 (the i with R[i] >= 8), Llama 2's covered words the union of
[i, i + R[i]) with R[i] >= 10. A run that is one template n-gram of the item
(``io.manifest.templates``) is left out of R before any of it.

For GPT-4's rule, the record's 50-character windows (alnum view) are looked up the same way;
h counts the item's window positions found.

All of it is whole-array numpy; no Python loop runs per token or per hit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.arrays import lex_order, sorted_unique, sparse_zeros
from contam_guard.core.match.chains import NO_CHAINS, ChainSettings, Runs, gapped_spans, runs_of, skip_spans
from contam_guard.core.match.index import ManifestIndex, Postings
from contam_guard.core.spec.features import TextFeatures
from contam_guard.core.spec.hashing import GRAM_N

IntArray = NDArray[np.int64]


@dataclass
class ItemTotals:
    """Per-item aggregates over everything scanned so far."""

    run: IntArray
    """R[i] over all records, flat: item g's words at ``index.word_base[g] + i``."""
    window_found: NDArray[np.bool_]
    """Whether each window posting (``index.windows``) occurs in some record."""
    chains: ChainSettings = NO_CHAINS
    """What the scan chains across gaps (``core.match.chains``); nothing by default."""
    skip: IntArray | None = None
    """Flat like ``run``: the longest Llama 2 skip-gram span starting at each word (None: off)."""
    gapped: IntArray | None = None
    """Flat like ``run``: the longest gapped run starting at each word (None: off)."""

    @classmethod
    def empty(cls, index: ManifestIndex, chains: ChainSettings = NO_CHAINS) -> ItemTotals:
        # Manifest-sized, and a small scan touches a few places: small pages.
        words = int(index.word_counts.sum())
        return cls(
            run=sparse_zeros(words, np.int64),
            window_found=sparse_zeros(int(index.window_counts.sum()), np.bool_),
            chains=chains,
            skip=sparse_zeros(words, np.int64) if chains.skip_budget else None,
            gapped=sparse_zeros(words, np.int64) if chains.gaps else None,
        )


@dataclass(frozen=True)
class PairTable:
    """One row per (item, record) pair sharing at least a 5-gram or a window, in a batch.

    ``run_start``/``run_words``: where the longest run starts in the record (word index) and its
    length; ``window_at``: the record's alnum position of the first shared window (-1: none).
    """

    item: IntArray
    record: IntArray
    longest: IntArray
    run_start: IntArray
    ngrams8_found: IntArray
    covered_l10: IntArray
    window_hits: IntArray
    window_at: IntArray
    chained: IntArray | None = None
    """The longest skip-gram span or gapped run per pair, when the scan chains (not a column:
    it only makes a pair worth listing)."""

    def __len__(self) -> int:
        return int(self.item.size)


@dataclass(frozen=True)
class Hits:
    """Where a batch's 5-grams (or windows) equal a manifest posting: one row per (unit, posting).

    ``at`` is the unit's position in its record: the word index of a 5-gram's first word, or
    the alnum-view index of a window's first character.
    """

    record: IntArray
    at: IntArray
    posting: IntArray


NO_HITS = Hits(*(np.zeros(0, dtype=np.int64) for _ in range(3)))


def lookup_hits(
    postings: Postings,
    hashes: NDArray[np.uint64],
    valid: NDArray[np.bool_],
    record_offsets: IntArray,
    record_item: IntArray | None,
) -> Hits:
    """Every valid hash of a batch that equals a manifest hash, as ``Hits``; an item matched
    against itself (``record_item``, for ``dupes``) is left out."""
    where, found = postings.lookup(hashes, valid)
    record = np.searchsorted(record_offsets, where, side="right") - 1
    if record_item is not None:
        other = record_item[record] != postings.item_of(found)  # manifest 2: tables say where
        where, found, record = where[other], found[other], record[other]
    return Hits(record=record, at=where - record_offsets[record], posting=found)


def _group_starts(*keys: IntArray) -> NDArray[np.bool_]:
    """True where a sorted row starts a new group of equal keys."""
    size = keys[0].size
    new = np.zeros(size, dtype=np.bool_)
    if size:
        new[0] = True
        for key in keys:
            new[1:] |= key[1:] != key[:-1]
    return new


def union_lengths(group: IntArray, start: IntArray, end: IntArray, groups: int) -> IntArray:
    """Total length of the union of [start, end) intervals per group (rows sorted by group, start)."""
    out = np.zeros(groups, dtype=np.int64)
    if group.size == 0:
        return out
    # Offset each group so one running maximum never carries over between groups.
    span = int(end.max()) + 1
    shifted_end = end + group * span
    reach = np.maximum.accumulate(shifted_end) - group * span
    previous = np.concatenate([[-1], reach[:-1]])
    previous[_group_starts(group)] = -1
    gain = np.maximum(end - np.maximum(start, previous), 0)
    np.add.at(out, group, gain)
    return out


def match_batch(
    index: ManifestIndex,
    features: TextFeatures,
    totals: ItemTotals,
    record_item: IntArray | None = None,
    groups: IntArray | None = None,
) -> PairTable:
    """Match one batch against the index, update ``totals``, and return its pair rows.

    ``groups``: when the features' units are the segments of records, record r is units
    ``[groups[r], groups[r + 1])``; a pair is an (item, record) pair and positions count across
    the record's segments (a 5-gram or window never spans two: the features mark those invalid).
    ``record_item`` maps each record of the batch to the global item it *is*, when the
    records are the golden items themselves (``dupes``): an item is never matched with itself.
    """
    words, chars, records = features.record_words, features.record_chars, features.n_records
    if groups is not None:
        words, chars, records = words[groups], chars[groups], int(groups.size) - 1
    grams = lookup_hits(index.grams, features.gram_hash, features.gram_valid, words, record_item)
    windows = NO_HITS  # without windows (GPT-4's rule off), the window table is never built
    if features.window_hash.size:
        windows = lookup_hits(index.windows, features.window_hash, features.window_valid, chars, record_item)
    return match_hits(index, grams, windows, records, totals)


def match_hits(
    index: ManifestIndex, grams: Hits, windows: Hits, records: int, totals: ItemTotals
) -> PairTable:
    """The pair rows of a batch of ``records`` records from its hits; updates ``totals``."""
    return _join(_match_grams(index, grams, totals), _match_windows(index, windows, totals), records)


def _match_grams(index: ManifestIndex, hits: Hits, totals: ItemTotals) -> dict[str, IntArray]:
    record, j = hits.record, hits.at
    item, i = index.grams.item_and_position(hits.posting)  # manifest 2
    if index.templates.marked:
        # Template words are not shared words (``io.manifest.templates``): a 5-gram made only of them
        # is no hit, so a run is cut at them, before any sorting (a benchmark's header shared
        # with every record of a corpus would otherwise give items x records hits to sort).
        shared = ~index.templates.within(index.word_base[item] + i, GRAM_N)
        if not bool(shared.all()):
            record, j, item, i = record[shared], j[shared], item[shared], i[shared]
    diagonal = j - i
    order = lex_order((i, diagonal, record, item))
    item, record, i, j, diagonal = item[order], record[order], i[order], j[order], diagonal[order]
    # A run is a stretch of consecutive positions on one (item, record, diagonal).
    new_run = _group_starts(item, record, diagonal)
    if i.size:
        new_run[1:] |= i[1:] != i[:-1] + 1
    run_id = np.cumsum(new_run) - 1
    run_last = np.concatenate([np.flatnonzero(new_run)[1:] - 1, [i.size - 1]]) if i.size else i
    value = i[run_last][run_id] - i + GRAM_N
    # ... and trimmed of the template words it begins or ends with (a 5-gram reaching into
    # them); what is left is the run, and one left with fewer than 5 words is no run.
    if index.templates.marked:
        at = index.word_base[item] + i
        heads = np.flatnonzero(new_run)
        start, end = index.templates.trim(at[heads], at[heads] + value[heads])
        start, end = start[run_id], end[run_id]
        kept = (at >= start) & (end - at >= GRAM_N)
        value = (end - at)[kept]
        item, record, i, j, diagonal = item[kept], record[kept], i[kept], j[kept], diagonal[kept]
    np.maximum.at(totals.run, index.word_base[item] + i, value)
    chained = _chain(index, totals, runs_of(item, record, i, j, value)) if totals.chains.on else None

    # R per (item, record, i): the best diagonal at each position.
    order = lex_order((-value, i, record, item))
    item, record, i, j, value = item[order], record[order], i[order], j[order], value[order]
    first = _group_starts(item, record, i)
    item, record, i, j, value = item[first], record[first], i[first], j[first], value[first]
    pair_new = _group_starts(item, record)
    pair_id = np.cumsum(pair_new) - 1
    pairs = int(pair_new.sum())
    longest = np.zeros(pairs, dtype=np.int64)
    np.maximum.at(longest, pair_id, value)
    # Where the longest run lies: the first position reaching the pair's longest value.
    is_best = value == longest[pair_id]
    rows = np.flatnonzero(is_best)
    best_row = np.full(pairs, value.size, dtype=np.int64)
    np.minimum.at(best_row, pair_id[rows], rows)
    # The 8-grams inside the counted runs: [i, i + R - 7) (a run's template words count with it).
    runs8 = value >= 8
    ngrams8 = union_lengths(pair_id[runs8], i[runs8], (i + value - 7)[runs8], pairs)
    long_runs = value >= 10
    covered = union_lengths(pair_id[long_runs], i[long_runs], (i + value)[long_runs], pairs)
    starts = np.flatnonzero(pair_new)
    out = {
        "item": item[starts],
        "record": record[starts],
        "longest": longest,
        "run_start": j[best_row] if pairs else longest,
        "ngrams8_found": ngrams8,
        "covered_l10": covered,
    }
    if chained is not None:
        out["chained"] = _per_pair(chained, out["item"], out["record"])
    return out


def _chain(index: ManifestIndex, totals: ItemTotals, runs: Runs) -> tuple[IntArray, IntArray, IntArray]:
    """The chained spans of a batch's runs (``core.match.chains``) into ``totals``; per run its
    (item, record, longest span of either kind)."""
    longest = np.zeros(runs.item.size, dtype=np.int64)
    chains = totals.chains
    for flat, start in (
        (totals.skip, skip_spans(runs, chains.skip_budget) if chains.skip_budget else None),
        (totals.gapped, gapped_spans(runs, chains.gaps) if chains.gaps else None),
    ):
        if flat is None or start is None:
            continue
        length = runs.i1 - start
        np.maximum.at(flat, index.word_base[runs.item] + start, length)
        np.maximum(longest, length, out=longest)
    return runs.item, runs.record, longest


def _per_pair(chained: tuple[IntArray, IntArray, IntArray], item: IntArray, record: IntArray) -> IntArray:
    """The longest chained span of each (item, record) pair (pairs sorted by item, record)."""
    run_item, run_record, longest = chained
    out = np.zeros(item.size, dtype=np.int64)
    if item.size == 0 or run_item.size == 0:
        return out
    width = int(max(int(record.max()), int(run_record.max()))) + 1
    at = np.searchsorted(item * width + record, run_item * width + run_record)
    np.maximum.at(out, at, longest)
    return out


def _match_windows(index: ManifestIndex, hits: Hits, totals: ItemTotals) -> dict[str, IntArray]:
    record, char = hits.record, hits.at
    # Manifest 2: a window is its posting (tables keep each window's item, not its place).
    item, w = index.windows.item_of(hits.posting), hits.posting
    totals.window_found[w] = True
    order = lex_order((char, w, record, item))
    item, record, w, char = item[order], record[order], w[order], char[order]
    distinct = _group_starts(item, record, w)
    item, record, char = item[distinct], record[distinct], char[distinct]
    pair_new = _group_starts(item, record)
    pair_id = np.cumsum(pair_new) - 1
    starts = np.flatnonzero(pair_new)
    return {
        "item": item[starts],
        "record": record[starts],
        "window_hits": np.bincount(pair_id, minlength=starts.size).astype(np.int64),
        # The record's first shared window (postings are numbered in hash order, so the first
        # posting's would change with the key).
        "window_at": np.minimum.reduceat(char, starts) if starts.size else char[starts],
    }


def _join(grams: dict[str, IntArray], windows: dict[str, IntArray], records: int) -> PairTable:
    """Outer-join the word-level and window-level pair rows on (item, record)."""
    key_g = grams["item"] * records + grams["record"]
    key_w = windows["item"] * records + windows["record"]
    keys = sorted_unique(np.concatenate([key_g, key_w]))
    at_g = np.searchsorted(keys, key_g)
    at_w = np.searchsorted(keys, key_w)

    def column(source: dict[str, IntArray], at: IntArray, name: str, fill: int) -> IntArray:
        out = np.full(keys.size, fill, dtype=np.int64)
        out[at] = source[name]
        return out

    return PairTable(
        item=keys // max(records, 1),
        record=keys % max(records, 1),
        longest=column(grams, at_g, "longest", 0),
        run_start=column(grams, at_g, "run_start", -1),
        ngrams8_found=column(grams, at_g, "ngrams8_found", 0),
        covered_l10=column(grams, at_g, "covered_l10", 0),
        window_hits=column(windows, at_w, "window_hits", 0),
        window_at=column(windows, at_w, "window_at", -1),
        chained=column(grams, at_g, "chained", 0) if "chained" in grams else None,
    )
