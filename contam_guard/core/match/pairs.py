"""Per test item, the most telling pairs, and an exact account of the rest (``--max-pairs-per-item``).

A heavily contaminated input (a test set copied into the training data many times) pairs each
item with as many records as there are copies; keeping every pair, snippet and all, until the
report took 6 GB and wrote a 768 MB review for GSM8K's test set 200 times. ``PairStore`` keeps,
per item and as pairs arrive, the ``limit`` most telling ones in a small heap: the longest shared
run, then the most shared windows, then the first in scan order. Of the others it keeps only what
the findings need, exactly: how many records share each distinct run (its digest, its length in
words, and whether the record carries the allow marker). The rules read the per-item totals, not
the pairs, so they are unchanged; a per-item finding keeps its exact record count and allowlist
key; GPT-3's findings (one per record) become, beyond the limit, one finding per distinct shared
run counting its records, keyed as each record's own finding would be, so that the allowlist, the
markers and the exit code decide exactly as without a limit. The distinct runs of one item are
stretches of its words, so what is kept per item is bounded by the item, not by the input.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from contam_guard.core.spec.hashing import digest
from contam_guard.core.spec.normalise import V1, words

if TYPE_CHECKING:
    from contam_guard.core.pairs import Pair

RunKey = tuple[str, int, bool]
"""(span digest of the shared run, its length in words, the record's allow marker)."""


def run_span(run: str) -> str:
    """The digest of a shared run's normalised words, the allowlist's ``span`` of one pair.

    Content only: the same leak on another line or in another file has the same digest; a
    different shared run (another leak) has another. Always spec ``words-v1``, whatever the
    manifest's: committed allowlist entries must survive ``contam-guard upgrade``.
    """
    return digest(" ".join(words(run, V1)).encode("utf-8"))


@dataclass(frozen=True)
class Unlisted:
    """Records paired with one item but not listed (beyond the limit): counted by shared run."""

    runs: tuple[tuple[str, int, bool, int], ...] = ()
    """(span digest of the shared run, its length in words, whether the record carries the
    allow marker, how many records), sorted."""

    @classmethod
    def of(cls, counts: Mapping[RunKey, int]) -> Unlisted:
        return cls(tuple(sorted((*key, count) for key, count in counts.items())))

    @property
    def records(self) -> int:
        return sum(count for *_, count in self.runs)

    @property
    def spans(self) -> set[str]:
        return {span for span, *_ in self.runs}

    @property
    def longest(self) -> int:
        return max((run for _, run, _, _ in self.runs), default=0)

    @property
    def all_marked(self) -> bool:
        """Whether every record carries ``"contam_guard": "allow"`` (none: True)."""
        return all(marked for _, _, marked, _ in self.runs)

    def reaching(self, n: int) -> list[Unlisted]:
        """The records sharing a run of at least ``n`` words, one ``Unlisted`` per (span,
        marker): GPT-3's findings beyond the limit, each with the allowlist key and marker
        verdict that every record in it would have on its own."""
        groups: dict[tuple[str, bool], list[tuple[str, int, bool, int]]] = {}
        for entry in self.runs:
            span, run, marked, _ = entry
            if run >= n:
                groups.setdefault((span, marked), []).append(entry)
        return [Unlisted(tuple(group)) for _, group in sorted(groups.items())]


_Entry = tuple[tuple[float, ...], int, "Pair"]
"""A kept pair in an item's heap: (how telling, arrival, pair). How telling: ``Pair.rank`` (the
longest run, the windows, the masked run, the reworded score), then -input rank and -record, so
the heap's root is the pair to give up first."""


class PairStore:
    """The notable pairs of a scan, at most ``limit`` listed per item (0: all of them).

    Which pairs are listed depends only on the pairs, never on the order they arrive in: a scan
    split over processes (each with its own store, merged with ``merge``) lists exactly what one
    process lists, provided files are registered (``file``) in scan order first.
    """

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"limit must be 0 (no limit) or more, not {limit}")
        self.limit = limit
        self._files: dict[str, int] = {}
        self._kept: dict[int, list[_Entry]] = {}
        self._unlisted: dict[int, dict[RunKey, int]] = {}
        self._arrival = 0
        """Pairs added so far (among equally telling pairs, the first one wins)."""
        self._spans: dict[str, str] = {}
        """Run text -> span: a copied test set repeats the same runs many times."""

    def file(self, name: str, rank: int | None = None) -> int:
        """The scan-order rank of input ``name``, registering it if new: next in order, or at
        ``rank`` (an engine that sees a part of the inputs ranks them as the whole scan does)."""
        return self._files.setdefault(name, len(self._files) if rank is None else rank)

    def add(self, pair: Pair) -> None:
        """Keep ``pair`` if it is among its item's ``limit`` most telling so far; count the
        one it displaces (or itself) among the unlisted."""
        rank = (*pair.rank(), -self.file(pair.source), -pair.record)
        self._arrival += 1
        entry: _Entry = (rank, -self._arrival, pair)
        kept = self._kept.setdefault(pair.item, [])
        if self.limit == 0:
            kept.append(entry)  # no heap needed: every pair is listed
            return
        if len(kept) < self.limit:
            heapq.heappush(kept, entry)
            return
        if entry[:2] > kept[0][:2]:
            entry = heapq.heapreplace(kept, entry)
        self._count(entry[2])

    def _count(self, pair: Pair) -> None:
        run = pair.snippet.run
        span = self._spans.get(run)
        if span is None:
            if len(self._spans) >= 1 << 16:  # a memo, not a record of every text
                self._spans.clear()
            span = self._spans[run] = pair.snippet.span or run_span(run)
        counts = self._unlisted.setdefault(pair.item, {})
        key = (span, pair.longest_run, pair.allowed_inline)
        counts[key] = counts.get(key, 0) + 1

    def merge(self, pairs: Iterable[Pair], unlisted: Mapping[int, Unlisted]) -> None:
        """Add another store's result (a part of the same scan): its listed pairs, its counts."""
        for pair in pairs:
            self.add(pair)
        for item, more in unlisted.items():
            counts = self._unlisted.setdefault(item, {})
            for span, run, marked, records in more.runs:
                key = (span, run, marked)
                counts[key] = counts.get(key, 0) + records

    def pairs(self) -> list[Pair]:
        """The listed pairs, by file (in scan order), record and item."""
        listed = [entry[2] for kept in self._kept.values() for entry in kept]
        listed.sort(key=lambda p: (self.file(p.source), p.record, p.item))
        return listed

    def unlisted(self) -> dict[int, Unlisted]:
        """Per item with pairs beyond the limit, what was not listed."""
        return {item: Unlisted.of(counts) for item, counts in sorted(self._unlisted.items())}
