"""Truth tables for the two normalised views in both spec versions, and the vectorised path
against the spec on random and hostile Unicode (both specs)."""

from __future__ import annotations

import functools
import unicodedata

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contam_guard.core.spec import located, normalise
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import hash_grams, hash_windows, hash_words
from contam_guard.core.spec.normalise import SPECS, V1, V2, V3, TextSpec

WORDS_V1 = [
    ("Janet’s ducks lay 16 eggs per day.", ["janets", "ducks", "lay", "16", "eggs", "per", "day"]),
    ("$2 per egg -- farmers' market?", ["2", "per", "egg", "farmers", "market"]),
    ("16-3-4 = 9", ["1634", "9"]),
    ("  leading\tand\ntrailing  ", ["leading", "and", "trailing"]),
    ("non\u00a0breaking\u3000ideographic", ["non", "breaking", "ideographic"]),
    ("«Guillemets» and “curly” quotes", ["guillemets", "and", "curly", "quotes"]),
    ("a - b", ["a", "b"]),
    ("ΟΔΟΣ", ["οδος"]),
    ("İstanbul", ["i̇stanbul"]),
    ("café naïve", ["café", "naïve"]),
    ("", []),
    ("!!! ... ???", []),
    ("emoji🙂inside", ["emojiinside"]),
    # What version 1 misses: each of these is the same text as the plain one in version 2.
    ("zero\u200bwidth", ["zero\u200bwidth"]),
    ("soft\u00adhyphen", ["soft\u00adhyphen"]),
    ("Ｆｕｌｌ", ["ｆｕｌｌ"]),
    ("𝐁𝐨𝐥𝐝", ["𝐁𝐨𝐥𝐝"]),
    ("cafe\u0301", ["cafe\u0301"]),
    ("Straße", ["straße"]),
]

WORDS_V2 = [
    ("Janet’s ducks lay 16 eggs per day.", ["janets", "ducks", "lay", "16", "eggs", "per", "day"]),
    ("16-3-4 = 9", ["1634", "9"]),
    ("non\u00a0breaking\u3000ideographic", ["non", "breaking", "ideographic"]),
    ("", []),
    ("!!! … ???", []),  # "…" is NFKC "...": punctuation
    # a: U+200B separates words; b: other format characters and selectors vanish inside a word.
    ("zero\u200bwidth", ["zero", "width"]),
    ("soft\u00adhyphen", ["softhyphen"]),
    ("z\u200cw\u200dj w\u2060j b\ufeffom l\u200er\u200fm", ["zwj", "wj", "bom", "lrm"]),
    ("\u202aem\u202bbed\u202c \u2066iso\u2069 \u202eover\u202d", ["embed", "iso", "over"]),
    ("vs\ufe0f16 ideo\U000e0100graphic t\U000e0041a\U000e0067g\U000e007f", ["vs16", "ideographic", "tag"]),
    ("mongol\u180b\u180eian", ["mongolian"]),
    ("e\u200d\u0301", ["é"]),  # removed before NFKC, so the mark composes with its letter
    ("cafe'\u0301", ["café"]),  # e: composed once the apostrophe is gone
    # c: NFKC.
    ("cafe\u0301 café", ["café", "café"]),
    ("Ｆｕｌｌ ｗｉｄｔｈ", ["full", "width"]),
    ("𝐁𝐨𝐥𝐝 𝟔𝟎 𝔉𝔯𝔞𝔨𝔱𝔲𝔯", ["bold", "60", "fraktur"]),
    ("ﬁnd ﬀ Ǆ", ["find", "ff", "dž"]),
    ("1¾ x² ① ㎏", ["134", "x2", "1", "kg"]),
    ("ｶﾞ ㄱㅏ", ["ガ", "가"]),  # halfwidth kana and compatibility jamo compose
    # d: case folding, then step 3's lowercase.
    ("ΟΔΟΣ ὈΔΥΣΣΕΎΣ", ["οδοσ", "ὀδυσσεύσ"]),  # no final sigma
    ("Straße STRASSE ẞ", ["strasse", "strasse", "ss"]),
    ("İstanbul ı I", ["i̇stanbul", "ı", "i"]),
    ("ꮳꮃꭹ ᏣᎳᎩ", ["ꮳꮃꭹ", "ꮳꮃꭹ"]),  # Cherokee: casefold gives uppercase, lower() takes it back
    ("\u01f0 J\u030c", ["\u01f0", "\u01f0"]),  # casefold decomposes it, step e composes it
]


@pytest.mark.parametrize(("text", "expected"), WORDS_V1)
def test_words_v1_truth_table(text: str, expected: list[str]) -> None:
    assert normalise.words(text, V1) == expected


@pytest.mark.parametrize(("text", "expected"), WORDS_V2)
def test_words_v2_truth_table(text: str, expected: list[str]) -> None:
    assert normalise.words(text, V2) == expected
    assert normalise.words(text) == expected  # version 3 (the default) cuts only unspaced scripts


ALNUM = [
    ("Janet’s ducks lay 16 eggs.", "Janetsducks\u200blay16eggs".replace("\u200b", ""), None),
    ("A b-C", "AbC", None),
    ("½ and ²", "½and²", "1⁄2and2".replace("⁄", "")),
    ("$%^&*", "", None),
    ("café", "café", None),
    ("cafe\u0301", "cafe", "café"),
    ("Ｆｕｌｌ 𝐁𝐨𝐥𝐝", "Ｆｕｌｌ𝐁𝐨𝐥𝐝", "FullBold"),
    ("Straße ΟΔΟΣ", "StraßeΟΔΟΣ", None),  # case kept in both versions: no folding
    ("a\u200bb\u00adc\ufe0fd", "abcd", None),
]


# Step g of alnum-v3: letters NFKC kept apart, brought together by removing what is between.
# alnum-v2, frozen for the manifests hashed with it, keeps them apart.
JAMO_L, JAMO_V, JAMO_T, GA, GAG = "\u1100", "\u1161", "\u11a8", "\uac00", "\uac01"
ALNUM_V3 = [
    # (text, alnum-v2, alnum-v3)
    (JAMO_L + "\u200b" + JAMO_V, JAMO_L + JAMO_V, GA),  # found by Hypothesis (idempotence)
    (JAMO_L + " " + JAMO_V, JAMO_L + JAMO_V, GA),
    (JAMO_L + "-" + JAMO_V + "!" + JAMO_T, JAMO_L + JAMO_V + JAMO_T, GAG),
    (GA + "\u200b" + JAMO_T + " ok", GA + JAMO_T + "ok", GAG + "ok"),
    ("ㄱ ㅏ", JAMO_L + JAMO_V, GA),  # compatibility jamo: NFKC makes them conjoining jamo
    ("x" + JAMO_L + JAMO_V + JAMO_T + "y", "x" + GAG + "y", "x" + GAG + "y"),  # NFKC composed it
    (JAMO_V + " " + JAMO_L, JAMO_V + JAMO_L, JAMO_V + JAMO_L),  # a vowel, then a consonant
]


@pytest.mark.parametrize(("text", "v1", "v2"), ALNUM)
def test_alnum_truth_table(text: str, v1: str, v2: str | None) -> None:
    assert normalise.alnum(text, V1) == v1
    assert normalise.alnum(text, V2) == (v1 if v2 is None else v2)
    assert normalise.alnum(text) == (v1 if v2 is None else v2)  # alnum-v3 (the default): the same


@pytest.mark.parametrize(("text", "v2", "v3"), ALNUM_V3)
def test_alnum_v3_truth_table(text: str, v2: str, v3: str) -> None:
    assert normalise.alnum(text, V2) == v2
    assert normalise.alnum(text, V3) == normalise.alnum(text) == v3
    assert normalise.alnum(v3, V3) == v3
    view, offsets = located.alnum(text, V3)
    assert view == v3 and len(offsets) == len(v3)
    assert offsets[0] == 0  # a letter joined to others points where the first came from


def test_alnum_v2_is_idempotent_only_up_to_nfc() -> None:
    """Why alnum-v3 exists: alnum-v2's view of its own view composes what NFKC left apart.
    alnum-v2 stays so (manifests of spec 2 were hashed with it); spec 3 uses alnum-v3."""
    text = JAMO_L + "\u200b" + JAMO_V
    assert V2.alnum(V2.alnum(text)) == GA != V2.alnum(text)
    assert V3.alnum(V3.alnum(text)) == GA == V3.alnum(text)
    assert V3.alnum_name == "alnum-v3" and V2.alnum_name == "alnum-v2"


# ------------------------------------------------------------------------------------------
# The vectorised path against the spec

HOSTILE = [
    "\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff", "\u200e", "\u200f", "\u202a",
    "\u202e", "\u2066", "\u2069", "\u061c", "\u0600", "\u180e", "\ufe0f", "\ufe00", "\u180b",
    "\U000e0001", "\U000e0041", "\U000e007f", "\U000e0100",
]  # fmt: skip
COMPAT = [
    "Ａ", "ｚ", "０", "！", "　", "𝐀", "𝐳", "𝟎", "𝔘", "ﬁ", "ﬀ", "Ǆ", "ǅ", "½", "¾", "²", "ª", "µ",
    "…", "①", "⑴", "㍱", "ﷺ", "\u212b", "\u212a", "\u2126", "ｶ", "ﾞ", "ﾟ", "ㄱ", "ㅏ", "゛",
    "\u3099", "\u309a", "\u1100", "\u1161", "\u11a8", "가", "\u0f73", "\u0344", "\u0cc6", "\u0cd5",
    "\u0bc6", "\u0bbe", "\u00a8", "\u203e", "\u00a0",
]  # fmt: skip
CASES = [
    "ß", "ẞ", "İ", "ı", "i", "I", "Σ", "σ", "ς", "ΐ", "ǰ", "Ꭰ", "ꭰ", "ᏸ", "Ᏸ", "ﬅ", "ᾼ", "ᾳ",
    "\u0345", "Ω",
]  # fmt: skip
MARKS = ["\u0301", "\u0308", "\u0327", "\u0323", "\u05b4", "\u0e48", "\u302a"]
WORDS = ["alpha", "Bravo", "café", "cafe\u0301", "ΣΟΦΙΑ", "Straße", "中文", "١٢٣", "x-y", "(z)"]
WORDS += ["กินข้าว", "กิน", "コーヒー", "ខ្មែរ", "བོད་ཡིག", "GPT4在2023年", "ꆈꌠ", "한국어"]  # spec v3
SEPARATORS = [" ", "  ", "\t", "\n", "\u3000", "\u2028", "\x85", "\x1c", ""]
# Spec v4: markup (step m) and the default-ignorable code points versions 2 and 3 keep.
MARKUP = [
    "&amp;", "&nbsp;", "&#101;", "&#x65;", "&acE;", "&eacute;", "&#0;", "&#x301;", "&#x3164;", "<b>",
    "</b>", "<a href='x y'>", "<!--", "-->", "[", "]", "(", ")", "](http://x.y/(z))", "][r]",
    "<http://x.y>", "&", "<", ";", "\u034f", "\u3164", "\u115f", "\u1160", "\u17b4", "\uffa0",
    "\U000e0fff", "\u2065",
]  # fmt: skip

hostile_units = st.sampled_from(HOSTILE + COMPAT + CASES + MARKS + WORDS + SEPARATORS + MARKUP) | st.text(
    max_size=3
)
hostile_texts = st.lists(hostile_units, max_size=40).map("".join)
any_texts = hostile_texts | st.text(max_size=200) | st.text(st.characters(codec="utf-8"), max_size=60)


def _reference_grams(text: str, spec: TextSpec) -> np.ndarray:
    words = spec.words(text)
    chars = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    return hash_grams(hash_words(chars.astype(np.uint32), lengths))


def _reference_windows(text: str, spec: TextSpec) -> np.ndarray:
    chars = np.frombuffer(spec.alnum(text).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return hash_windows(chars.astype(np.uint32))


FOUND = JAMO_L + "\u200b" + JAMO_V
"""Found by Hypothesis: alnum-v2 of its alnum-v2 view is not that view (alnum-v3's step g)."""


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label)
@settings(max_examples=300, deadline=None)
@given(st.lists(any_texts, min_size=1, max_size=6))
@example([FOUND, "ab" * 30 + FOUND + "cd" * 30, "plain"])
def test_vectorised_features_equal_the_spec(spec: TextSpec, texts: list[str]) -> None:
    features = extract_features(texts, spec=spec)
    for record, text in enumerate(texts):
        assert features.word_counts[record] == len(spec.words(text))
        lo, hi = features.record_words[record], features.record_words[record + 1]
        grams = features.gram_hash[lo:hi][features.gram_valid[lo:hi]]
        assert np.array_equal(grams, _reference_grams(text, spec))
        assert features.alnum_counts[record] == len(spec.alnum(text))
        lo, hi = features.record_chars[record], features.record_chars[record + 1]
        windows = features.window_hash[lo:hi][features.window_valid[lo:hi]]
        assert np.array_equal(windows, _reference_windows(text, spec))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label)
@settings(max_examples=200, deadline=None)
@given(st.lists(any_texts, min_size=1, max_size=6))
@example([FOUND, "ab" * 30 + FOUND + "cd" * 30, "plain"])
def test_offsets_equal_the_reference_paths(spec: TextSpec, texts: list[str]) -> None:
    """Word spans and alnum offsets: the vectorised path's are the reference path's (which the
    vectorised path also uses for the records it flags)."""
    features = extract_features(texts, spec=spec)
    for record, text in enumerate(texts):
        found = located.words(text, spec)
        assert [w for w, _, _ in found] == spec.words(text)
        lo, hi = features.record_words[record], features.record_words[record + 1]
        assert features.word_start[lo:hi].tolist() == [s for _, s, _ in found]
        assert features.word_end[lo:hi].tolist() == [e for _, _, e in found]
        assert all(0 <= s < e <= len(text) for _, s, e in found)
        view, offsets = located.alnum(text, spec)
        assert view == spec.alnum(text)
        lo, hi = features.record_chars[record], features.record_chars[record + 1]
        assert features.char_offset[lo:hi].tolist() == offsets


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label)
@settings(max_examples=200, deadline=None)
@given(any_texts)
@example(FOUND)
def test_normalisation_is_idempotent(spec: TextSpec, text: str) -> None:
    once = spec.words(text)
    assert spec.words(" ".join(once)) == once
    view = spec.alnum(text)
    assert all(ch.isalnum() for ch in view)
    if spec.alnum_name == "alnum-v2":  # frozen as manifests of spec 2 hashed it: only up to NFC
        nfc = functools.partial(unicodedata.normalize, "NFC")
        assert nfc(spec.alnum(view)) == nfc(view)
    else:
        assert spec.alnum(view) == view


@settings(max_examples=200, deadline=None)
@given(any_texts)
def test_v2_is_blind_to_what_it_promises(text: str) -> None:
    """NFC, NFD, NFKC and NFKD forms, case, and inserted format characters give the same words.

    One exception, Unicode's own: U+0345 COMBINING GREEK YPOGEGRAMMENI case-folds to a letter
    (ι), so folding case *before* normalising moves a later accent onto it (ᾀ + acute folds to
    ἀ ι + acute, which composes to ἀί, where the spec gives ἄι). The spec folds after NFKC; a
    text folded beforehand by someone else is another text there (polytonic Greek only)."""
    words = V2.words(text)
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        assert V2.words(unicodedata.normalize(form, text)) == words
    assert V2.words(text.replace(" ", " \u200d")) == words
    if "\u0345" not in unicodedata.normalize("NFKD", text):
        assert V2.words(text.casefold()) == words


def test_folding_case_first_moves_an_accent_onto_a_folded_ypogegrammeni() -> None:
    """The exception above, pinned: it is Unicode's, not a bug to fix by hand."""
    text = "\u1f80\u0301"  # ᾀ and an acute accent
    assert V2.words(text) == ["\u1f04\u03b9"]  # ἄι
    assert V2.words(text.casefold()) == ["\u1f00\u03af"]  # ἀί


def test_word_offsets_point_at_the_original_text() -> None:
    text = "He said: “Janet’s ducks—lay 16 eggs!”"
    for spec in SPECS:
        features = extract_features([text], spec=spec)
        spans = [text[s:e] for s, e in zip(features.word_start, features.word_end)]
        assert spans == ["He", "said", "Janet’s", "ducks—lay", "16", "eggs"]


def test_v2_spans_cover_what_nfkc_joined() -> None:
    text = "ｶﾞ e\u200d\u0301 ß"
    found = located.words(text, V2)
    assert [(w, text[s:e]) for w, s, e in found] == [("ガ", "ｶﾞ"), ("é", "e\u200d\u0301"), ("ss", "ß")]
