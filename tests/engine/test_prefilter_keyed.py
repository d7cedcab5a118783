"""The prefilter with a keyed manifest: it passes each 5-gram and window hash through SipHash-2-4
under the key before looking it up, so that a keyed scan through it gives exactly what the exact
keyed path gives, and what an unkeyed scan of an unkeyed manifest gives (keying changes the
hashes, never the matches)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from contam_guard.core.match.index import ManifestIndex, Postings, Target
from contam_guard.core.match.matcher import Hits, lookup_hits
from contam_guard.core.match.prefilter import CLEAN, EXACT, HITS, FilteredBlock, LineFormat, Prefilter
from contam_guard.core.register.views import hash_view
from contam_guard.core.result import ScanResult
from contam_guard.core.spec import native
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.spec.normalise import CURRENT, SPECS, TextSpec
from contam_guard.io.readers.base import ReadOptions, Segment
from contam_guard.io.readers.documents import documents
from contam_guard.io.sources import Source
from tests.engine.test_prefilter import (
    EVERY_STRING,
    ITEMS_A,
    ITEMS_B,
    TEXT_KEY,
    Block,
    _lines_field_key,
    _lines_text_key,
    assert_same,
    cases,
    hit_rows,
    run_both,
)
from tests.helpers import scan

pytestmark = pytest.mark.skipif(
    not native.has_prefilter(), reason="the compiled prefilter is not loaded (numpy kernels)"
)

KEY = HashKey("a-long-secret-for-the-keyed-prefilter-tests-0123")
OTHER = HashKey("another-long-secret-for-keyed-prefilter-tests-99")


def build_index(
    groups: list[tuple[str, list[str]]], key: HashKey | None, spec: TextSpec = CURRENT
) -> ManifestIndex:
    """An index of one target per (view, items) group, hashed with ``key``, as a manifest's."""
    targets, views, first = [], [], 0
    for number, (view, items) in enumerate(groups):
        ids = [str(i) for i in range(len(items))]
        targets.append(Target(f"set{number}", view, 1, ids, np.arange(len(items)), first))
        views.append(hash_view(view, items, key, spec))
        first += len(items)
    return ManifestIndex.from_views(targets, views, spec)


def filtered(index: ManifestIndex, data: bytes, lines: LineFormat, key: HashKey | None) -> FilteredBlock:
    return Prefilter(index, windows=True, key=key).filter(data, lines)


def keyed_exact_hits(
    index: ManifestIndex, records: list[list[Segment]], lines: list[int], key: HashKey
) -> tuple[np.ndarray, np.ndarray]:
    """The exact path's keyed 5-gram and window hits of ``records`` (on ``lines`` of a block),
    each record's documents hashed (``io.readers.documents``)."""
    found = [documents(segments) for segments in records]
    texts = [document.text for docs in found for document in docs]
    groups = np.concatenate([[0], np.cumsum([len(docs) for docs in found])]).astype(np.int64)
    f = extract_features(texts, key=key, windows=True, spec=index.spec)
    grams = lookup_hits(index.grams, f.gram_hash, f.gram_valid, f.record_words[groups], None)
    windows = lookup_hits(index.windows, f.window_hash, f.window_valid, f.record_chars[groups], None)
    line_of = np.asarray(lines, dtype=np.int64)
    return hit_rows(grams, line_of), hit_rows(windows, line_of)


def meant_rows(hits: Hits, postings: Postings, line_of: np.ndarray, kind: str) -> np.ndarray:
    """Hits as sorted (line, at, item, position) rows: what a posting means, not its number.

    Manifest 2 numbers postings in each view's table order, which is sorted by hash, so the same
    5-gram or window has another number under a key; its item (and a 5-gram's position) stay.
    """
    item = postings.item_of(hits.posting)
    place = postings.position_of(hits.posting) if kind == "grams" else np.zeros_like(item)
    rows = np.stack([line_of[hits.record], hits.at, item, place], axis=1).astype(np.int64)
    return rows[np.lexsort(rows.T[::-1])] if rows.size else rows.reshape(0, 4)


@settings(max_examples=100, deadline=None)
@given(cases())
def test_keyed_filter_lists_the_exact_keyed_hits_line_by_line(case: tuple[list[str], Block]) -> None:
    items, block = case
    for spec, lines in itertools.product(SPECS, (TEXT_KEY, EVERY_STRING)):
        plain_index = build_index([("text", items)], None, spec)
        keyed_index = build_index([("text", items)], KEY, spec)
        filtered(plain_index, block.data, lines, None)  # classifies the block's new code points
        plain = filtered(plain_index, block.data, lines, None)
        keyed = filtered(keyed_index, block.data, lines, KEY)
        # The same lines decided, the same hits: only the hashes looked up differ.
        assert keyed.status.tolist() == plain.status.tolist()
        identity = np.arange(keyed.status.size, dtype=np.int64)
        for kind in ("grams", "windows"):
            got = meant_rows(getattr(keyed, kind), getattr(keyed_index, kind), identity, kind)
            want = meant_rows(getattr(plain, kind), getattr(plain_index, kind), identity, kind)
            assert np.array_equal(got, want), kind
        assert (keyed.status == HITS).any() and keyed.grams.record.size > 0  # item 0 is in every block
        # ... and they are the exact path's keyed hits.
        records = block.segments(lines)
        decided = [k for k, s in enumerate(records) if s is not None and keyed.status[k] != EXACT]
        grams, windows = keyed_exact_hits(keyed_index, [records[k] or [] for k in decided], decided, KEY)
        assert np.array_equal(hit_rows(keyed.grams, identity), grams)
        assert np.array_equal(hit_rows(keyed.windows, identity), windows)


def test_the_key_decides_what_the_filter_finds() -> None:
    """A keyed manifest looked up with another key, or with none, gives nothing: the filter
    really applies the key (and the key it is given)."""
    data = "".join(f'{{"text": "words before {item} and after"}}\n' for item in ITEMS_A).encode()
    index = build_index([("text", ITEMS_A)], KEY)
    filtered(index, data, TEXT_KEY, KEY)
    assert (filtered(index, data, TEXT_KEY, KEY).status == HITS).all()
    for wrong in (OTHER, None):
        out = filtered(index, data, TEXT_KEY, wrong)
        assert (out.status == CLEAN).all() and out.grams.record.size == out.windows.record.size == 0


class Spy:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.statuses: list[int] = []
        original = Prefilter.filter

        def spying(prefilter: Prefilter, block: bytes, lines: LineFormat) -> FilteredBlock:
            out = original(prefilter, block, lines)
            self.statuses.extend(out.status.tolist())
            return out

        monkeypatch.setattr(Prefilter, "filter", spying)


@pytest.mark.parametrize("windows", [True, False], ids=["windows", "no-windows"])
@pytest.mark.parametrize("field", [None, "question"])
def test_keyed_scan_through_the_prefilter_equals_the_exact_keyed_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str | None, windows: bool
) -> None:
    rows = _lines_text_key() if field is None else _lines_field_key(field)
    path = tmp_path / "train.jsonl"
    path.write_bytes(b"".join(rows))
    sources = [Source(path, "train.jsonl")]
    options = ReadOptions(fields=() if field is None else (field,))
    groups = [("text", ITEMS_A), ("question", ITEMS_B)]
    keyed_index = build_index(groups, KEY)
    spy = Spy(monkeypatch)

    def run(index: ManifestIndex, key: HashKey | None) -> ScanResult:
        return scan(index, sources, options, key=key, windows=windows)

    through_filter, exact = run_both(monkeypatch, lambda: run(keyed_index, KEY))
    assert_same(through_filter, exact)
    # Not vacuous: the filter decided lines itself (clean, with hits, and some left to the exact
    # path, which hashes them with the key too), and pairs were found.
    assert {CLEAN, HITS, EXACT} <= set(spy.statuses)
    assert len(through_filter.pairs) >= (6 if field else 12)
    # Keying changes the hashes, never the findings.
    assert_same_findings(through_filter, run(build_index(groups, None), None))
    assert bool(through_filter.totals.window_found.any()) == windows


def assert_same_findings(keyed: ScanResult, plain: ScanResult) -> None:
    """``assert_same`` across two indexes: the windows found compared per item (manifest 2
    numbers window postings in hash order, which a key changes)."""
    assert (keyed.records, keyed.chars, keyed.files, keyed.skipped) == (
        plain.records,
        plain.chars,
        plain.files,
        plain.skipped,
    )
    assert keyed.pairs == plain.pairs
    assert np.array_equal(keyed.totals.run, plain.totals.run)
    per_item = [
        np.bincount(r.index.windows.item_of(np.flatnonzero(r.totals.window_found)), minlength=r.index.items)
        for r in (keyed, plain)
    ]
    assert np.array_equal(per_item[0], per_item[1])


def test_keyed_lookups_wait_in_batches_that_never_cross_lines() -> None:
    """The filter keys a line's hashes a batch (512) at a time: a long line flushes mid-way, and a
    line that goes to the exact path part-way (a SPECIAL code point after the leak) drops what
    was waiting, so that none of it is counted on the next line."""
    a0 = ITEMS_A[0]
    filler = " ".join(f"w{n}" for n in range(700))  # 700 words: more than one batch before the leak
    rows = [
        {"text": f"{filler} {a0} {filler}"},  # HITS, found across batches
        {"text": f"{a0} İ"},  # the leak's hashes wait, then the line goes EXACT
        {"text": "clean words only here and nothing else at all"},  # CLEAN: nothing carried over
        {"text": f"{filler} {a0} İ"},  # a batch flushed before the line goes EXACT
        {"text": " ".join(ITEMS_B[1].split()[:6])},  # words of an item not in this index: CLEAN
    ]
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    plain_index, keyed_index = build_index([("text", ITEMS_A)], None), build_index([("text", ITEMS_A)], KEY)
    filtered(plain_index, data, TEXT_KEY, None)
    plain, keyed = filtered(plain_index, data, TEXT_KEY, None), filtered(keyed_index, data, TEXT_KEY, KEY)
    assert keyed.status.tolist() == plain.status.tolist() == [HITS, EXACT, CLEAN, EXACT, CLEAN]
    identity = np.arange(len(rows), dtype=np.int64)
    for kind in ("grams", "windows"):
        got = meant_rows(getattr(keyed, kind), getattr(keyed_index, kind), identity, kind)
        want = meant_rows(getattr(plain, kind), getattr(plain_index, kind), identity, kind)
        assert np.array_equal(got, want), kind
    assert set(keyed.grams.record.tolist()) == {0} and keyed.grams.record.size >= len(a0.split()) - 4
