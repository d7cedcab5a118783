"""A golden set against its own other items: one problem asked twice inside a benchmark.

The seed article's "GSM8K test, the other questions" row. It needs no text: the manifest holds
each item's 5-gram and window hashes in order, which is all the engine reads, so the items are
laid out as if they were training records and matched against the set itself, skipping each
item's match with itself. Template n-grams (``io.manifest.templates``) count for nothing here either:
items that share only their benchmark's header are not pairs.
"""

from __future__ import annotations

import numpy as np

from contam_guard.core.families import COLUMN_NAMES
from contam_guard.core.families.ngram import NUMBERS, notable
from contam_guard.core.match.index import ManifestIndex, Target
from contam_guard.core.match.matcher import ItemTotals, match_batch
from contam_guard.core.pairs import Pair, Snippet
from contam_guard.core.result import ScanResult
from contam_guard.core.spec.features import TextFeatures
from contam_guard.core.spec.hashing import GRAM_N, WINDOW_CHARS
from contam_guard.core.state import Census
from contam_guard.errors import ManifestError
from contam_guard.io.manifest.model import GoldenSet, View

_NO_TEXT = Snippet(before="", run="", after="", start=0)


def _padded(hashes: np.ndarray, units: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Lay out per-item hash sequences on a per-unit (word or character) grid.

    An item of ``u`` units has ``max(u - width + 1, 0)`` hashes, at its first positions; the
    remaining positions are padding (invalid), exactly as ``extract_features`` lays them out.
    """
    total = int(units.sum())
    base = np.cumsum(units) - units
    counts = np.maximum(units - (width - 1), 0)
    owner = np.repeat(np.arange(units.size), counts)
    position = base[owner] + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    grid = np.zeros(total, dtype=np.uint64)
    valid = np.zeros(total, dtype=np.bool_)
    grid[position] = hashes
    valid[position] = True
    return grid, valid


def features_from_view(view: View) -> TextFeatures:
    """The hashed form of a view's items, as if each item were a training record."""
    words, alnum = view.word_counts, view.alnum_counts
    gram_hash, gram_valid = _padded(view.gram_hashes, words, GRAM_N)
    window_hash, window_valid = _padded(view.window_hashes, alnum, WINDOW_CHARS)
    zeros_w = np.zeros(int(words.sum()), dtype=np.int64)
    return TextFeatures(
        n_records=int(words.size),
        record_words=np.concatenate([[0], np.cumsum(words)]).astype(np.int64),
        word_start=zeros_w,
        word_end=zeros_w,
        gram_hash=gram_hash,
        gram_valid=gram_valid,
        record_chars=np.concatenate([[0], np.cumsum(alnum)]).astype(np.int64),
        window_hash=window_hash,
        window_valid=window_valid,
        alnum_positions=np.zeros(int(alnum.sum()), dtype=np.int64),
    )


def self_match(name: str, golden: GoldenSet, view_name: str) -> ScanResult:
    """Match one view of a set against its own items; pairs name the other item as the record."""
    if view_name not in golden.views:
        known = ", ".join(sorted(golden.views))
        raise ManifestError(f"set {name!r} has no view {view_name!r} (views: {known})")
    view = golden.views[view_name]
    target = Target(name, view_name, golden.version, golden.ids, golden.test_index(), 0, golden.n)
    index = ManifestIndex.from_views([target], [view])
    totals = ItemTotals.empty(index)
    table = match_batch(index, features_from_view(view), totals, record_item=np.arange(golden.items))
    result = ScanResult(
        index=index, totals=totals, census=Census(files=[f"{name}:{view_name}"], records=golden.items)
    )
    for row in np.flatnonzero(notable(table)).tolist():
        other = int(table.record[row])
        numbers = dict.fromkeys(COLUMN_NAMES, 0.0) | {
            c: float(table_column[row]) for c, table_column in NUMBERS(table).items()
        }
        result.pairs.append(
            Pair(
                int(table.item[row]),
                f"{name}:{view_name} item {golden.ids[other]}",
                other,
                None,
                view.field,
                numbers,
                _NO_TEXT,
            )
        )
    return result


def template_note(name: str, golden: GoldenSet, view_name: str) -> str:
    """What ``dupes`` says of a view's template n-grams (counts, never text): items that share
    only them are not listed as pairs."""
    label = f"{name}:{view_name}"
    if golden.templates is None:
        return f"{label}: template n-grams not marked (registered before they were: register it again)"
    marks = golden.views[view_name].templates
    if not marks.ngrams:
        return f"{label}: no template n-grams (none in more than {golden.templates.share:.2%} of items)"
    return (
        f"{label}: {marks.ngrams} template 5-grams, the most common in {marks.top} of {golden.items} "
        "items; runs made of them alone are not counted as shared"
    )
