"""Gapped spans: a pair's exact shared runs chained across small gaps.

An edit that replaces, inserts or deletes a word every few words cuts a copied item into exact
runs that no exact rule sees as one. Two options chain them again:

- Llama 2's skip-gram budget (``llama2.skip_budget``): a span may differ from the record in up
  to ``skip_budget`` positions in all (Touvron et al. 2023, App. A.6, as the seed article puts
  it: "a matched span may differ in up to four positions (the "skipgram budget")").
- A gapped run (the ``gapped`` rule, ``gaps``): a run that survives ``gaps`` replaced, inserted
  or deleted words per ``GAP_EVERY`` words of its span, no gap longer than ``gaps`` words.

Both are computed from what the exact matcher already has, per (item, record) pair: its exact
runs (5 words or more: shorter stretches are not seen, so a gap is the words between two seen
runs). Run b's predecessor is the run of the same pair that ends at most ``max_link`` words
before b starts, in the item and in the record (no overlap), at the lowest cost: a link costs
``max(item gap, record gap)`` words (a replaced word is 1 and 1, an inserted one 0 and 1, a
deleted one 1 and 0), an upper bound on the words edited between them. Run b's span starts at
the furthest predecessor back whose links' total cost fits the budget for the span reached
(``fixed + per * span // every``). The span ends with b, so it begins and ends with shared words.
The kernel is ``chain_runs`` (compiled, with its numpy twin in ``core.spec.pure_kernels``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.arrays import lex_order
from contam_guard.core.spec import kernel

IntArray = NDArray[np.int64]
GAP_EVERY = 8
"""The gapped rule's budget is ``gaps`` edited words per this many words of span (the issue's
example: one per 8 words)."""
MAX_LINKS = 64
"""The most links a gapped span follows back (at least 5 words each: 320 words or more)."""


@dataclass(frozen=True)
class ChainSettings:
    """What the scan chains: Llama 2's skip-gram budget and the gapped rule's gaps (0: off)."""

    skip_budget: int = 0
    gaps: int = 0

    @property
    def on(self) -> bool:
        return self.skip_budget > 0 or self.gaps > 0


NO_CHAINS = ChainSettings()
"""The default: nothing chained."""


@dataclass(frozen=True)
class Runs:
    """A batch's exact shared runs, sorted by (item, record, i0): item words [i0, i1), record
    words [j0, j1)."""

    item: IntArray
    record: IntArray
    i0: IntArray
    i1: IntArray
    j0: IntArray
    j1: IntArray


def runs_of(item: IntArray, record: IntArray, i: IntArray, j: IntArray, value: IntArray) -> Runs:
    """The runs of the matcher's rows (one per shared 5-gram position, sorted by item, record,
    diagonal and position; ``value``: the run's words from that position on)."""
    end = i + value
    head = np.ones(i.size, dtype=np.bool_)
    if i.size:
        diagonal = j - i
        head[1:] = (
            (item[1:] != item[:-1])
            | (record[1:] != record[:-1])
            | (diagonal[1:] != diagonal[:-1])
            | (end[1:] != end[:-1])
        )
    at = np.flatnonzero(head)
    order = at[lex_order((j[at], i[at], record[at], item[at]))]
    return Runs(item[order], record[order], i[order], end[order], j[order], j[order] + value[order])


def span_starts(runs: Runs, max_link: int, fixed: int, per: int, every: int, links: int) -> IntArray:
    """Per run, the first item word of its span (``chain_runs``)."""
    n = runs.item.size
    start = np.empty(n, dtype=np.int64)
    if n == 0:
        return start
    pair = np.zeros(n, dtype=np.int64)
    pair[1:] = np.cumsum((runs.item[1:] != runs.item[:-1]) | (runs.record[1:] != runs.record[:-1]))
    by_end = lex_order((np.arange(n, dtype=np.int64), runs.i1, pair)).astype(np.int64)
    params = np.array([max_link, fixed, per, every, links], dtype=np.int64)
    kernel.chain_runs(pair, runs.i0, runs.i1, runs.j0, runs.j1, by_end, params, start)
    return start


def skip_spans(runs: Runs, budget: int) -> IntArray:
    """Llama 2's skip-gram spans: up to ``budget`` differing positions in all."""
    return span_starts(runs, budget, budget, 0, 1, budget)


def gapped_spans(runs: Runs, gaps: int) -> IntArray:
    """Gapped runs: ``gaps`` edited words per ``GAP_EVERY`` words of span, at most ``gaps`` a gap."""
    return span_starts(runs, gaps, 0, gaps, GAP_EVERY, MAX_LINKS)


__all__ = [
    "GAP_EVERY",
    "NO_CHAINS",
    "ChainSettings",
    "Runs",
    "gapped_spans",
    "runs_of",
    "skip_spans",
    "span_starts",
]
