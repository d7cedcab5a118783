"""The scan's word lists (``core.reword.words``) are the manifest's normalisation, word for word,
under every spec: on mixed ASCII and non-ASCII text, and across every whitespace character."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.reword.content import features_of
from contam_guard.core.reword.numbers import mask_words
from contam_guard.core.reword.words import normalised_words, word_lists
from contam_guard.core.spec.normalise import SPECS, TextSpec, is_ignorable


def reference_content(words: list[str]) -> list[str]:
    """Content features word by word, as the rule defines them (spec ``words-v2``: each number's
    value and its pair with the number with a value before it, a content word's stem cut to 5
    characters and the pair of a number with the content word after it), without the scan's
    per-word cache or its one-pass merge with masking."""
    out: list[str] = []
    last: str | None = None
    previous: str | None = None
    for word in words:
        is_number, number, inside, stem = features_of(word)
        if is_number:
            last = number
            if number is not None:
                out += [number, *([f"{previous}>{number}"] if previous is not None else [])]
                previous = number
            continue
        out += inside
        if stem is not None:
            stem = stem[:5]
            out += [stem, *([f"{last}~{stem}"] if last is not None else [])]
            last = None
    return out


def register_word_lists(texts: list[str], spec: TextSpec) -> tuple[list[list[str]], list[list[str]]]:
    """The reference: the spec's own words (``TextSpec.words``), masked and featured word by word."""
    normalised = [spec.words(text) for text in texts]
    return [mask_words(words) for words in normalised], [reference_content(words) for words in normalised]


# ASCII words, punctuation and spaces; and what the reference path exists for: NBSP, ideographic
# space, zero-width space and joiner, soft hyphen, BOM, combining marks, ligatures, full-width
# digits and letters, circled digits, dotted capital I, final sigma, Han, Thai with its marks,
# a variation selector, curly quotes and dashes.
PIECES = [
    *("Janet", "eggs", "16", "$2.74", "3/4", "25%", "don't", "A-B", "x", " ", "  ", "\n", "\t", ",", "."),
    *("\u00a0", "\u3000", "\u200b", "\u200d", "\u00ad", "\ufeff", "e\u0301", "\u0301", "\ufb01", "１６"),
    *("Ｅｇｇ", "\u2460", "\u0130", "ΟΔΟΣ", "Σ", "鸡蛋", "ไข่", "\ufe0f", "\u2019", "\u2014", "café", "²"),
    # Spec 4's markup (a tag or a link holds spaces) and default-ignorable code points.
    *("&amp;", "&nbsp;", "&#101;", "&#91;", "<b>", "</b>", "<a href='x y'>", "[", "](u v)", "][r]", "<!--"),
    *("-->", "<http://x.y>", "\u034f", "\u3164"),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.words_name)
@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=25))
def test_words_are_the_specs_words(spec: TextSpec, pieces: list[str]) -> None:
    text = "".join(pieces)
    assert normalised_words(text, spec) == spec.words(text)


@pytest.mark.parametrize(
    "text",
    [
        "She sells the remainder at the farmers\u2019 market daily for $2 per fresh duck egg.",
        "Natalia sold clips to 48 of her friends in April \u2014 and then half as many in May.",
        "caf\u00e9\u00a0au lait: 1\u00bd cups, \u2460 then \u2461; ΟΔΟΣ ΟΔΟΣ. 鸡蛋 16 个",
        "\u200bzero\u200bwidth\u200b joiner\u200d here \u00adsoft\u00adhyphen",
        "",
        "\u3000",
    ],
)
def test_the_scan_and_register_word_lists_agree(text: str) -> None:
    for spec in SPECS:
        assert normalised_words(text, spec) == spec.words(text)
    assert word_lists([text], SPECS[-1]) == register_word_lists([text], SPECS[-1])


def test_no_step_joins_or_splits_across_whitespace() -> None:
    """What token-wise normalisation relies on: every whitespace character stays a word
    boundary under every spec (none is removed as a format character, none becomes a letter)."""
    spaces = [chr(cp) for cp in range(sys.maxunicode + 1) if chr(cp).isspace()]
    assert len(spaces) > 20
    for ch in spaces:
        assert not is_ignorable(ch) and not is_ignorable(ch, 4), hex(ord(ch))
        for spec in SPECS:
            assert spec.words(f"a{ch}b") == ["a", "b"], (spec.words_name, hex(ord(ch)))
            assert normalised_words(f"\u00e9{ch}b{ch}\u00e9", spec) == spec.words(f"\u00e9{ch}b{ch}\u00e9")


NUMBERISH = [
    *("three", "twenty-five", "hundreds", "half", "twice", "2nd", "3/4ths", "1 1/2", "10-foot", "007"),
    *("eggs", "egg", "baking", "bakes", "the", "a", "is", "x2", "dozen", "$1,234.50", "-48", " ", "\u2019s"),
]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(NUMBERISH + PIECES), max_size=30))
def test_scan_word_lists_are_the_registered_ones(pieces: list[str]) -> None:
    """Masked words and content features as ``register`` computes them (mask_words and
    content_words on the reference normalisation), on numbers, number words and stems."""
    texts = [" ".join(pieces), "".join(pieces)]
    for spec in SPECS:
        assert word_lists(texts, spec) == register_word_lists(texts, spec)
