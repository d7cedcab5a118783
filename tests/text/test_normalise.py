"""Truth tables for the two normalised views, and the vectorised path against the spec."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.text import normalise
from contam_guard.text.features import extract_features
from contam_guard.text.hashing import hash_grams, hash_windows, hash_words

WORDS_TABLE = [
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
]


@pytest.mark.parametrize(("text", "expected"), WORDS_TABLE)
def test_words_truth_table(text: str, expected: list[str]) -> None:
    assert normalise.words(text) == expected


ALNUM_TABLE = [
    ("Janet’s ducks lay 16 eggs.", "Janetsducks\u200blay16eggs".replace("\u200b", "")),
    ("A b-C", "AbC"),
    ("½ and ²", "½and²"),
    ("$%^&*", ""),
    ("café", "café"),
]


@pytest.mark.parametrize(("text", "expected"), ALNUM_TABLE)
def test_alnum_truth_table(text: str, expected: str) -> None:
    assert normalise.alnum(text) == expected


def _reference_grams(text: str) -> np.ndarray:
    words = normalise.words(text)
    chars = np.frombuffer("".join(words).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    return hash_grams(hash_words(chars.astype(np.uint32), lengths))


def _reference_windows(text: str) -> np.ndarray:
    chars = np.frombuffer(normalise.alnum(text).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return hash_windows(chars.astype(np.uint32))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=200), min_size=1, max_size=6))
def test_vectorised_features_equal_the_spec(texts: list[str]) -> None:
    features = extract_features(texts)
    for record, text in enumerate(texts):
        words = normalise.words(text)
        assert features.word_counts[record] == len(words)
        lo, hi = features.record_words[record], features.record_words[record + 1]
        grams = features.gram_hash[lo:hi][features.gram_valid[lo:hi]]
        assert np.array_equal(grams, _reference_grams(text))
        lo, hi = features.record_chars[record], features.record_chars[record + 1]
        windows = features.window_hash[lo:hi][features.window_valid[lo:hi]]
        assert np.array_equal(windows, _reference_windows(text))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_normalisation_is_idempotent(text: str) -> None:
    once = normalise.words(text)
    assert normalise.words(" ".join(once)) == once
    assert normalise.alnum(normalise.alnum(text)) == normalise.alnum(text)
    assert all(ch.isalnum() for ch in normalise.alnum(text))


def test_word_offsets_point_at_the_original_text() -> None:
    text = "He said: “Janet’s ducks—lay 16 eggs!”"
    features = extract_features([text])
    spans = [text[s:e] for s, e in zip(features.word_start, features.word_end)]
    assert spans == ["He", "said", "Janet’s", "ducks—lay", "16", "eggs"]
