"""Hashes are part of the manifest format: pinned values catch any accidental change."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import CHAR_BASE, HashKey, fmix64, hash_windows

SENTENCE = "Janet’s ducks lay 16 eggs per day and she eats three for breakfast."


def _grams(text: str, key: HashKey | None = None) -> list[int]:
    features = extract_features([text], key=key)
    return [int(h) for h in features.gram_hash[features.gram_valid]]


def test_pinned_gram_hashes() -> None:
    assert _grams(SENTENCE)[:3] == PINNED_GRAMS


def test_hashes_are_the_same_in_a_fresh_process() -> None:
    code = (
        "from contam_guard.core.spec.features import extract_features as f;"
        f"x=f([{SENTENCE!r}]);print([int(h) for h in x.gram_hash[x.gram_valid]])"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == str(_grams(SENTENCE))


def test_case_and_punctuation_do_not_change_word_grams() -> None:
    assert _grams(SENTENCE) == _grams(SENTENCE.upper().replace("’", "'").replace(".", " !"))


def test_keyed_hashes_differ_from_unkeyed_and_between_keys() -> None:
    a = HashKey("a" * 40)
    b = HashKey("b" * 40)
    plain, with_a, with_b = _grams(SENTENCE), _grams(SENTENCE, a), _grams(SENTENCE, b)
    assert len(plain) == len(with_a) == len(with_b)
    assert not set(plain) & set(with_a)
    assert not set(with_a) & set(with_b)
    assert with_a == _grams(SENTENCE, HashKey("a" * 40))


def test_window_hash_of_a_window_is_position_independent() -> None:
    chars = np.arange(100, 300, dtype=np.uint32)
    hashes = hash_windows(chars)
    assert hashes.size == 200 - 49
    shifted = hash_windows(chars[7:])
    assert np.array_equal(hashes[7:], shifted)
    assert len(set(hashes.tolist())) == hashes.size


@pytest.mark.parametrize("width", [1, 2, 3, 7, 50, 64])
def test_window_hash_matches_a_direct_polynomial(width: int) -> None:
    chars = np.array([ord(c) for c in "abcdefghijklmnopqrstuvwxyz" * 4], dtype=np.uint32)
    expected = []
    for start in range(chars.size - width + 1):
        acc = sum(int(c) * pow(CHAR_BASE, u, 1 << 64) for u, c in enumerate(chars[start : start + width]))
        expected.append(acc % (1 << 64))
    direct = fmix64(np.array(expected, dtype=np.uint64))
    assert np.array_equal(hash_windows(chars, width), direct)


PINNED_GRAMS = [2662500460710170583, 7404691850301160620, 14626962187443791105]
