"""The compiled byte test for glued tokens (``glued_candidates`` in ``csrc/native.c``) against the
numpy one (``core.spec.glued.candidates`` with the numpy kernels): the same int64 offsets, in the
same order, for every input. The compiled pass reads 64 bytes at a time (its last bytes, one at a
time), so the inputs cross those blocks at every offset; its alphabet reaches every branch of
the numpy definition: letters and digits, punctuation runs up to and past the look-back limit,
each space byte, JSON escapes with their backslash escaped or not, U+180E and its bytes apart,
gaps past the byte limit, and inputs shorter than ``MIN_JOINS``."""

from __future__ import annotations

import json
import random
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.spec import glued, pure_kernels
from tests.text.test_glued import QUESTION, camel

compiled: ModuleType = pytest.importorskip("contam_guard._native")

SEPARATOR = "\u180e".encode()
GAP = 12 * glued.MAX_GAP + 12  # the byte limit between two joins of a run (JSON surrogate pairs)
CHUNKS = [
    *(c.encode() for c in "anqrtzABQZ0159"),  # letters (n, t, r: escapes) and digits
    b"aB", b"a1", b"B2", b"9Z", b"ABc", b"xYz", b"Ab",  # joins
    *(c.encode() for c in ".$'\"-/<=>#~{}"),  # punctuation
    b"!" * 15, b"!" * 16, b"!" * 17, b"!" * 18, b"." * 40,  # runs up to and past the look-back
    b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c",  # every space byte
    b"\\", b"\\n", b"\\t", b"\\r", b"\\u0041", b"\\\\", b"\\\\n", b"\\\\\\t",  # escapes, escaped or not
    SEPARATOR, b"\xe1", b"\xe1\xa0", b"\xa0\x8e", b"\x8e",  # U+180E, and its bytes apart
    "é".encode(), "’".encode(), "😀".encode(), b"\x00", b"\x80", b"\xff",  # other bytes
    b"x" * 64, b"x" * (GAP - 2), b"x" * GAP, b"q" * (GAP + 1),  # gaps around the byte limit
]  # fmt: skip
JOINED = [b"aB", b"a1", b"B2", b"xYz", b"ABc", SEPARATOR, b"aB.", b"c$D", b"a!!!!B"]
"""Chunks that make runs of joins, so that many inputs have offsets to compare."""


def both(data: bytes | memoryview) -> tuple[glued.IntArray, glued.IntArray]:
    ours = glued.candidates(data, compiled)
    theirs = glued.candidates(data, pure_kernels)
    assert ours.dtype == theirs.dtype == np.int64
    return ours, theirs


def same(data: bytes | memoryview) -> glued.IntArray:
    ours, theirs = both(data)
    assert ours.tolist() == theirs.tolist(), bytes(data)
    return ours


def inputs(chunks: list[bytes], most: int) -> st.SearchStrategy[bytes]:
    return st.lists(st.sampled_from(chunks), max_size=most).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        inputs(CHUNKS, 200),
        st.lists(st.sampled_from(CHUNKS + JOINED * 4), max_size=300).map(b"".join),
        st.binary(max_size=glued.MIN_JOINS + 2),
        st.binary(max_size=300),
    ),
    st.integers(min_value=0, max_value=63),
)
def test_compiled_and_numpy_agree(data: bytes, shift: int) -> None:
    same(data)
    same(b"a" * shift + data)  # the same bytes at another place in the 64-byte blocks


def test_the_alphabet_flags_often() -> None:
    """The property above compares offsets, not only empty arrays: many of its inputs are flagged."""
    rng = random.Random(7)
    flagged = 0
    for _ in range(400):
        data = b"".join(rng.choice(CHUNKS + JOINED * 4) for _ in range(rng.randint(0, 300)))
        flagged += same(data).size > 0
    assert flagged > 100


@pytest.mark.parametrize(("min_joins", "max_punct", "gap"), [(1, 0, 0), (1, 16, 0), (2, 1, 5), (3, 3, 40)])
def test_the_constants_are_glued_py_s(
    monkeypatch: pytest.MonkeyPatch, min_joins: int, max_punct: int, gap: int
) -> None:
    """The kernel takes its limits from glued.py: with others there, it still agrees. One join
    a run and no gap lists every join, so the joins themselves are compared one by one."""
    monkeypatch.setattr(glued, "MIN_JOINS", min_joins)
    monkeypatch.setattr(glued, "_MAX_PUNCT", max_punct)
    monkeypatch.setattr(glued, "_MAX_GAP_BYTES", gap)
    rng = random.Random(min_joins * 1000 + max_punct)
    flagged = 0
    for _ in range(300):
        data = b"".join(rng.choice(CHUNKS[:-3] + JOINED * 4) for _ in range(rng.randint(0, 100)))
        flagged += same(data).size
    assert flagged > 300


def test_empty_and_short_inputs() -> None:
    for data in (b"", b"aB", b"aBcDeF", SEPARATOR * 2):
        assert same(data).tolist() == []
    assert same(memoryview(b"")).tolist() == []


def test_a_memoryview_reads_as_its_bytes() -> None:
    line = json.dumps({"text": "Intro: " + camel(QUESTION)}).encode()
    held = bytearray(b"x y " + line + b"\n")
    view = memoryview(held)[4:]
    expected = same(line)
    assert expected.size == 1
    assert same(view).tolist() == expected.tolist()
    assert glued.candidates(view).tolist() == expected.tolist()  # the default kernels


def test_runs_across_blocks_and_their_limits() -> None:
    """Hand-made: runs cut by a space, an escape, a long gap; looked back across 16 and 17 bytes of
    punctuation; joins on both sides of each 64-byte boundary."""
    word = b"aB" * glued.MIN_JOINS
    cases = {
        word: [1],
        b"aB" * (glued.MIN_JOINS - 1): [],
        b"aB" * 3 + b" " + b"aB" * 4: [],
        b"aB" * 3 + b"\\n" + b"aB" * 4: [],
        b"aB" * 3 + b"\\\\n" + b"aB" * 4: [1],  # an escaped backslash, then the letter n
        b"aB" * 3 + b"x" * (GAP - 2) + b"aB" * 4: [1],  # the fourth join GAP bytes after the third
        b"aB" * 3 + b"x" * (GAP - 1) + b"aB" * 4: [],
        b"a" + b"!" * 16 + b"B" + b"aB" * 6: [17],  # looked back across 16 bytes: a letter
        b" " + b"!" * 16 + b"B" + b"aB" * 7: [19],  # ... a space: not a join
        b" " + b"!" * 17 + b"B" + b"aB" * 6: [18],  # 17 bytes: as if after a letter
        b"!" * 5 + b"B" + b"aB" * 7: [7],  # the start of the data is a space
        SEPARATOR * glued.MIN_JOINS: [0],
    }
    for data, expected in cases.items():
        assert same(data).tolist() == expected, data
    for at in (60, 61, 62, 63, 64, 65, 126, 127, 128):
        for filler in (b"x", b" ", b"!"):
            data = filler * at + word + filler * 70
            assert same(data).tolist() == [at + 1], (at, filler)
            assert same(data[: at + 2 * glued.MIN_JOINS - 1]).tolist() == [], (at, filler)


def test_what_a_join_looks_at_across_a_block_boundary() -> None:
    """A join's bytes before and after it (and an escape's backslashes) on both sides of a 64-byte
    boundary: whether it counts decides whether the run reaches ``MIN_JOINS``."""
    pieces = [b" 1B", b" aB", b" ABc", b" a1", b" A1", b" 1a", b"a!B", b" !B"]
    pieces += [b"\\nB", b"\\\\nB", b"\\\\\\tB"]  # an escape, its backslash escaped, escaped again
    tail = b"aB" * (glued.MIN_JOINS - 1)
    flagged = set()
    for at in range(56, 70):
        for piece in pieces:
            for before in (b"x", b"7", b"!"):
                found = same(before * at + piece + tail)
                flagged.add(found.size > 0)
    assert flagged == {True, False}


def test_a_block_of_json_lines() -> None:
    """Many lines of prose, camelCase copies and escapes, a few megabytes: the same offsets."""
    rng = random.Random(3)
    lines = []
    for k in range(4000):
        text = camel(QUESTION) if k % 7 == 0 else QUESTION
        cut = rng.randint(0, len(text))
        text = text[:cut] + rng.choice(["\n", "\u180e", "\t", "\\", "’", "AB", "x1"]) + text[cut:]
        lines.append(json.dumps({"id": k, "text": text}, ensure_ascii=k % 2 == 0))
    block = "\n".join(lines).encode()
    flagged = same(block)
    assert flagged.size >= 4000 // 7


def test_malformed_arguments_are_refused() -> None:
    call = compiled.glued_candidates
    with pytest.raises(TypeError):
        call(b"aB" * 10, glued.MIN_JOINS, 16)
    with pytest.raises(TypeError):
        call("aB" * 10, glued.MIN_JOINS, 16, GAP)
    with pytest.raises(TypeError):
        call(np.zeros(8, dtype=np.int32), glued.MIN_JOINS, 16, GAP)
    with pytest.raises(TypeError):
        call(b"aB" * 10, 7.0, 16, GAP)
    for bad in ((0, 16, GAP), (7, -1, GAP), (7, 16, -1)):
        with pytest.raises(ValueError):
            call(b"aB" * 10, *bad)
    with pytest.raises(OverflowError):
        call(b"aB" * 10, 2**70, 16, GAP)
