"""Spec 4: markup read as a reader sees it (step m, ``core/spec/markup.py``) and every
default-ignorable code point removed (step b), through every path that hashes text: the
reference functions, the reference path with offsets (``located``), the vectorised path
(compiled, or numpy under ``CONTAM_GUARD_PURE=1``) and the scan's prefilter; and specs 1 to 3
unchanged."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.match.prefilter import CLEAN, EXACT, HITS, LineFormat, Prefilter
from contam_guard.core.spec import located, markup, native, normalise
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.normalise import SPECS, V1, V2, V3, V4, TextSpec
from tests.engine.test_prefilter import build_index

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------------------------
# Step m, rule by rule

J = "\u2060"  # WORD JOINER: the rest of a character reference
REWRITES = [
    # 1. character references: decoded, the rest WORD JOINER (removed)
    ("caf&eacute;", "café" + "\u2060" * 7),
    ("a&nbsp;b", "a\u00a0" + "\u2060" * 5 + "b"),
    ("&amp;&lt;&gt;&quot;&apos;", "".join(ch + J * n for ch, n in zip("&<>\"'", (4, 3, 3, 5, 5)))),
    ("&#101;&#x65;&#X65;&#0000101;", ("e" + "\u2060" * 5) * 3 + "e" + "\u2060" * 9),
    ("&acE;", "\u223e\u0333" + "\u2060" * 3),  # two code points
    ("&#0;&#128;&#xD800;&#x110000;", "".join(c + J * n for c, n in zip("\ufffd€\ufffd\ufffd", (3, 5, 7, 9)))),
    ("&#1;&#xFFFF;", "\u2060" * 4 + "\u2060" * 8),  # numbers HTML drops
    ("&#" + "9" * 5000 + ";", "\ufffd" + "\u2060" * 5002),  # Python's int() would refuse it
    ("&nbsp &foo; &#; &#x; &#12a; &", "&nbsp &foo; &#; &#x; &#12a; &"),  # not references
    ("&" + "a" * 32 + ";", "&" + "a" * 32 + ";"),  # longer than any name
    # 2.-4. comments, autolinks, tags
    ("a<!-- x > y -->b<!-->c<!--->d", "a" + " " * 14 + "b" + " " * 5 + "c" + " " * 6 + "d"),
    ("a<!-- never closed <b>x", "a<!-- never closed    x"),
    ("see<http://x.y/z?a=1&b=2>now", "see http://x.y/z?a=1&b=2 now"),  # the address as it is
    ("mail<joe.doe+x@ex-ample.org>me", "mail joe.doe+x@ex-ample.org me"),
    ("<a:b> <ab:c d>", " " * 14),  # no autolinks (a one-letter scheme; a space): tags
    (
        'x<span>y</b>z<br/>w<a href="u v">v<?php x ?>u<!DOCTYPE html>t',
        "x      y    z     w" + " " * 14 + "v" + " " * 10 + "u" + " " * 15 + "t",
    ),
    ("a<b and c>d, a < b > c, a <3, <_x>, <1>", "a         d, a < b > c, a <3, <_x>, <1>"),
    ("<<48/2=24>>24", "<<48/2=24>>24"),  # GSM8K's calculator annotations
    # 5. Markdown links
    ('x [word](http://a.b/c_(d) "t") y', "x  word                        y"),
    ("[w2][ref] [w3][] [w4] (q)", " w2" + " " * 7 + " w3" + " " * 4 + "[w4] (q)"),
    ("![alt](s.png)", "! alt" + " " * 8),
    ("[a <b](u)>", " a <b    >"),  # a tag in the link text must end inside it
    ("[a [b](c)", "[a  b" + " " * 4),
    ("[a](b [c](d)", "[a](b  c" + " " * 4),
    ("[a&amp;b](u)", " a&" + "\u2060" * 4 + "b" + " " * 4),
    ("[x](y", "[x](y"),
    ("arr[i][j] f[a](b)", "arr i" + " " * 5 + "f a" + " " * 4),  # code: the same on both sides
]


@pytest.mark.parametrize(("text", "expected"), REWRITES)
def test_rewrite_truth_table(text: str, expected: str) -> None:
    assert markup.rewrite(text) == expected
    assert len(expected) == len(text)


WORDS_V4 = [
    ("The<span>cat</span>sat&nbsp;on&#160;the&#x20;mat", ["the", "cat", "sat", "on", "the", "mat"]),
    ("caf&eacute; &amp; cr&egrave;me", ["café", "crème"]),
    ("th&#101; &#69;ND", ["the", "end"]),
    ("see [the docs](https://example.com/a_(b)) now", ["see", "the", "docs", "now"]),
    ("a [b][ref] c <https://x.org/p> d", ["a", "b", "c", "httpsxorgp", "d"]),
    ("one<br>two<!-- three -->four", ["one", "two", "four"]),
    ("wo\u034frd wo\u3164rd wo\u180erd wo\u115frd wo\u17b4rd wo\ufff0rd", ["word"] * 6),
    ("zero\u200bwidth", ["zero", "width"]),  # still a word boundary
    ("&#x200B;&#x3164;", []),  # decoded, then removed or split as any other
    ("\u2060x&amp;lt;y", ["xlty"]),  # decoded once: "&lt;" is text after that
    ("GPT-4在<b>2023</b>年", ["gpt4", "在", "2023", "年"]),
]


@pytest.mark.parametrize(("text", "expected"), WORDS_V4)
def test_words_v4_truth_table(text: str, expected: list[str]) -> None:
    assert normalise.words(text) == V4.words(text) == expected
    assert [w for w, _, _ in located.words(text, V4)] == expected


OLD_SPECS_KEEP_MARKUP = [
    # Specs 1 to 3 as before: the same markup and invisible letters, read as they always were.
    ("The<span>cat sat&nbsp;on", V3, ["thespancat", "satnbspon"]),
    ("[docs](http://x.y) wo\u034frd wo\u3164rd", V3, ["docshttpxy", "wo\u034frd", "wo\u1160rd"]),
    ("[docs](http://x.y) wo\u034frd wo\u3164rd", V2, ["docshttpxy", "wo\u034frd", "wo\u1160rd"]),
    ("caf&eacute; wo\u3164rd", V1, ["cafeacute", "wo\u3164rd"]),
]


@pytest.mark.parametrize(("text", "spec", "expected"), OLD_SPECS_KEEP_MARKUP)
def test_specs_1_to_3_are_unchanged(text: str, spec: TextSpec, expected: list[str]) -> None:
    assert spec.words(text) == expected
    features = extract_features([text], spec=spec)
    assert features.word_counts.tolist() == [len(expected)]


def test_spans_point_at_the_original_text() -> None:
    """A word's span and an alnum character's offset are places in the text as written."""
    text = "He <b>said</b> caf&eacute; [link text](http://x.y) &#x41;BC"
    found = located.words(text, V4)
    spans = [text[s:e] for _, s, e in found]
    assert spans == ["He", "said", "caf&", "link", "text", "&#x41;BC"]
    features = extract_features([text], spec=V4)
    assert [text[s:e] for s, e in zip(features.word_start, features.word_end)] == spans
    view, offsets = located.alnum(text, V4)
    assert view == "Hesaidcaféli" + "nktextABC"
    assert [text[o] for o in offsets] == list("Hesaidcaf&linktext&BC")
    assert features.char_offset.tolist() == offsets


# ------------------------------------------------------------------------------------------
# Step b: every default-ignorable code point

IGNORABLE = [cp for lo, hi in normalise.DEFAULT_IGNORABLE for cp in range(lo, hi + 1)]


def test_default_ignorable_is_unicodes_property() -> None:
    """The ranges written in ``normalise`` are the regex module's property (its Unicode 18.0;
    Python's unicodedata is of an older version, and has no such property)."""
    prop = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    assert [cp for cp in range(0x110000) if prop.match(chr(cp))] == IGNORABLE
    assert len(IGNORABLE) == 4174


PREFIX = "the lamplighter of the harbour town lights thirty-two copper lamps"
SUFFIX = "every evening and each lamp burns four hours while the tide comes in"


def _variants() -> tuple[str, list[str]]:
    """The plain text, and one copy per default-ignorable code point inside its word ``copper``
    (U+200B: between ``co`` and ``pper``, a word boundary)."""
    plain = f"{PREFIX} {SUFFIX}"
    return plain, [plain.replace("copper", f"co{chr(cp)}pper") for cp in IGNORABLE]


def test_every_default_ignorable_code_point_inside_a_word() -> None:
    """Each one, inside a word, in both views, through the reference functions, the reference
    path with offsets and the vectorised path: the word as if it were not there (U+200B: two
    words), the alnum view without it."""
    plain, texts = _variants()
    words, view = V4.words(plain), V4.alnum(plain)
    at = words.index("copper")
    split = [*words[:at], "co", "pper", *words[at + 1 :]]
    features = extract_features([plain, *texts], spec=V4)
    wrong = []
    for k, (cp, text) in enumerate(zip(IGNORABLE, texts), start=1):
        expected = split if cp == 0x200B else words
        if V4.words(text) != expected or [w for w, _, _ in located.words(text, V4)] != expected:
            wrong.append((hex(cp), "words"))
        if V4.alnum(text) != view or located.alnum(text, V4)[0] != view:
            wrong.append((hex(cp), "alnum"))
        valid = features.gram_hash[features.gram_valid]
        grams = valid[features.record_words[k] - 4 * k : features.record_words[k + 1] - 4 * (k + 1)]
        if cp != 0x200B and not np.array_equal(grams, valid[: features.record_words[1] - 4]):
            wrong.append((hex(cp), "5-grams"))
        windows = features.window_hash[features.record_chars[k] : features.record_chars[k + 1]]
        if not np.array_equal(windows, features.window_hash[: features.record_chars[1]]):
            wrong.append((hex(cp), "windows"))
    assert wrong == []
    assert int(np.count_nonzero(features.word_counts == len(words))) == len(texts)  # U+200B's has one more


@pytest.mark.skipif(not native.has_prefilter(), reason="the numpy kernels have no prefilter")
def test_the_prefilter_reads_them_as_the_exact_path_does() -> None:
    """The scan's prefilter (strings decoded straight out of JSON, each rewritten, then hashed):
    every default-ignorable variant and every markup variant of a leaked item gives the hits of
    the plain copy; none goes to the exact path."""
    plain, texts = _variants()
    words = plain.split()
    texts += [
        "&nbsp;".join(words),
        "<span>".join(words),
        " ".join(w.replace("e", "&#101;") for w in words),
        " ".join(f"[{w}](http://x.y/{i})" if i % 9 == 8 else w for i, w in enumerate(words)),
    ]
    index = build_index([("text", [plain])], V4)
    lines = LineFormat(native.module().READ_KEYS, ("text",))
    block = b"".join(json.dumps({"text": t}).encode() + b"\n" for t in [plain, *texts])
    # First contact: code points new to the tables send their lines exact while the filter
    # classifies them: '&', '<' and '[' first (a string is rewritten once its tables class one of
    # them MARKUP), then what the references decode to. After that, every line is decided here.
    for _ in range(3):
        out = Prefilter(index, windows=True).filter(block, lines)
    assert EXACT not in out.status.tolist() and CLEAN not in out.status.tolist()
    assert set(out.status.tolist()) == {HITS}
    per_line = np.bincount(out.grams.record, minlength=len(texts) + 1)
    zwsp = 1 + IGNORABLE.index(0x200B)
    assert (np.delete(per_line, zwsp) == per_line[0]).all()  # U+200B splits a word: one more 5-gram
    windows = np.bincount(out.windows.record, minlength=len(texts) + 1)
    assert (windows == windows[0]).all()


# ------------------------------------------------------------------------------------------
# The compiled kernel's tables, and linear time


def test_the_entity_header_is_what_its_script_writes() -> None:
    spec = importlib.util.spec_from_file_location("make_html_entities", ROOT / "csrc/make_html_entities.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "csrc/html_entities.h").read_text() == module.header()


HOSTILE = [
    "<!--" * 100_000,
    "[a](" * 100_000,
    "[" * 400_000,
    "<a x='" * 70_000,
    "<http:" * 70_000,
    "<a@" * 130_000,
    "&#" + "1" * 400_000,
    "&" + "a" * 400_000,
    "[a]" + "(" * 400_000,
    "[a][" + "x" * 400_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:8]))
def test_hostile_markup_takes_linear_time(text: str) -> None:
    """400,000 characters of markup that never closes: quadratic work would take hours."""
    started = time.perf_counter()
    assert len(markup.rewrite(text)) == len(text)
    extract_features([text, text[::-1]], spec=V4)
    assert time.perf_counter() - started < 20


# ------------------------------------------------------------------------------------------
# Random markup: the paths agree

UNITS = st.sampled_from(
    [
        *("&amp;", "&nbsp;", "&#101;", "&#x65;", "&acE;", "&eacute", "&#0;", "&#x110000;", "<span>", "</b>"),
        *("<br/>", "<a href='x y'>", "<!--", "-->", "[", "]", "(", ")", "](http://x.y/(z))", "][r]"),
        *("<http://x.y>", "<a@b.c>", "alpha", "Bravo", "ß", "İ", "\u0301", "中文", " ", "\n", "\u034f"),
        *("\u3164", "\u200b", "\u2060", *"&<>;#!?/:@x"),
    ]
)
TEXTS = st.lists(UNITS, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=5))
def test_markup_soup_equals_the_spec_in_every_path(texts: list[str]) -> None:
    features = extract_features(texts, spec=V4)
    for record, text in enumerate(texts):
        found = located.words(text, V4)
        assert [w for w, _, _ in found] == V4.words(text)
        lo, hi = features.record_words[record], features.record_words[record + 1]
        assert features.word_start[lo:hi].tolist() == [s for _, s, _ in found]
        assert features.word_end[lo:hi].tolist() == [e for _, _, e in found]
        view, offsets = located.alnum(text, V4)
        assert view == V4.alnum(text)
        lo, hi = features.record_chars[record], features.record_chars[record + 1]
        assert features.char_offset[lo:hi].tolist() == offsets
        assert V4.words(" ".join(V4.words(text))) == V4.words(text)


@pytest.mark.parametrize("spec", SPECS[:3], ids=lambda s: s.label)
def test_markup_is_plain_punctuation_before_spec_4(spec: TextSpec) -> None:
    text = "a<b>c &amp; [d](e)"
    assert spec.words(text) == [w for w, _, _ in located.words(text, spec)]
    assert spec.rewrite(text) == text
    assert V1.words(text) == V2.words(text) == V3.words(text) == ["abc", "amp", "de"]
