"""Where to cut: from colliding n-grams in a text to removed spans, pieces, or a drop.

``cut`` works on a batch of texts at once (whole-array numpy over the hits); only the texts that
are touched get a short Python loop over their few merged spans.

For one text of length L with colliding n-gram spans [s, e):

- each span widens to the window [max(s - window, 0), min(e + window, L));
- overlapping or adjacent windows merge (a window starting where another ends joins it);
- the text outside the merged windows falls into pieces (maximal non-empty intervals);
- mode ``drop``: the text is dropped whole (reason ``drop mode``);
- mode ``pieces``: more than ``max_pieces`` pieces drops the text whole (``too many pieces``);
  otherwise the windows are removed (``window``), pieces shorter than ``min_piece_chars`` are
  removed (``short piece``) and the rest are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.arrays import sorted_unique
from contam_guard.core.scrub.golden import Hits

IntArray = NDArray[np.int64]
Mode = Literal["pieces", "drop"]
Reason = Literal["window", "short piece", "too many pieces", "drop mode"]
REASONS: tuple[Reason, ...] = ("window", "short piece", "too many pieces", "drop mode")


@dataclass(frozen=True)
class CutSettings:
    window: int = 200
    min_piece_chars: int = 200
    max_pieces: int = 10


@dataclass(frozen=True)
class Removal:
    """A removed span [start, end) of a text, why, and (for collisions) what caused it.

    ``keys`` are the golden n-gram keys colliding inside it; ``ngrams`` the merged spans of
    those n-grams (before widening), so the window can be checked against the input.
    """

    start: int
    end: int
    reason: Reason
    keys: tuple[int, ...] = ()
    ngrams: tuple[tuple[int, int], ...] = ()

    def shifted(self, offset: int) -> Removal:
        return Removal(
            self.start + offset,
            self.end + offset,
            self.reason,
            self.keys,
            tuple((s + offset, e + offset) for s, e in self.ngrams),
        )


@dataclass(frozen=True)
class Outcome:
    """What happens to one touched text: the pieces kept (maybe none) and every removal."""

    kept: tuple[tuple[int, int], ...]
    removed: tuple[Removal, ...]

    @property
    def dropped(self) -> bool:
        return not self.kept


def merge(group: IntArray, start: IntArray, end: IntArray) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Merge overlapping or adjacent [start, end) spans within each group.

    Returns (group, start, end) of the merged spans, sorted by (group, start), and for every
    input row the number of the merged span that holds it.
    """
    if group.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), empty.copy(), empty.copy()
    order = np.lexsort((start, group))
    g, s, e = group[order], start[order], end[order]
    # One running maximum over all rows: offsetting each group by more than any end keeps a
    # group's reach from carrying into the next.
    stride = int(e.max()) + 1
    reach = np.maximum.accumulate(e + g * stride) - g * stride
    previous = np.concatenate([[-1], reach[:-1]])
    first_of_group = np.concatenate([[True], g[1:] != g[:-1]])
    previous[first_of_group] = -1
    new = s > previous  # s == previous: adjacent, merged
    span_of_sorted = np.cumsum(new) - 1
    heads = np.flatnonzero(new)
    merged_end = np.maximum.reduceat(e, heads)
    span_of_row = np.empty_like(span_of_sorted)
    span_of_row[order] = span_of_sorted
    return g[heads], s[heads], merged_end, span_of_row


def cut(hits: Hits, lengths: IntArray, modes: list[Mode], settings: CutSettings) -> dict[int, Outcome]:
    """The outcome of every text in ``hits`` (texts without hits are absent: untouched)."""
    if len(hits) == 0:
        return {}
    length = lengths[hits.doc]
    w_start = np.maximum(hits.start - settings.window, 0)
    w_end = np.minimum(hits.end + settings.window, length)
    w_doc, w_s, w_e, window_of_hit = merge(hits.doc, w_start, w_end)
    g_doc, g_s, g_e, _ = merge(hits.doc, hits.start, hits.end)
    # Every merged n-gram span lies inside exactly one merged window: the last window of its
    # text starting at or before it.
    stride = int(lengths.max()) + 1
    window_of_gram = np.searchsorted(w_doc * stride + w_s, g_doc * stride + g_s, side="right") - 1
    pairs = sorted_unique(window_of_hit * (int(hits.key.max()) + 1) + hits.key)
    pair_window, pair_key = np.divmod(pairs, int(hits.key.max()) + 1)

    key_bounds = np.searchsorted(pair_window, np.arange(w_doc.size + 1))
    gram_bounds = np.searchsorted(window_of_gram, np.arange(w_doc.size + 1))
    doc_bounds = np.searchsorted(w_doc, sorted_unique(w_doc))
    outcomes: dict[int, Outcome] = {}
    for first, last in zip(doc_bounds.tolist(), [*doc_bounds[1:].tolist(), w_doc.size]):
        doc = int(w_doc[first])
        windows = [
            Removal(
                int(w_s[w]),
                int(w_e[w]),
                "window",
                tuple(pair_key[key_bounds[w] : key_bounds[w + 1]].tolist()),
                tuple(
                    zip(
                        g_s[gram_bounds[w] : gram_bounds[w + 1]].tolist(),
                        g_e[gram_bounds[w] : gram_bounds[w + 1]].tolist(),
                    )
                ),
            )
            for w in range(first, last)
        ]
        outcomes[doc] = decide(windows, int(lengths[doc]), modes[doc], settings)
    return outcomes


def decide(windows: list[Removal], length: int, mode: Mode, settings: CutSettings) -> Outcome:
    """Apply the mode to one text's merged windows (sorted, disjoint, non-adjacent)."""
    gaps: list[tuple[int, int]] = []
    cursor = 0
    for window in windows:
        if window.start > cursor:
            gaps.append((cursor, window.start))
        cursor = window.end
    if cursor < length:
        gaps.append((cursor, length))
    if mode == "drop" or len(gaps) > settings.max_pieces:
        reason: Reason = "drop mode" if mode == "drop" else "too many pieces"
        keys = tuple(sorted({k for w in windows for k in w.keys}))
        grams = tuple(g for w in windows for g in w.ngrams)
        return Outcome(kept=(), removed=(Removal(0, length, reason, keys, grams),))
    kept = tuple(g for g in gaps if g[1] - g[0] >= settings.min_piece_chars)
    short = [Removal(s, e, "short piece") for s, e in gaps if e - s < settings.min_piece_chars]
    removed = sorted([*windows, *short], key=lambda r: r.start)
    return Outcome(kept=kept, removed=tuple(removed))
