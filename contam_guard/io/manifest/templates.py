"""Template n-grams: the words a benchmark wraps around every item.

At registration, an n-gram of a view is *template* when more than ``share`` of the set's items
and at least ``min_items`` of them contain it ("The following are multiple choice questions
(with answers) about high school mathematics."). Which n-grams are template is kept for every
n at once, as one number per word position: ``T[p]``, the length of the longest template
n-gram starting at word ``p`` of its item (0: not even its 5-gram is template). An n-gram is
template exactly when ``T[p] >= n``, because every item holding an n-gram holds its prefixes:
so the marks serve GPT-3's N (13, ``auto`` or a set's own), PaLM's 8 and Llama 2's
``min_run`` alike, whatever the scan's config says.

It needs no text: an n-gram (n >= 5) is the sequence of its n - 4 consecutive 5-gram hashes,
which the view stores (keyed ones too), so n-grams are compared by chaining those hashes.

How the rules use them (GPT-3's, PaLM's and Llama 2's; GPT-4's windows are unchanged). A word
is a *template word* when it lies inside a template n-gram of at least ``PHRASE_MIN`` (8)
words. Template words are not shared words: a shared run is cut at them (a run through a
template block is two runs) and trimmed of those at its ends, and what is left are the runs
(their lengths, their places; under 5 words, no run). A record sharing only the header, or the
header and the first word of a question, shares no run. PaLM's share is taken over the item's
8-grams without a template word, Llama 2's over its other words: a whole templated item copied
into training data scores as its header-stripped copy does, and fires.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec.hashing import GRAM_N, fmix64

IntArray = NDArray[np.int64]

DEFAULT_SHARE = 0.01
DEFAULT_MIN_ITEMS = 5
PHRASE_MIN = 8
"""A word is a *template word* when it lies inside a template n-gram of at least this many words
(PaLM's n, GPT-3's floor): shorter common phrases ("how much money does she") stay ordinary text."""
_CHAIN = np.uint64(0x9FB21C651E98DF25)


@dataclass(frozen=True)
class TemplateSettings:
    """When an n-gram is template: in more than ``share`` of the set's items and in at least
    ``min_items`` of them."""

    share: float = DEFAULT_SHARE
    min_items: int = DEFAULT_MIN_ITEMS

    def items_needed(self, items: int) -> int:
        """How many items must contain an n-gram for it to be template, in a set of ``items``."""
        return max(self.min_items, int(np.floor(self.share * items)) + 1, 1)


@dataclass(frozen=True)
class TemplateMarks:
    """One view's marks: ``at`` (sorted) indexes the view's 5-grams in item order (which is the
    item's word position, counted across items), ``run`` is ``T`` there (>= 5)."""

    at: IntArray
    run: IntArray
    ngrams: int = 0
    """Distinct template 5-grams (every template n-gram is made of them: 0 when none is marked)."""
    top: int = 0
    """Items holding the most common template 5-gram (0: none)."""

    @classmethod
    def none(cls) -> TemplateMarks:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64))


def find_templates(
    gram_hashes: NDArray[np.uint64], gram_counts: IntArray, settings: TemplateSettings
) -> TemplateMarks:
    """The template marks of a view: ``gram_hashes`` are its 5-gram hashes in item order,
    ``gram_counts`` how many each item has. Deterministic (a function of the hashes only)."""
    items = int(gram_counts.size)
    needed = settings.items_needed(items)
    total = int(gram_hashes.size)
    run = np.zeros(total, dtype=np.int64)
    if total == 0 or needed > items:
        return TemplateMarks.none()
    owner = np.repeat(np.arange(items, dtype=np.int64), gram_counts)
    end = np.cumsum(gram_counts)[owner]  # one past the item's last 5-gram, per 5-gram
    alive = np.arange(total, dtype=np.int64)
    current = gram_hashes.astype(np.uint64)
    n, ngrams, top = GRAM_N, 0, 0
    while alive.size:
        template, holders = _shared(current, owner[alive], needed)
        alive, current = alive[template], current[template]
        run[alive] = n
        if n == GRAM_N and holders.size:
            ngrams, top = int(holders.size), int(holders.max())
        # The (n + 1)-gram at p: the n-gram's chain and the 5-gram at p + n - 4, within the item.
        longer = alive + (n + 1 - GRAM_N) < end[alive]
        alive, current = alive[longer], current[longer]
        current = fmix64(current * _CHAIN + gram_hashes[alive + (n + 1 - GRAM_N)])
        n += 1
    at = np.flatnonzero(run)
    return TemplateMarks(at.astype(np.int64), run[at], ngrams, top)


def _shared(hashes: NDArray[np.uint64], owner: IntArray, needed: int) -> tuple[NDArray[np.bool_], IntArray]:
    """Per n-gram, whether at least ``needed`` distinct items hold it; and those counts of the
    template ones."""
    order = np.lexsort((owner, hashes))
    h, o = hashes[order], owner[order]
    new_hash = np.ones(h.size, dtype=np.bool_)
    new_hash[1:] = h[1:] != h[:-1]
    new_pair = new_hash.copy()
    new_pair[1:] |= o[1:] != o[:-1]
    group = np.cumsum(new_hash) - 1
    holders = np.bincount(group, weights=new_pair, minlength=int(group[-1]) + 1 if group.size else 0)
    template_sorted = holders[group] >= needed
    template = np.zeros(h.size, dtype=np.bool_)
    template[order] = template_sorted
    return template, holders[holders >= needed].astype(np.int64)


class TemplateLookup:
    """``T`` at the manifest's word positions (flat, as ``ManifestIndex.word_base`` numbers
    them), over every view; each view's marks are read when first needed."""

    def __init__(self, parts: Sequence[tuple[Callable[[], TemplateMarks], IntArray, IntArray]] = ()) -> None:
        """``parts``: per view, how to read its marks, and per item of the view its words and
        its first word's flat position."""
        self._parts = list(parts)

    @cached_property
    def _table(self) -> tuple[IntArray, IntArray]:
        ats, runs = [], []
        for read, words, word_base in self._parts:
            marks = read()
            if marks.at.size == 0:
                continue
            # ``at`` counts 5-grams across the view's items; an item of w words has w - 4.
            grams = np.maximum(words - (GRAM_N - 1), 0)
            gram_base = np.cumsum(grams) - grams
            item = np.searchsorted(gram_base, marks.at, side="right") - 1
            ats.append(word_base[item] + marks.at - gram_base[item])
            runs.append(marks.run)
        if not ats:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        at, run = np.concatenate(ats), np.concatenate(runs)
        order = np.argsort(at, kind="stable")
        return at[order], run[order]

    @cached_property
    def _blocks(self) -> tuple[IntArray, IntArray, IntArray]:
        """The template words (flat positions, sorted: inside a template n-gram of at least
        ``PHRASE_MIN`` words), and per such word its block's first and one-past-last position."""
        at, run = self._table
        long = run >= PHRASE_MIN
        at, run = at[long], run[long]
        if at.size == 0:
            empty = np.zeros(0, np.int64)
            return empty, empty, empty
        # Union of [at, at + run): expand, then keep each word once.
        starts = np.repeat(at, run)
        offsets = np.arange(starts.size, dtype=np.int64) - np.repeat(np.cumsum(run) - run, run)
        words = np.unique(starts + offsets)
        new = np.ones(words.size, dtype=np.bool_)
        new[1:] = words[1:] != words[:-1] + 1
        block = np.cumsum(new) - 1
        first = words[new]
        last = np.append(words[np.flatnonzero(new)[1:] - 1], words[-1]) + 1
        return words, first[block], last[block]

    @property
    def words(self) -> IntArray:
        """The template words' flat positions, sorted."""
        return self._blocks[0]

    def words_in(self, start: IntArray, end: IntArray) -> IntArray:
        """How many template words lie in each flat span [start, end)."""
        words = self._blocks[0]
        return (np.searchsorted(words, end) - np.searchsorted(words, start)).astype(np.int64)

    def within(self, flat: IntArray, width: int) -> NDArray[np.bool_]:
        """Whether each flat span [flat, flat + width) is made only of template words."""
        return np.asarray(self.words_in(flat, flat + width) == width)

    def trim(self, start: IntArray, end: IntArray) -> tuple[IntArray, IntArray]:
        """Each flat span [start, end) without the template words it begins and ends with
        (``start >= end`` after: nothing is left)."""
        words, first, last = self._blocks
        if words.size == 0 or start.size == 0:
            return start, end
        where = np.minimum(np.searchsorted(words, start), words.size - 1)
        start = np.where(words[where] == start, last[where], start)
        final = end - 1
        where = np.minimum(np.searchsorted(words, final), words.size - 1)
        end = np.where(words[where] == final, first[where], end)
        return start, end

    @property
    def marked(self) -> int:
        """How many word positions start a template n-gram."""
        return int(self._table[0].size)

    def length(self, flat: IntArray) -> IntArray:
        """``T`` at each flat word position (0 where no template n-gram starts)."""
        at, run = self._table
        out = np.zeros(flat.size, dtype=np.int64)
        if at.size == 0 or flat.size == 0:
            return out
        where = np.minimum(np.searchsorted(at, flat), at.size - 1)
        hit = at[where] == flat
        out[hit] = run[where[hit]]
        return out
