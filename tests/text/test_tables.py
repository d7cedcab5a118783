"""The code point tables against the spec, code point by code point, and the Unicode facts the
version 2 tables rely on (each checked over every code point it is claimed for)."""

from __future__ import annotations

import functools
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.spec import normalise
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import hash_grams, hash_words
from contam_guard.core.spec.normalise import SPECS, V1, V2, V3, V4, TextSpec, is_ignorable
from contam_guard.core.spec.tables import (
    DECOMPOSITIONS_END,
    FIRST_COMBINING,
    NO_DECOMPOSITIONS,
    CodepointTables,
    second_elements,
    starts_safely,
    tables_for,
)

ALL = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
# The BMP, and the planes' blocks version 2 changes most: mathematical alphanumerics, enclosed
# alphanumerics, CJK compatibility ideographs, tags and variation selectors.
SAMPLE = [
    *range(0xD800),
    *range(0xE000, 0x10000),
    *range(0x1D400, 0x1D800),
    *range(0x1F100, 0x1F200),
    *range(0x2F800, 0x2FA20),
    *range(0xE0000, 0xE01F0),
]


GA_PARTS = "\u1100\u1161"  # Hangul jamo L and V: NFC joins them, and a trailing jamo to them
_nfc = functools.partial(unicodedata.normalize, "NFC")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label)
def test_every_classified_code_point_is_what_the_spec_makes_of_it(spec: TextSpec) -> None:
    """Between two letters, each code point the tables do not call SPECIAL gives the words and
    alnum view its class and mappings say, exactly as the reference functions compute them."""
    tables = CodepointTables(spec.version)
    tables.ensure(np.asarray(SAMPLE, dtype=np.uint32))
    wrong = []
    for cp in SAMPLE:
        cls = int(tables.cls[cp])
        assert cls != normalise.UNKNOWN
        alnum = chr(int(tables.alnum_char[cp])) if tables.is_alnum[cp] else ""
        raw_special = bool(tables.is_alnum[cp]) and int(tables.alnum_char[cp]) != cp
        expected_raw = normalise.SPECIAL if raw_special else cls
        if int(tables.cls_raw_alnum[cp]) != expected_raw:
            wrong.append((hex(cp), "raw class"))
        if cls == normalise.SPECIAL:
            continue
        if (cls in (normalise.ALNUM, normalise.SOLO)) != bool(alnum):
            wrong.append((hex(cp), "class"))
        if spec.version >= 2 and alnum and _nfc(GA_PARTS + alnum) != _nfc(GA_PARTS) + alnum:
            wrong.append((hex(cp), "alnum view not NFC"))  # step g of alnum-v3 would change it
        text = "x" + chr(cp) + "y"
        expected = {
            normalise.SPACE: ["x", "y"],
            normalise.REMOVED: ["xy"],
            normalise.MARKUP: ["xy"],  # v4: punctuation where it starts no markup
            normalise.SOLO: ["x", chr(int(tables.lower[cp])), "y"],  # v3: a word on its own
        }.get(cls, ["x" + chr(int(tables.lower[cp])) + "y"])
        if spec.words(text) != expected or spec.alnum(text) != "x" + alnum + "y":
            wrong.append((hex(cp), "words"))
    assert wrong == []


def test_v2_classes_of_the_hostile_characters() -> None:
    tables = CodepointTables(2)
    cases = {
        "\u200b": normalise.SPACE,
        "\u00a0": normalise.SPACE,
        "\u3000": normalise.SPACE,
        **dict.fromkeys("\u200c\u200d\u00ad\u2060\ufeff\u200e\u200f\u202a\u202e\u2066", normalise.REMOVED),
        **dict.fromkeys("\ufe0f\U000e0041\U000e0001\U000e0100\u180b\u0600", normalise.REMOVED),
        "…": normalise.REMOVED,
        "！": normalise.REMOVED,
        "Ａ": normalise.ALNUM,
        "𝐀": normalise.ALNUM,
        "ꭰ": normalise.ALNUM,
        "ς": normalise.ALNUM,
        "Σ": normalise.ALNUM,  # casefold has no final sigma: one code point to one, always
        "ß": normalise.SPECIAL,  # ss
        "İ": normalise.SPECIAL,  # i + U+0307
        "ﬁ": normalise.SPECIAL,  # fi
        "\u0301": normalise.SPECIAL,  # joins the letter before it
        "\u1161": normalise.SPECIAL,  # a Hangul vowel joins the consonant before it
        "ㅏ": normalise.SPECIAL,  # compatibility jamo: NFKC gives that vowel
        "ﾞ": normalise.SPECIAL,  # halfwidth voiced mark: NFKC gives U+3099
    }
    tables.ensure(np.array([ord(ch) for ch in [*cases, "Ꭰ", "a"]], dtype=np.uint32))
    assert {ch: int(tables.cls[ord(ch)]) for ch in cases} == cases
    assert chr(tables.lower[ord("Ａ")]) == "a" and chr(tables.alnum_char[ord("Ａ")]) == "A"
    assert chr(tables.lower[ord("ꭰ")]) == "ꭰ" and chr(tables.lower[ord("Ꭰ")]) == "ꭰ"
    # The prefilter's kernel copies alnum code points unmapped: fullwidth goes exact there.
    assert tables.cls_raw_alnum[ord("Ａ")] == normalise.SPECIAL
    assert tables.cls_raw_alnum[ord("a")] == normalise.ALNUM


def test_tables_are_per_spec_and_lazy() -> None:
    assert tables_for(V1) is tables_for(V1) and tables_for(V1) is not tables_for(V2)
    assert tables_for(V1).cls_raw_alnum is tables_for(V1).cls
    fresh = CodepointTables(2)
    assert fresh.ensure(np.array([ord(c) for c in "hello, Ｗorld"], dtype=np.uint32)) == 9
    assert np.count_nonzero(fresh.cls) == 9  # only what was met
    assert fresh.first_alnum_remap == ord("Ｗ")
    assert tables_for(V3) is not tables_for(V2) and tables_for(V4) is not tables_for(V3)
    with pytest.raises(ValueError, match="version 5"):
        CodepointTables(5)


# ------------------------------------------------------------------------------------------
# The Unicode facts behind the version 2 tables


@pytest.mark.parametrize("version", [3, 4])
def test_nfkc_and_casefold_never_produce_what_step_b_removes_or_a_capital_sigma(version: int) -> None:
    """Step b runs before NFKC (and steps 3 and e after casefold) only because of this: in
    version 4 too, which removes every default-ignorable code point."""
    produced = []
    for cp in ALL:
        ch = chr(cp)
        if is_ignorable(ch, version) or ch == "\u200b":
            continue
        out = unicodedata.normalize("NFKC", ch).casefold()
        if any(is_ignorable(c, version) or c in "\u200b\u03a3" for c in out):
            produced.append(hex(cp))
    assert produced == []


def test_composition_facts() -> None:
    """What ``starts_safely`` and the lazy second-element set assume."""
    elements = second_elements()
    assert min(elements) >= FIRST_COMBINING
    assert all(unicodedata.combining(chr(cp)) == 0 for cp in range(FIRST_COMBINING))
    skipped = [range(a, b) for a, b in NO_DECOMPOSITIONS] + [range(DECOMPOSITIONS_END, 0x110000)]
    assert not [hex(cp) for span in skipped for cp in span if unicodedata.decomposition(chr(cp))]
    assert {0x301, 0x308, 0x3099, 0x1161, 0x11A8, 0xCD5, 0xBBE} <= elements
    # The check matters: NFKC joins these to what precedes them.
    for pair in ("e\u0301", "\u1100\u1161", "\u304b\u3099", "\u0cc6\u0cd5", "ｶﾞ", "ㄱㅏ"):
        assert not starts_safely(pair[1])
        assert len(unicodedata.normalize("NFKC", pair)) == 1


def test_only_hangul_jamo_are_letters_that_compose_with_the_letter_before() -> None:
    """Why step g of alnum-v3 changes only views the reference path computes: the alnum view
    holds letters and digits only, and the only ones that are the second element of a
    canonical composition are Hangul vowel and trailing consonant jamo, which do not start
    safely (SPECIAL in the tables, whatever they follow)."""
    composing = {cp for cp in second_elements() if chr(cp).isalnum()}
    assert composing == set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    assert not any(starts_safely(chr(cp)) for cp in composing)
    assert not [hex(cp) for cp in ALL if chr(cp).isalnum() and unicodedata.combining(chr(cp))]


INTERESTING = st.sampled_from(
    "e\u0301\u0308\u0327\u0345\u1100\u1161\u11a8가ㄱㅏｶﾞﾟ\u3099\u309a゛\u0cc6\u0cd5\u0bc6\u0bbe"
    "\u0f71\u0f72\u0f73\u0344ǅﬁ½¨‾ÅΩK\u212b\u0958\u09c7\u09be\u0b47\u0b3e\u0dd9\u0dcf\u1025\u102e"
)
pieces = st.text(INTERESTING | st.characters(), min_size=1, max_size=6)


@settings(max_examples=2000, deadline=None)
@given(pieces, pieces)
def test_nfkc_splits_before_a_code_point_that_starts_safely(a: str, b: str) -> None:
    """NFKC(a + b) = NFKC(a) + NFKC(b) whenever b's first code point starts safely: why the
    tables may classify code points one by one, and ``located`` normalise piece by piece."""
    if starts_safely(b[0]):
        nfkc = functools.partial(unicodedata.normalize, "NFKC")
        assert nfkc(a + b) == nfkc(a) + nfkc(b)


def test_a_mark_left_by_a_removed_symbol_takes_the_reference_path() -> None:
    """U+1D15E and U+2ADC decompose to a symbol (removed) and a combining mark (kept): in one
    word, step e reorders the two marks (ccc 216 and 1). Their one kept code point does not stay
    NFC in every word, so they are SPECIAL and the words are the reference's."""
    text = "a\U0001d15e\u2adc b c d e"
    words = V2.words(text)
    assert words[0] == "a\u0338\U0001d165"
    chars = np.frombuffer("".join(words).encode("utf-32-le"), dtype="<u4").astype(np.uint32)
    expected = hash_grams(hash_words(chars, np.array([len(w) for w in words], dtype=np.int64)))
    assert np.array_equal(extract_features([text], spec=V2).gram_hash[:1], expected)
    assert tables_for(V2).cls[0x1D15E] == tables_for(V2).cls[0x2ADC] == normalise.SPECIAL
