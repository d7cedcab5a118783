"""The word streams built from word hashes through the vocabulary (``core.reword.vocab``) are the
rule's own lists, hash for hash: number masking and content features word by word
(``numbers.mask_words``, ``content.masked_and_content``), for any units, however split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.reword.content import CONTENT_SPECS, ContentSpec, masked_and_content
from contam_guard.core.reword.hashing import word_hashes
from contam_guard.core.reword.vocab import Vocabulary, content_stream, masked_stream

WORDS = [
    *("janet", "eggs", "egg", "16", "274", "34ths", "2nd", "three", "twentyfive", "half", "twice"),
    *("the", "of", "a", "x", "10foot", "foot", "dozen", "hundred", "0", "007", "bakes", "baking"),
    *("dont", "ab", "café", "鸡", "蛋", "is", "sells", "dollars", "12", "1", "second", "thirds"),
    *("٣٤", "²", "0012", "00"),  # digits outside ASCII take the general path, not the plain-number one
]


def reference(units: list[list[str]], spec: ContentSpec) -> tuple[list[np.ndarray], list[np.ndarray]]:
    both = [masked_and_content(words, spec) for words in units]
    return [word_hashes(m) for m, _ in both], [word_hashes(c) for _, c in both]


def streams(units: list[list[str]], vocab: Vocabulary) -> tuple[list[np.ndarray], list[np.ndarray]]:
    flat = [word for words in units for word in words]
    hashes = word_hashes(flat)
    first = np.zeros(len(units) + 1, dtype=np.int64)
    np.cumsum([len(words) for words in units], out=first[1:])
    missing = set(vocab.missing(hashes).tolist())
    vocab.add([w for w, h in zip(flat, hashes.tolist()) if h in missing])
    rows = vocab.rows(hashes)
    out = []
    for stream in (masked_stream(vocab, rows, first), content_stream(vocab, rows, first)):
        out.append([stream.hashes[a:b] for a, b in zip(stream.first[:-1], stream.first[1:])])
    return out[0], out[1]


@pytest.mark.parametrize("spec", CONTENT_SPECS, ids=lambda s: s.name)
@settings(max_examples=300, deadline=None)
@given(units=st.lists(st.lists(st.sampled_from(WORDS), max_size=30), max_size=6))
def test_streams_are_the_rules_lists(spec: ContentSpec, units: list[list[str]]) -> None:
    vocab = Vocabulary(spec)
    want_masked, want_content = reference(units, spec)
    got_masked, got_content = streams(units, vocab)
    assert [m.tolist() for m in got_masked] == [m.tolist() for m in want_masked]
    assert [c.tolist() for c in got_content] == [c.tolist() for c in want_content]


@pytest.mark.parametrize("spec", CONTENT_SPECS, ids=lambda s: s.name)
def test_the_vocabulary_grows_and_keeps_what_it_had(spec: ContentSpec) -> None:
    vocab = Vocabulary(spec)
    first = [["janet", "sells", "16", "eggs"], ["three", "of", "the", "eggs"]]
    second = [["janet", "bakes", "12", "muffins", "twice"]]
    assert streams(first, vocab)[1][1].tolist() == reference(first, spec)[1][1].tolist()
    size = len(vocab)
    assert size == 7  # janet sells 16 eggs three of the
    got = streams(second, vocab)
    assert len(vocab) == size + 4  # bakes 12 muffins twice
    assert [c.tolist() for c in got[1]] == [c.tolist() for c in reference(second, spec)[1]]
    assert [m.tolist() for m in streams(first, vocab)[0]] == [m.tolist() for m in reference(first, spec)[0]]
