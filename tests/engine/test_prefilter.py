"""The JSONL prefilter against the exact engine, line by line and over whole scans.

A line the filter calls CLEAN is only counted, never hashed again, so it must be one the exact
engine finds nothing in; a HITS line is matched from the filter's hits alone, so they must be
exactly the exact engine's. Over whole files, the scan through the filter must give what the
exact path (``read_records`` + ``scan_batch``) gives: records, characters, pairs, totals and
errors, whatever the block size.
"""

from __future__ import annotations

import functools
import gzip
import itertools
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

import contam_guard.engines.local as scan_module
from contam_guard.core.match.index import ManifestIndex, Target
from contam_guard.core.match.matcher import Hits, lookup_hits
from contam_guard.core.match.prefilter import (
    BLANK,
    CLEAN,
    EXACT,
    HITS,
    MORE,
    FilteredBlock,
    LineFormat,
    Prefilter,
)
from contam_guard.core.register.views import hash_view
from contam_guard.core.result import ScanResult
from contam_guard.core.spec import markup, native, normalise
from contam_guard.core.spec import tables as tables_module
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.native import module
from contam_guard.core.spec.normalise import CURRENT, SPECS, TextSpec
from contam_guard.core.spec.tables import CodepointTables, tables_for
from contam_guard.errors import InputError
from contam_guard.io.readers import blocks as block_reader
from contam_guard.io.readers.base import ReadOptions, Segment, Window
from contam_guard.io.readers.documents import documents
from contam_guard.io.readers.fields import strings_in
from contam_guard.io.readers.paragraphs import PARAGRAPH_BYTES, count_records, paragraph_lines
from contam_guard.io.sources import Source
from tests.helpers import scan, write

pytestmark = pytest.mark.skipif(
    not native.has_prefilter(), reason="the compiled prefilter is not loaded (numpy kernels)"
)


def build_index(groups: list[tuple[str, list[str]]], spec: TextSpec = CURRENT) -> ManifestIndex:
    """An index of one target per (view, items) group, numbered like a manifest's."""
    targets, views, first = [], [], 0
    for number, (view, items) in enumerate(groups):
        ids = [str(i) for i in range(len(items))]
        targets.append(Target(f"set{number}", view, 1, ids, np.arange(len(items)), first))
        views.append(hash_view(view, items, None, spec))
        first += len(items)
    return ManifestIndex.from_views(targets, views, spec)


_FRESH = {v: CodepointTables(v) for v in (2, 3, 4)}  # not the tables the filter fills as it goes


def is_special(ch: str, spec: TextSpec = normalise.V1, windows: bool = True) -> bool:
    """A code point whose words the exact path must compute (normalise's SPECIAL class); with
    windows in specs v2 and v3, also one whose alnum character is another code point."""
    if spec.version >= 2:
        fresh = _FRESH[spec.version]
        fresh.ensure(np.array([ord(ch)], dtype=np.uint32))
        classes = fresh.cls_raw_alnum if windows else fresh.cls
        return bool(classes[ord(ch)] == normalise.SPECIAL)
    if ch.isspace() or unicodedata.category(ch)[0] in "PS":
        return False
    return len(ch.lower()) != 1 or ch == "\u03a3"


def hit_rows(hits: Hits, line_of_record: NDArray[np.int64]) -> NDArray[np.int64]:
    """Hits as (line, at, posting) rows, sorted; a hit listed twice fails."""
    rows = np.stack([line_of_record[hits.record], hits.at, hits.posting], axis=1).astype(np.int64)
    rows = rows[np.lexsort(rows.T[::-1])] if rows.size else rows.reshape(0, 3)
    assert not (np.diff(rows, axis=0) == 0).all(axis=1).any(), "a hit listed twice"
    return rows


_native = module()
TEXT_KEY = LineFormat(_native.READ_KEYS, ("text",))
EVERY_STRING = LineFormat(_native.READ_ALL)
TEXT_LINES = LineFormat(_native.READ_TEXT)


def exact_hits(
    index: ManifestIndex, records: list[list[Segment]], lines: list[int]
) -> tuple[NDArray[np.int64], ...]:
    """The exact engine's 5-gram and window hits of ``records`` (each its segments, on ``lines``
    of a block): each record's documents (its values as one, each key apart) hashed, positions
    counted across them as the scan does."""
    found = [documents(segments) for segments in records]
    texts = [document.text for docs in found for document in docs]
    groups = np.concatenate([[0], np.cumsum([len(docs) for docs in found])]).astype(np.int64)
    f = extract_features(texts, windows=True, spec=index.spec)
    grams = lookup_hits(index.grams, f.gram_hash, f.gram_valid, f.record_words[groups], None)
    windows = lookup_hits(index.windows, f.window_hash, f.window_valid, f.record_chars[groups], None)
    line_of = np.asarray(lines, dtype=np.int64)
    return hit_rows(grams, line_of), hit_rows(windows, line_of)


# ------------------------------------------------------------------------------------------
# Line by line: random golden items and records from a small vocabulary

VOCAB = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "kilo"]
# Spec v3: words of scripts written without spaces (each letter a word of its own, Thai and Khmer
# marks staying with their letter), and mixed text; all on the fast path.
VOCAB += ["中文", "数学题", "コーヒー", "กิน", "ສະບາຍ", "ꆈꌠ", "GPT4在2023年", "々〆ー"]
SPECIAL = ["İstanbul", "ΣΟΦΙΑ", "alpha-Σ", "İ"]  # lowercase is not one code point, or in context
ODD = [
    "σοφία",
    "Straße",
    "ẞ",
    "😀",
    "中文字",
    "cafe\u0301",
    "--",
    "...",
    "!?",
    "ǅ",
    "ﬁne",
    "Ω",
    "½",
    "\u212a",
    "\u200b",
    "x\u00a0y",
    "a\u2028b",
    "x\x85y",
    "Ⅻ",
    "٣٤",
    "'quoted'",
    "ALPHA",
    "Bravo,",
    "(charlie)",
    "\x00",
    "\x7f",
    "\ufeff",
    "𝔘𝔫𝔦",
    "ǈ",
    "ϴ",
    "ꭰ",
    "\x1c",
    "\u0345",
    "ᾼ",
    # Spec v2's cases: format characters, selectors, compatibility forms, joining jamo and marks.
    "ＡＬＰＨＡ",
    "𝐛𝐫𝐚𝐯𝐨",
    "al\u00adpha",
    "\u200d",
    "\ufe0f",
    "\U000e0041",
    "e\u200d\u0301",
    "ｶﾞ",
    "ㄱㅏ",
    "\u1100\u200b\u1161",  # alnum-v3's step g joins the jamo (the exact path's)
    "²",
    # Spec v3's: marks of ccc > 0 after a letter of an unspaced script (the exact path's), a
    # Japanese half-width voicing mark, a square word of four ideographs, Hangul (spaced).
    "กินข้าว",
    "ខ្មែរ",
    "བོད་ཡིག",
    "ｶﾞ",
    "㍿",
    "한국어",
    "中ิx",
    # Spec v4's: markup (rewritten before anything else), default-ignorable code points.
    "caf&eacute;",
    "&nbsp;",
    "&#101;cho",
    "&#x1F600;",
    "&acE;",
    "&#0;",
    "<span>",
    "</b>",
    "<a href='x'>",
    "[golf](http://x.y/(z))",
    "[kilo][ref]",
    "<http://x.y>",
    "<!-- c -->",
    "&amp",
    "[",
    "al\u034fpha",
    "br\u3164avo",
]
SEPARATORS = [" ", " ", " ", "  ", "\t", "\n", "\r\n", " \u3000 ", ", ", "<br>", "&nbsp;"]

vocab_words = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6)
odd_tokens = (
    st.sampled_from(ODD)
    | st.sampled_from(SPECIAL)
    | st.text(st.characters(codec="utf-8"), min_size=1, max_size=3)
)


@st.composite
def golden_items(draw: st.DrawFn) -> list[list[str]]:
    """Word lists; the first is plain vocabulary, long enough for 50-character windows."""
    first = draw(st.lists(st.sampled_from(VOCAB), min_size=25, max_size=30))  # 2+ alnum each
    others = draw(
        st.lists(st.lists(st.sampled_from(VOCAB) | odd_tokens, min_size=0, max_size=25), max_size=2)
    )
    return [first, *others]


@st.composite
def record_text(draw: st.DrawFn, items: list[list[str]]) -> str:
    """A text of vocabulary words, odd tokens and runs copied from golden items (as words, or
    glued into longer words so that only windows match)."""
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["vocab", "copy", "copy", "glued", "odd", "odd"]))
        if kind == "vocab":
            parts.extend(draw(vocab_words))
        elif kind == "odd":
            parts.append(draw(odd_tokens))
        else:
            item = draw(st.sampled_from(items))
            if not item:
                continue
            start = draw(st.integers(0, len(item) - 1))
            run = item[start : start + draw(st.integers(3, 20) if kind == "copy" else st.integers(9, 25))]
            if draw(st.booleans()):
                run = [w.upper() for w in run]
            if kind == "glued":
                run = [draw(st.sampled_from(["", "-", "_"])).join(run)]
            parts.extend(run)
    text = ""
    for part in parts:
        text += (draw(st.sampled_from(SEPARATORS)) if text else "") + part
    return text


@dataclass
class Block:
    data: bytes
    lines: list[str | None]  # the text field of each line; None for a blank line

    def segments(self, lines: LineFormat) -> list[list[Segment] | None]:
        """Every string of each line (keys too, in document order) as read without --field, or
        its text field."""
        if lines.mode == _native.READ_ALL:
            raw = self.data.splitlines()
            return [None if t is None else strings_in(json.loads(r)) for t, r in zip(self.lines, raw)]
        return [None if text is None else [Segment("text", text)] for text in self.lines]


@st.composite
def blocks(draw: st.DrawFn, items: list[list[str]]) -> Block:
    texts = draw(st.lists(record_text(items), min_size=0, max_size=8))
    # Always one verbatim copy of the first item: hits happen in every example.
    texts.insert(draw(st.integers(0, len(texts))), " ".join(items[0]))
    lines: list[str | None] = []
    data = b""
    for number, text in enumerate(texts):
        for _ in range(draw(st.integers(0, 1))):
            blank = draw(st.sampled_from(["", " ", "\t", "  \r", "\x0b\x0c"]))
            data += blank.encode() + b"\n"
            lines.append(None)
        record: dict[str, object] = {"text": text}
        if draw(st.booleans()):
            extra = {"id": number, "meta": {"text": 1, "tags": ["x", None, -2.5e-3]}, "ok": True}
            record = {**extra, "text": text} if draw(st.booleans()) else {**record, **extra}
        data += json.dumps(record, ensure_ascii=draw(st.booleans())).encode()
        last = number == len(texts) - 1
        data += draw(st.sampled_from([b"", b"\n", b"\r\n"] if last else [b"\n", b"\r\n"]))
        lines.append(text)
    return Block(data, lines)


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[str], Block]:
    items = draw(golden_items())
    separator = draw(st.sampled_from([" ", "  ", "\n"]))
    return [separator.join(item) for item in items], draw(blocks(items))


def check_block(
    index: ManifestIndex, block: Block, windows: bool, lines: LineFormat = TEXT_KEY
) -> FilteredBlock:
    """Filter ``block`` (read as ``lines`` says) and compare every line with the exact engine;
    returns the filter's output."""
    known = tables_for(index.spec).cls.copy()  # before the filter classifies what it meets
    out = Prefilter(index, windows=windows).filter(block.data, lines)  # first: code points unseen
    records = block.segments(lines)
    assert out.status.size == out.end.size == out.chars.size == len(block.lines)
    # Line ends: just past each line's newline.
    ends = np.cumsum([len(line) for line in block.data.splitlines(keepends=True)])
    assert out.end.tolist() == ends.tolist()

    status = out.status.tolist()
    for k, segments in enumerate(records):
        if segments is None:
            assert status[k] == BLANK
            continue
        # Spec v4 hashes the strings with their markup rewritten (what a reference decodes to).
        text = "".join(markup.rewrite(s.text) if index.spec.version >= 4 else s.text for s in segments)
        # EXACT when the text holds a code point only the exact path handles; a code point seen
        # for the first time may also send its line there (the block is hashed again only when
        # it brings many); never anything else.
        special = any(is_special(ch, index.spec, windows) for ch in text)
        # (A character markup starts with, new to the tables, leaves the string unrewritten.)
        unseen = any(known[ord(ch)] == 0 for ch in text + "".join(s.text for s in segments))
        if special:
            assert status[k] == EXACT, text
        elif not unseen:
            assert status[k] != EXACT, text
        if status[k] != EXACT:
            assert status[k] in (CLEAN, HITS)
            assert int(out.chars[k]) == len(text)

    # The hits of the lines the filter decides: exactly the exact engine's.
    decided = [k for k, segments in enumerate(records) if segments is not None and status[k] != EXACT]
    expected_grams, expected_windows = exact_hits(index, [records[k] or [] for k in decided], decided)
    if not windows:
        expected_windows = expected_windows[:0]
    identity = np.arange(len(block.lines), dtype=np.int64)
    got_grams, got_windows = hit_rows(out.grams, identity), hit_rows(out.windows, identity)
    assert np.array_equal(got_grams, expected_grams)
    assert np.array_equal(got_windows, expected_windows)
    # HITS exactly for the lines with some hit (CLEAN: the exact engine finds none).
    with_hits = set(expected_grams[:, 0].tolist()) | set(expected_windows[:, 0].tolist())
    assert {k for k in decided if status[k] == HITS} == with_hits
    return out


def scan_hits(
    index: ManifestIndex, block: Block, out: FilteredBlock, lines: LineFormat
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The 5-gram and window hits a scan matches in ``block``: the filter's for the lines it
    decided, the exact engine's for the lines it left to the exact path (the scanner reads and
    hashes those again: ``scanner._scan_filtered``), as (line, at, posting) rows."""
    records = block.segments(lines)
    exact = [k for k, segments in enumerate(records) if segments is not None and out.status[k] == EXACT]
    exact_grams, exact_windows = exact_hits(index, [records[k] or [] for k in exact], exact)
    identity = np.arange(len(block.lines), dtype=np.int64)
    grams = np.concatenate([hit_rows(out.grams, identity), exact_grams])
    windows = np.concatenate([hit_rows(out.windows, identity), exact_windows])
    return grams, windows


# Found by Hypothesis (flaky: it failed only while "m", "g", "s" and "k" were new to the
# tables): every string read, the object keys "meta", "tags" and "ok" hold the only new code
# points, so the verbatim copy's line went to the exact path on that first call and the filter
# itself listed only the upper-case copies' 5-grams (no window: the alnum view keeps case).
FIRST_CONTACT = (
    ["foxtrot  hotel  hotel  hotel  foxtrot  alpha  india  foxtrot  echo  delta  delta  hotel  bravo"],
    Block(
        data=b'{"text": "HOTEL HOTEL\\nHOTEL\\r\\nFOXTROT ALPHA INDIA\\t'
        b'FOXTROT  ECHO DELTA  DELTA  HOTEL BRAVO"}\r\n'
        b'{"id": 1, "meta": {"text": 1, "tags": ["x", null, -0.0025]}, "ok": true, "text": "HOTEL\\n'
        b'FOXTROT ALPHA  INDIA FOXTROT\\nECHO DELTA\\r\\nDELTA\\r\\nHOTEL BRAVO bravo"}\n'
        b'{"id": 2, "meta": {"text": 1, "tags": ["x", null, -0.0025]}, "ok": true, "text": '
        b'"foxtrot hotel hotel hotel foxtrot alpha india foxtrot echo delta delta hotel bravo"}',
        lines=[
            "HOTEL HOTEL\nHOTEL\r\nFOXTROT ALPHA INDIA\tFOXTROT  ECHO DELTA  DELTA  HOTEL BRAVO",
            "HOTEL\nFOXTROT ALPHA  INDIA FOXTROT\nECHO DELTA\r\nDELTA\r\nHOTEL BRAVO bravo",
            "foxtrot hotel hotel hotel foxtrot alpha india foxtrot echo delta delta hotel bravo",
        ],
    ),
)


@settings(max_examples=200, deadline=None)
@given(cases())
@example(FIRST_CONTACT)
def test_filter_equals_the_exact_engine_line_by_line(case: tuple[list[str], Block]) -> None:
    items, block = case
    for spec, windows, lines in itertools.product(SPECS, (True, False), (TEXT_KEY, EVERY_STRING)):
        index = build_index([("text", items)], spec)
        out = check_block(index, block, windows, lines)
        # The verbatim copy of item 0 is in every block: a scan matches hits of both kinds, from
        # the filter or, where a line went exact (a code point new to the tables), from the exact
        # engine. Whether the filter lists them itself depends on what the tables met before.
        grams, window_rows = scan_hits(index, block, out, lines)
        assert grams.size > 0
        assert window_rows.size > 0 if windows else out.windows.record.size == 0


@st.composite
def two_field_blocks(draw: st.DrawFn, items: list[list[str]]) -> Block:
    """Records of two text fields, a prompt and a completion; the leak in either, or split
    between them (a run spans the two: a record's values are one document)."""
    lines: list[str | None] = []
    data = b""
    for _ in range(draw(st.integers(1, 6))):
        prompt, completion = draw(record_text(items)), draw(record_text(items))
        if draw(st.booleans()):
            words = items[0]
            cut = draw(st.integers(0, len(words)))
            prompt, completion = " ".join(words[:cut]), " ".join(words[cut:])
        record = {"prompt": prompt, "n": 1, "completion": completion}
        data += json.dumps(record, ensure_ascii=draw(st.booleans())).encode() + b"\n"
        lines.append(prompt)
    data += json.dumps({"completion": " ".join(items[0])}).encode() + b"\n"
    lines.append("")
    return Block(data, lines)


@settings(max_examples=150, deadline=None)
@given(golden_items(), st.data())
def test_every_string_mode_equals_the_exact_engine_over_segments(
    items: list[list[str]], data: st.DataObject
) -> None:
    index = build_index([("text", [" ".join(item) for item in items])])
    block = data.draw(two_field_blocks(items))
    for windows in (True, False):
        out = check_block(index, block, windows, EVERY_STRING)
        assert out.status[-1] == HITS


def test_plain_vocabulary_lines_are_never_exact() -> None:
    items = [" ".join(VOCAB[i % 10] for i in range(k, k + 30)) for k in range(3)]
    index = build_index([("text", items)])
    lines: list[str | None] = [" ".join(VOCAB[(i * 7 + j) % 10] for j in range(i)) for i in range(60)]
    lines += [items[1], items[2][40:], None, items[0].upper()]
    data = b"".join(json.dumps({"text": t}).encode() + b"\n" if t is not None else b"\n" for t in lines)
    out = check_block(index, Block(data, lines), windows=True)
    assert not (out.status == EXACT).any()
    assert (out.status == CLEAN).sum() > 0 and (out.status == HITS).sum() >= 3


def test_many_hits_grow_the_hit_arrays() -> None:
    """More hits than the first hit arrays hold (65536): the block is read again, larger."""
    unit = "alpha bravo charlie delta echo"
    index = build_index([("text", [" ".join([unit] * 20)])])  # each 5-gram: ~20 postings
    text = " ".join([unit] * 800)  # 3996 5-grams: ~77000 gram hits; ~370000 window hits
    lines: list[str | None] = [text, "alpha bravo", text[7:]]
    data = b"".join(json.dumps({"text": t}).encode() + b"\n" for t in lines)
    out = check_block(index, Block(data, lines), windows=True)
    assert out.grams.record.size > 1 << 16
    assert out.windows.record.size > 1 << 16


def test_short_lines_grow_the_line_arrays() -> None:
    """Lines far shorter than the filter assumes (1-byte blank lines, tiny records): it sizes
    its per-line arrays again and reads the block again; every line is still reported."""
    item = " ".join(VOCAB * 2)
    index = build_index([("text", [item])])
    lines: list[str | None] = [None if k % 3 else "a" for k in range(30000)] + [item]
    data = b"".join(json.dumps({"text": t}).encode() + b"\n" if t is not None else b"\n" for t in lines)
    out = check_block(index, Block(data, lines), windows=False)
    assert out.status.size == len(lines)
    assert (out.status == BLANK).sum() == 20000 and out.status[-1] == HITS


def test_many_unseen_code_points() -> None:
    """More unseen code points than the filter reports at once (4096): read again until all
    are classified, then the lines are decided like any other."""
    tables = tables_for(CURRENT)
    unseen = [cp for cp in range(0x20000, 0x2A6E0) if tables.cls[cp] == normalise.UNKNOWN][:9000]
    assert len(unseen) > 5000
    item = " ".join(VOCAB * 2)
    index = build_index([("text", [item])])
    lines: list[str | None] = []
    for start in range(0, len(unseen), 1000):
        chunk = unseen[start : start + 1000]
        words = ["".join(chr(cp) for cp in chunk[i : i + 5]) for i in range(0, len(chunk), 5)]
        lines.append(" ".join(words) + " " + item)
    data = b"".join(json.dumps({"text": t}, ensure_ascii=False).encode() + b"\n" for t in lines)
    out = check_block(index, Block(data, lines), windows=True)
    assert (out.status == HITS).all()


# ------------------------------------------------------------------------------------------
# Whole scans: the filtered path against the forced exact path

ITEMS_A = [
    "Natalia sold clips to forty eight of her friends in April and then she sold half as many "
    "clips in May how many clips did Natalia sell altogether in April and May",
    "Weng earns twelve dollars an hour for babysitting yesterday she just did fifty minutes of "
    "babysitting how much did she earn",
    "Betty is saving money for a new wallet which costs one hundred dollars Betty has only half "
    "of the money she needs",
    "Supercalifragilisticexpialidociousantidisestablishmentarianismfloccinaucinihilipilification"
    " stands alone",
]
ITEMS_B = [
    "James writes a three page letter to two different friends twice a week how many pages does "
    "he write a year",
    "Mark has a garden with flowers he planted plants of three different colors in it",
]
CLEAN_WORDS = [
    "the",
    "weather",
    "in",
    "the",
    "garden",
    "was",
    "mild",
    "and",
    "the",
    "roses",
    "bloomed",
    "early",
    "this",
    "spring",
]


def _clean(n: int) -> str:
    return " ".join(CLEAN_WORDS[(n * 3 + i) % len(CLEAN_WORDS)] for i in range(5 + n % 11))


def _lines_text_key() -> list[bytes]:
    """Every kind of line for the default options (text detected, "text" read by the filter)."""
    a0, a1, a2, a3 = ITEMS_A
    b0, b1 = ITEMS_B
    rows: list[bytes] = []

    def add(obj: object, ending: bytes = b"\n", ascii_only: bool = True) -> None:
        rows.append(json.dumps(obj, ensure_ascii=ascii_only).encode() + ending)

    add({"text": "prefix words " + a0 + " suffix"})
    for n in range(40):
        add({"text": _clean(n), "id": n}, b"\r\n" if n % 3 == 0 else b"\n")
        if n % 7 == 0:
            rows.append(b"\n")
        if n % 11 == 0:
            rows.append(b"  \t \r\n")
        if n % 13 == 0:
            rows.append(b"\x0b\x0c\n")
    add({"text": a1}, b"\r\n")
    add({"id": 7, "text": "half: " + " ".join(a2.split()[:9]) + " and more"}, ascii_only=False)
    add({"text": "short run " + " ".join(b0.split()[3:9]) + " only"})  # 6 words: no notable pair
    add({"messages": [{"role": "user", "content": "tell me " + b1}, {"role": "assistant", "content": "ok"}]})
    add({"messages": [{"role": "user", "content": _clean(3)}]})
    rows.append(('{"text": "' + _clean(4) + '", "text": "dup ' + a0 + '"}\n').encode())  # json keeps the last
    rows.append(('{"text": "' + a1 + '", "text": "dup clean"}\n').encode())
    add({"text": "İstanbul " + a2}, ascii_only=False)
    add({"text": "ΣΟΦΙΑ says " + b1 + " Σ"}, ascii_only=False)
    add({"text": "straße café 😀 中文 " + a0.upper()}, ascii_only=False)
    add({"text": "glued " + a3.replace(" ", "").lower()[5:70] + " window only"})
    add({"text": '\\/ "escaped" \t tabs\nnewlines ' + b0 + "\u2028"}, ascii_only=True)
    add({"text": b0, "contam_guard": "allow"})
    add({"question": "a question " + a1})  # no "text": detected shape, exact path
    add({"instruction": "do this", "input": "", "output": b1})
    add({"text": "", "meta": {"text": a0}})
    add({"meta": [1, 2, {"text": 3}], "text": "nested keys " + a2, "n": -1.5e-7, "ok": None})
    long_text = " ".join(_clean(n) for n in range(6000))
    add({"text": long_text[:200000] + " " + a0 + " " + long_text[200000:] + " " + b1})
    add({"text": " ".join(a0.split()[:10])})  # an item split over two lines: only shorter runs
    add({"text": " ".join(a0.split()[10:])})
    for n in range(40, 60):
        add({"text": _clean(n) + (" " + a1 if n % 5 == 0 else "")})
    add({"text": "last line without newline " + b0}, ending=b"")
    rows[0] = b"\xef\xbb\xbf" + rows[0]
    return rows


def _lines_field_key(field: str) -> list[bytes]:
    """Lines for ``--field FIELD`` (a top-level key the filter reads)."""
    a0, a1, _, _ = ITEMS_A
    b0, b1 = ITEMS_B
    other = "text" if field != "text" else "question"

    def line(obj: dict[str, object], ending: bytes = b"\n") -> bytes:
        return json.dumps(obj, ensure_ascii=False).encode() + ending

    rows = [b"\xef\xbb\xbf" + line({field: a0, other: "not this"})]
    for n in range(30):
        rows.append(line({"id": n, field: _clean(n)}, b"\r\n"))
        if n % 6 == 0:
            rows.append(b"   \n")
    rows += [
        line({field: ["list of", b1]}),  # a list of strings: the exact path joins them
        f'{{"{field}": "dup", "{field}": "{b0}"}}\n'.encode(),  # json keeps the last
        line({field: "İ " + a1}),
        line({field: "ok " + b0, other: a1}),
        line({other: {field: 1}, field: "nested " + a1.upper()}),
        line({field: _clean(99)}, b""),
    ]
    return rows


@dataclass
class FilterSpy:
    """What the prefilter saw: block sizes and line statuses."""

    blocks: list[int]
    statuses: list[int]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> FilterSpy:
    seen = FilterSpy([], [])
    original = Prefilter.filter

    def spying(self: Prefilter, block: bytes, lines: LineFormat) -> FilteredBlock:
        out = original(self, block, lines)
        seen.blocks.append(len(block))
        seen.statuses.extend(out.status.tolist())
        return out

    monkeypatch.setattr(Prefilter, "filter", spying)
    return seen


def run_both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], ScanResult]) -> tuple[ScanResult, ScanResult]:
    """``run()`` through the prefilter, then with the exact path forced."""
    filtered = run()
    with monkeypatch.context() as m:
        m.setattr(scan_module, "line_format", lambda fmt, options: None)
        exact = run()
    return filtered, exact


def assert_same(filtered: ScanResult, exact: ScanResult) -> None:
    assert filtered.records == exact.records
    assert filtered.chars == exact.chars
    assert filtered.files == exact.files
    assert filtered.skipped == exact.skipped
    assert filtered.pairs == exact.pairs
    assert np.array_equal(filtered.totals.run, exact.totals.run)
    assert np.array_equal(filtered.totals.window_found, exact.totals.window_found)


INDEX = build_index([("text", ITEMS_A), ("question", ITEMS_B)])
BLOCK_SIZES = [64, 1000, 5000, None]  # None: the default (4 MiB)


@pytest.fixture(params=BLOCK_SIZES, ids=lambda b: f"block={b or 'default'}")
def block_bytes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    if request.param is not None:
        monkeypatch.setattr(block_reader, "BLOCK_BYTES", request.param)
    return int(block_reader.BLOCK_BYTES)


@pytest.mark.parametrize("windows", [True, False], ids=["windows", "no-windows"])
@pytest.mark.parametrize("field", [None, "question", "text", "вопрос"])
def test_scan_equals_the_exact_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    spy: FilterSpy,
    block_bytes: int,
    field: str | None,
    windows: bool,
) -> None:
    rows = _lines_text_key() if field is None else _lines_field_key(field)
    first = tmp_path / "first.jsonl"
    first.write_bytes(b"".join(rows))
    second = tmp_path / "second.jsonl"
    second.write_bytes(b"".join(rows[len(rows) // 2 :]) + b"\n" + rows[0][3:])
    picture = tmp_path / "picture.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(32))  # cannot hold text: skipped
    sources = [Source(first, "first.jsonl"), Source(picture, "pic.png"), Source(second, "sub/second.jsonl")]
    options = ReadOptions(fields=() if field is None else (field,))
    filtered, exact = run_both(monkeypatch, lambda: scan(INDEX, sources, options, windows=windows))
    assert_same(filtered, exact)

    # The comparison is not vacuous: pairs of every kind, and the filter decided lines itself.
    assert len(filtered.pairs) >= (6 if field else 12)
    assert filtered.files == ["first.jsonl", "sub/second.jsonl"] and len(filtered.skipped) == 1
    assert filtered.totals.run.max() >= 10
    assert filtered.totals.window_found.any() == windows
    if windows and field is None:
        assert any(p.window_hits > 0 and p.longest_run == 0 for p in filtered.pairs)  # window only
    if field is None:
        assert any(p.allowed_inline for p in filtered.pairs)
        assert {p.source for p in filtered.pairs} == {"first.jsonl", "sub/second.jsonl"}
    statuses = set(spy.statuses)
    assert {BLANK, CLEAN, HITS, EXACT} <= statuses
    if block_bytes <= 1000:
        assert len(spy.blocks) > 4  # the block size took effect: many blocks
        if field is None:
            assert max(spy.blocks) > 200000  # the long line is a block of its own
    elif block_bytes == 4 << 20:
        assert len(spy.blocks) == 2  # one per file


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
def test_compressed_scan_equals_the_exact_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: FilterSpy, block_bytes: int, suffix: str
) -> None:
    path = write(tmp_path / f"train{suffix}", b"".join(_lines_text_key()))
    sources = [Source(path, path.name)]
    filtered, exact = run_both(monkeypatch, lambda: scan(INDEX, sources, ReadOptions()))
    assert_same(filtered, exact)
    assert len(filtered.pairs) >= 10 and filtered.files == [path.name]
    assert {CLEAN, HITS, EXACT} <= set(spy.statuses)


def test_scan_of_file_windows_equals_the_exact_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: FilterSpy, block_bytes: int
) -> None:
    """The parallel scan reads windows of a file (``ReadOptions.window``): line and record
    numbers continue from the window's start, through the filter as exactly."""
    path = tmp_path / "train.jsonl"
    data = b"".join(_lines_text_key())
    path.write_bytes(data)
    source = Source(path, "train.jsonl")
    physical = data.splitlines(keepends=True)
    starts = np.cumsum([0] + [len(line) for line in physical]).tolist()
    records_before = np.cumsum([0] + [not line.isspace() for line in physical]).tolist()
    cuts = [0, 1, 2, 17, 40, 41, 60, 77, len(physical)]  # line indexes where windows start
    lines = set()
    for first, last in itertools.pairwise(cuts):
        window = Window(starts[first], starts[last], first + 1, records_before[first])
        options = ReadOptions(window=window)
        filtered, exact = run_both(monkeypatch, lambda: scan(INDEX, [source], options))  # noqa: B023
        assert_same(filtered, exact)
        lines |= {p.line for p in filtered.pairs}
    whole = scan(INDEX, [source], ReadOptions())
    assert lines == {p.line for p in whole.pairs} and len(lines) > 10
    assert {CLEAN, HITS, EXACT} <= set(spy.statuses)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label)
@pytest.mark.parametrize("fields", [(), ("text",)], ids=["every-string", "field"])
def test_a_scan_meeting_new_code_points_still_finds_every_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: FilterSpy, spec: TextSpec, fields: tuple[str, ...]
) -> None:
    """The filter's first meeting with code points: with tables that know only the golden
    items' code points (as at the start of a scan), the lines holding new ones (object keys,
    upper case, tabs) go to the exact path, which finds their windows; the scan's pairs are the
    exact path's (the Hypothesis example ``FIRST_CONTACT``, as a whole scan)."""
    monkeypatch.setattr(tables_module, "_tables", functools.cache(CodepointTables))  # fresh tables
    items, block = FIRST_CONTACT
    index = build_index([("text", items)], spec)
    path = tmp_path / "train.jsonl"
    path.write_bytes(block.data)
    options = ReadOptions(fields=fields)
    filtered, exact = run_both(monkeypatch, lambda: scan(index, [Source(path, "train.jsonl")], options))
    assert_same(filtered, exact)
    # New code points sent lines exact: upper case and "\t" in the first two texts, and without
    # --field the keys "meta", "tags" and "ok" of the copy's line too (the Hypothesis failure).
    assert spy.statuses == [EXACT, EXACT, HITS if fields else EXACT]
    copy = [p for p in filtered.pairs if p.line == 3]
    assert len(copy) == 1 and copy[0].window_hits > 0 and copy[0].longest_run == len(items[0].split())
    assert filtered.totals.window_found.all()


# ------------------------------------------------------------------------------------------
# Errors: the same message, and the same results before it with --skip-unreadable

# Errors with --field text only: without it, every JSON value is read (these are records).
FIELD_BAD_LINES = {
    "not an object": b'["text", "a"]',
    "text not a string": b'{"text": 5}',
    "no text field": b'{"body": "a"}',
}
BAD_LINES = {
    "invalid JSON": b'{"text": "a",}',
    "invalid UTF-8": b'{"text": "caf\xc3"}',
    "two objects": b'{"text": "a"} {"text": "b"}',
    "nested too deeply": b'{"x": ' + b"[" * 100000 + b"]" * 100000 + b', "text": "a"}',
}


def _file_with_bad_line(path: Path, bad: bytes, rows: list[bytes] | None = None) -> int:
    """Write the lines (default: ``_lines_text_key()``) with ``bad`` in the middle; returns
    its line number."""
    rows = rows or _lines_text_key()
    before = b"".join(rows[: len(rows) * 3 // 4])
    path.write_bytes(before + bad + b"\n" + b"".join(rows[len(rows) * 3 // 4 :]))
    return before.count(b"\n") + 1


def errors_both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], ScanResult]) -> tuple[str, str]:
    """The message of the InputError ``run()`` raises through the prefilter, then exactly."""
    messages = []
    for forced in (False, True):
        with monkeypatch.context() as m:
            if forced:
                m.setattr(scan_module, "line_format", lambda fmt, options: None)
            with pytest.raises(InputError) as info:
                run()
        messages.append(str(info.value))
    return messages[0], messages[1]


CASES = [(bad, ()) for bad in BAD_LINES.values()] + [(bad, ("text",)) for bad in FIELD_BAD_LINES.values()]


@pytest.mark.parametrize(("bad", "fields"), CASES, ids=[*BAD_LINES, *FIELD_BAD_LINES])
def test_errors_are_the_exact_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int, bad: bytes, fields: tuple[str, ...]
) -> None:
    path = tmp_path / "train.jsonl"
    line = _file_with_bad_line(path, bad, _lines_field_key("text")[1:-1] * 3 if fields else None)
    sources = [Source(path, "train.jsonl")]
    options = ReadOptions(fields=fields)
    errors = errors_both(monkeypatch, lambda: scan(INDEX, sources, options))
    assert errors[0] == errors[1]
    assert errors[0].startswith(f"train.jsonl:{line}:")

    def skipping() -> ScanResult:
        return scan(INDEX, sources, options, batch_chars=1, skip_unreadable=True)

    filtered, exact = run_both(monkeypatch, skipping)
    assert_same(filtered, exact)
    assert filtered.records > 50 and len(filtered.pairs) >= 4 and len(filtered.skipped) == 1
    assert filtered.files == []


def _truncated_gz(path: Path) -> Path:
    rows = _lines_text_key() * 3
    data = gzip.compress(b"".join(row if row.endswith(b"\n") else row + b"\n" for row in rows))
    path.write_bytes(data[: len(data) // 2])
    return path


def test_truncated_gzip_fails_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    path = _truncated_gz(tmp_path / "train.jsonl.gz")
    sources = [Source(path, "train.jsonl.gz")]
    errors = errors_both(monkeypatch, lambda: scan(INDEX, sources, ReadOptions()))
    assert errors[0] == errors[1]
    assert "train.jsonl.gz" in errors[0]

    def skipping() -> ScanResult:
        return scan(INDEX, sources, ReadOptions(), batch_chars=1, skip_unreadable=True)

    filtered, exact = run_both(monkeypatch, skipping)
    assert_same(filtered, exact)
    assert filtered.records > 40 and filtered.pairs and len(filtered.skipped) == 1


def _file_failing_after(path: Path) -> Path:
    """A leak, a record with an empty text, then a line that cannot be read."""
    path.write_bytes(
        b"".join(
            json.dumps(row).encode() + b"\n"
            for row in [{"text": "copied: " + ITEMS_A[0]}, {"text": _clean(1)}, {"text": ""}]
        )
        + b'{"text": "a",}\n'
        + json.dumps({"text": ITEMS_A[1]}).encode()
        + b"\n"
    )
    return path


def test_skip_unreadable_with_an_empty_record_before_the_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison of ``test_errors_are_the_exact_paths`` (batches of one character) when
    the record just before the failure has an empty text: it is still a record, though it
    fills no batch, and must not be lost when reading fails after it."""
    sources = [Source(_file_failing_after(tmp_path / "train.jsonl"), "train.jsonl")]

    def skipping() -> ScanResult:
        return scan(INDEX, sources, ReadOptions(), batch_chars=1, skip_unreadable=True)

    filtered, exact = run_both(monkeypatch, skipping)
    assert filtered.records == 3 and len(filtered.pairs) == 1
    assert_same(filtered, exact)


@pytest.mark.parametrize("forced_exact", [False, True], ids=["filtered", "exact"])
def test_skip_unreadable_counts_the_records_read_before_the_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forced_exact: bool
) -> None:
    """``scan``'s contract: with skip_unreadable, "the records read before the failure still
    count" -- at the default batch size too, whichever path reads the file."""
    sources = [Source(_file_failing_after(tmp_path / "train.jsonl"), "train.jsonl")]
    if forced_exact:
        monkeypatch.setattr(scan_module, "line_format", lambda fmt, options: None)
    result = scan(INDEX, sources, ReadOptions(), skip_unreadable=True)
    assert len(result.skipped) == 1 and "train.jsonl:4:" in result.skipped[0]
    assert result.records == 3
    assert [p.line for p in result.pairs] == [1]


# ------------------------------------------------------------------------------------------
# Plain-text files: each line, its ending stripped, is a record's text


def _text_lines() -> list[bytes]:
    a0, a1, a2, a3 = ITEMS_A
    b0, b1 = ITEMS_B
    rows = [b"\xef\xbb\xbf" + ("prefix " + a0 + " suffix\n").encode()]
    for n in range(40):
        rows.append((_clean(n) + ("\r\n" if n % 3 == 0 else "\n")).encode())
        if n % 7 == 0:
            rows.append(b"  \t \r\n")
    rows += [
        (a1 + "\r\n").encode(),
        ("İstanbul " + a2 + "\n").encode(),  # a special code point: the exact path
        ("straße café 😀 中文 " + a0.upper() + "\n").encode(),
        ("a lone carriage return stays " + b0 + "\r\r\n").encode(),
        ("glued " + a3.replace(" ", "").lower()[5:70] + " window only\n").encode(),
        ('{"text": "json in a text file ' + b1 + '"}\n').encode(),
        ("tabs\tand\x0bvertical " + _clean(3) + "\n").encode(),
        ("last line without newline " + b0).encode(),
    ]
    return rows


@pytest.mark.parametrize("suffix", [".txt", ".md", ".txt.gz"])
def test_text_scan_equals_the_exact_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: FilterSpy, block_bytes: int, suffix: str
) -> None:
    path = write(tmp_path / f"notes{suffix}", b"".join(_text_lines()))
    sources = [Source(path, path.name)]
    filtered, exact = run_both(monkeypatch, lambda: scan(INDEX, sources, ReadOptions()))
    assert_same(filtered, exact)
    # 55 lines, 6 of them blank: 7 paragraphs
    assert len(filtered.pairs) >= 6 and filtered.records == 7
    assert any(p.window_hits > 0 and p.longest_run == 0 for p in filtered.pairs)  # window only
    assert {BLANK, CLEAN, HITS, EXACT} <= set(spy.statuses)


def test_text_errors_and_binary_files_are_the_exact_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a0 = ITEMS_A[0]
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\n" + a0.encode() + b"\nbroken \xff byte\nafter " + a0.encode() + b"\n")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"text\x00with a NUL\n" + a0.encode() + b"\n")
    messages = []
    for forced in (False, True):
        with monkeypatch.context() as m:
            if forced:
                m.setattr(scan_module, "line_format", lambda fmt, options: None)
            with pytest.raises(InputError) as info:
                scan(INDEX, [Source(bad, "bad.txt")], ReadOptions())
            messages.append(str(info.value))
            with pytest.raises(InputError) as info:
                scan(INDEX, [Source(binary, "binary.txt")], ReadOptions())
            messages.append(str(info.value))
    assert messages[:2] == messages[2:]
    assert "bad.txt:3" in messages[0] and "byte offset" in messages[0]
    assert "binary.txt: binary data" in messages[1]


@settings(max_examples=150, deadline=None)
@given(
    golden_items(),
    st.lists(
        st.lists(st.sampled_from([*VOCAB, *VOCAB, *SPECIAL, *ODD, "\r", "\t", "--", "\x0b"]), max_size=40),
        min_size=1,
        max_size=12,
    ),
    st.data(),
)
def test_text_paragraphs_filter_equals_the_exact_engine(
    items: list[list[str]], lines: list[list[str]], data: st.DataObject
) -> None:
    """Plain-text mode, paragraph by paragraph: a paragraph's status is on its first line, its
    later lines are MORE, and a decided paragraph's hits are the exact engine's on its lines with
    the last one's ending stripped, as the text reader takes it (a run crosses its line breaks)."""
    # First a verbatim copy, wrapped over lines (grams and windows must hit across the breaks).
    width = data.draw(st.integers(1, 8))
    copy = [" ".join(items[0][k : k + width]) for k in range(0, len(items[0]), width)]
    texts = [*copy, "", *(" ".join(words) for words in lines)]
    endings = [data.draw(st.sampled_from([b"\n", b"\r\n"])) for _ in texts]
    raw = [t.encode() + e for t, e in zip(texts, endings)]
    blank = [line.isspace() for line in raw]  # what the text reader skips
    firsts = [k for k in range(len(raw)) if not blank[k] and (k == 0 or blank[k - 1])]
    ends = [next((j for j in range(k, len(raw)) if blank[j]), len(raw)) for k in firsts]
    joined = {k: b"".join(raw[k:end]).decode() for k, end in zip(firsts, ends)}
    paragraphs = {k: text[: len(text) - (2 if text.endswith("\r\n") else 1)] for k, text in joined.items()}
    for spec in SPECS:
        index = build_index([("text", [" ".join(item) for item in items])], spec)
        known = tables_for(spec).cls.copy()  # before the filter classifies what it meets
        out = Prefilter(index, windows=True).filter(b"".join(raw), TEXT_LINES)
        assert [s == BLANK for s in out.status.tolist()] == blank
        assert [k for k, s in enumerate(out.status.tolist()) if s not in (BLANK, MORE)] == firsts
        for k, text in paragraphs.items():
            hashed = markup.rewrite(text) if spec.version >= 4 else text
            if any(is_special(ch, spec) for ch in hashed):
                assert out.status[k] == EXACT
        decided = [k for k in firsts if out.status[k] != EXACT]
        # The copy is decided unless it holds a code point the tables met for the first time in
        # this block (its line then goes exact, unless the block brought many: hashed again).
        copy_unseen = any(known[ord(ch)] == 0 for ch in paragraphs[0] + markup.rewrite(paragraphs[0]))
        if 0 not in decided:
            assert copy_unseen
            continue
        expected_grams, expected_windows = exact_hits(
            index, [[Segment("", paragraphs[k])] for k in decided], decided
        )
        identity = np.arange(len(texts), dtype=np.int64)
        assert np.array_equal(hit_rows(out.grams, identity), expected_grams)
        assert np.array_equal(hit_rows(out.windows, identity), expected_windows)
        assert out.status[0] == HITS


def test_a_text_without_blank_lines_is_cut_at_paragraph_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spy: FilterSpy
) -> None:
    """Lines and no blank one: records end after the line at which they reach PARAGRAPH_BYTES,
    on both paths, in blocks or line by line; a leak wrapped over lines in the middle is found on
    the line its run starts on."""
    filler = "".join(f"line {k} of a corpus with one short document per line\n" for k in range(2_000))
    a0 = ITEMS_A[0].split()
    wrapped = "\n".join(" ".join(a0[k : k + 4]) for k in range(0, len(a0), 4)) + "\n"
    data = (filler + wrapped + filler).encode()
    path = write(tmp_path / "corpus.txt", data)
    filtered, exact = run_both(monkeypatch, lambda: scan(INDEX, [Source(path, path.name)], ReadOptions()))
    assert_same(filtered, exact)
    records = [p for p in paragraph_lines(data.splitlines(keepends=True)) if p is not None]
    assert all(len(p.raw) >= PARAGRAPH_BYTES > len(p.raw) - 100 for p in records[:-1])
    assert filtered.records == len(records) == count_records(data) > 10
    (pair,) = [p for p in filtered.pairs if p.longest_run >= 13]
    holding = [k for k, p in enumerate(records) if p.first_line <= 2_000 < p.first_line + p.raw.count(b"\n")]
    assert pair.line == 2_001 and [pair.record] == holding  # after the 2,000 filler lines
    assert MORE in spy.statuses


@pytest.mark.parametrize("layout", ["list", "siblings", "nested", "keys between"])
def test_a_leak_cut_into_strings_is_found_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    """A record's value strings are one document on both paths: the run crosses them, keys
    between values do not break it, and the pair names the fields it spans."""
    words = ITEMS_A[0].split()
    parts = [" ".join(words[k : k + 5]) for k in range(0, len(words), 5)]
    layouts: dict[str, dict[str, object]] = {
        "list": {"id": 3, "sentences": parts},
        "siblings": {f"s{k}": part for k, part in enumerate(parts)},
        "nested": {"a": {"b": parts[:2]}, "c": [{"d": p} for p in parts[2:]]},
        "keys between": {f"long key number {k} of many words here": part for k, part in enumerate(parts)},
    }
    record = layouts[layout]
    path = write(
        tmp_path / "split.jsonl", (json.dumps({"text": "clean"}) + "\n" + json.dumps(record) + "\n").encode()
    )
    filtered, exact = run_both(monkeypatch, lambda: scan(INDEX, [Source(path, path.name)], ReadOptions()))
    assert_same(filtered, exact)
    (pair,) = [p for p in filtered.pairs if p.longest_run >= 13]
    assert pair.longest_run == len(words) and (pair.line, pair.record) == (2, 1)
    first, last = pair.field.split("..")
    n = len(parts) - 1
    assert first.endswith(("sentences[0]", "s0", "a.b[0]", '"long key number 0 of many words here"]'))
    assert last.endswith(
        (f"sentences[{n}]", f"s{n}", f"c[{n - 2}].d", f'"long key number {n} of many words here"]')
    )
