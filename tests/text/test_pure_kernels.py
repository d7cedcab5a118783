"""The numpy kernels (``contam_guard.core.spec.pure_kernels``) against the compiled ones, output for output.

Each kernel runs in both modules on the same random input, into output arrays filled with the
same junk beforehand, so that the slots a kernel leaves alone must be left alone by both. Tables
are compared by what they answer (their layouts may differ; each module must read the other's).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from contam_guard.core.match import table
from contam_guard.core.spec import markup, native, normalise, pure_kernels
from contam_guard.core.spec.tables import tables_for

compiled: ModuleType = pytest.importorskip("contam_guard._native")
TABLES = tables_for(normalise.V1)
SETTINGS = settings(max_examples=150, deadline=None)

# Words, punctuation, marks, spaces, a SPECIAL code point (İ lowercases to two), Greek capital
# sigma (context-dependent), digits and letters of other scripts, a long word now and then.
ALPHABET = st.sampled_from(list("abcXYZ019 .,;'’-\t\n\u00a0éß\u0301İΣσ中文ЖжΩ😀\u200b_")) | st.characters(
    codec="utf-8", exclude_categories=["Cs"]
)
TEXTS = st.lists(
    st.text(ALPHABET, max_size=120) | st.just("word " * 30) | st.just("x" * 200), min_size=0, max_size=12
)


def test_constants_are_the_compiled_modules() -> None:
    """Every constant of the compiled module, with the same value, and no other."""

    def constants(mod: ModuleType) -> dict[str, int]:
        return {
            n: getattr(mod, n)
            for n in dir(mod)
            if n.isupper() and n[0] != "_" and isinstance(getattr(mod, n), int)
        }

    assert constants(pure_kernels) == constants(compiled)
    assert {"LINE_BLANK", "CLS_KEPT", "CHAR_BASE"} <= set(constants(compiled))


def joined(texts: list[str]) -> tuple[NDArray[np.uint32], NDArray[np.int64]]:
    """The code points and record starts ``core.spec.features`` hands the kernels (classified)."""
    record_start = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) + 1 for t in texts], out=record_start[1:])
    data = "".join(t + "\n" for t in texts).encode("utf-32-le", "surrogatepass")
    codepoints = np.frombuffer(data, dtype=np.uint32).copy()
    TABLES.classify_new(codepoints)
    return codepoints, record_start


def both(call: Callable[[ModuleType, list[NDArray[Any]]], object], outputs: list[NDArray[Any]]) -> None:
    """``call`` with each module on its own copy of ``outputs``: same return value, same outputs."""
    results = []
    for mod in (compiled, pure_kernels):
        copies = [o.copy() for o in outputs]
        results.append((call(mod, copies), copies))
    (ret_c, out_c), (ret_p, out_p) = results
    assert ret_c == ret_p
    for c, p in zip(out_c, out_p):
        assert np.array_equal(c, p)


def junk(rng: np.random.Generator, size: int, dtype: type[np.generic]) -> NDArray[Any]:
    return rng.integers(0, 250, size=size).astype(dtype)


@SETTINGS
@given(TEXTS, st.integers(0, 2**32 - 1))
def test_feature_passes_equal_compiled(texts: list[str], seed: int) -> None:
    rng = np.random.default_rng(seed)
    cps, starts = joined(texts)
    assert compiled.count_tokens(cps, TABLES.cls) == pure_kernels.count_tokens(cps, TABLES.cls)
    capacity = compiled.count_tokens(cps, TABLES.cls)
    words = [junk(rng, capacity, t) for t in (np.int64, np.int64, np.int64, np.uint64)]
    both(
        lambda m, o: m.words_pass(cps, TABLES.cls, TABLES.lower, starts, *o),
        [*words, np.zeros(len(texts), dtype=np.bool_)],
    )
    both(
        lambda m, o: m.alnum_pass(cps, TABLES.is_alnum, starts, *o),
        [junk(rng, cps.size, np.uint32), junk(rng, starts.size, np.int64)],
    )
    alnum = np.empty(cps.size, dtype=np.uint32)
    chars = np.empty(starts.size, dtype=np.int64)
    total = compiled.alnum_pass(cps, TABLES.is_alnum, starts, alnum, chars)
    both(
        lambda m, o: m.windows_pass(alnum[:total], chars, *o),
        [junk(rng, total, np.uint64), np.zeros(total, dtype=np.bool_)],
    )


# Spec v4's markup (core/spec/markup.py): references, tags, comments, autolinks, links, and their parts.
MARKUP = st.sampled_from(
    [
        *("&amp;", "&nbsp;", "&#101;", "&#x65;", "&#X1F600;", "&acE;", "&#0;", "&#128;", "&#55296;"),
        *("&#99999999;", "&eacute", "&Eacute;", "<span>", "</b>", "<br/>", '<a href="x">', "<!--", "-->"),
        *("<!-->", "<?x?>", "<!DOCTYPE html>", "[", "]", "(", ")", "](http://x.y/(z))", "][r]", "][]"),
        *("<http://x.y>", "<a@b.c>", *"&<>;#!?/x:@ \n\u2060"),
    ]
)
MARKUP_TEXTS = st.lists(st.lists(MARKUP | ALPHABET, max_size=40).map("".join), max_size=8)


@SETTINGS
@given(MARKUP_TEXTS)
def test_markup_pass_equals_compiled_and_the_spec(texts: list[str]) -> None:
    """The rewrite of spec v4 (step m): both modules, into another array and in place, give
    ``markup.rewrite`` of each record."""
    cps, starts = joined(texts)
    both(lambda m, o: m.markup_pass(cps, starts, *o), [np.full(cps.size, 7, dtype=np.uint32)])
    for mod in (compiled, pure_kernels):
        out = cps.copy()
        changed = mod.markup_pass(out, starts, out)
        text = out.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
        expected = "".join(markup.rewrite(t) + "\n" for t in texts)
        assert text == expected
        assert changed == sum(a != b for a, b in zip(text, "".join(t + "\n" for t in texts)))


@SETTINGS
@given(MARKUP_TEXTS, st.integers(0, 2**32 - 1))
def test_feature_passes_equal_compiled_under_v4(texts: list[str], seed: int) -> None:
    """Spec v4's tables (MARKUP code points left by the rewrite count as REMOVED)."""
    rng = np.random.default_rng(seed)
    tables = tables_for(normalise.V4)
    cps, starts = joined(texts)
    compiled.markup_pass(cps, starts, cps)
    tables.classify_new(cps)
    capacity = compiled.count_tokens(cps, tables.cls)
    assert capacity == pure_kernels.count_tokens(cps, tables.cls)
    results = []
    for mod in (compiled, pure_kernels):
        outs = [junk(rng, capacity, t) for t in (np.int64, np.int64, np.int64, np.uint64)]
        flagged = np.zeros(len(texts), dtype=np.bool_)
        count = mod.words_pass(cps, tables.cls, tables.lower, starts, *outs, flagged)
        # Past ``count``: the compiled kernel may leave the words of a record it flagged later.
        results.append((count, [o[:count].tolist() for o in outs], flagged.tolist()))
    assert results[0] == results[1]


def test_a_long_word_and_a_special_record() -> None:
    """Power-of-two word lengths (the numpy kernel builds B**k from k's bits) and a record with
    a SPECIAL code point (flagged, no words) between two ordinary ones."""
    texts = ["a" * 4096 + " b" * 3, "x İstanbul y", "z" * 4097]
    cps, starts = joined(texts)
    outs = [np.zeros(16, dtype=t) for t in (np.int64, np.int64, np.int64, np.uint64)]
    both(lambda m, o: m.words_pass(cps, TABLES.cls, TABLES.lower, starts, *o), [*outs, np.zeros(3, np.bool_)])
    flagged = np.zeros(3, dtype=np.bool_)
    records, word_starts, ends, hashes = outs
    count = pure_kernels.words_pass(
        cps, TABLES.cls, TABLES.lower, starts, records, word_starts, ends, hashes, flagged
    )
    assert count == 5 and flagged.tolist() == [False, True, False]


# Hashes whose low bits crowd a few slots, near both ends of the table (runs that wrap around),
# with repeats (chains), hashes that share a slot's tag (their top 32 bits: these small values)
# or their low 32 bits under another tag, and arbitrary 64-bit values.
def hash_values(size: int) -> st.SearchStrategy[int]:
    crowded = st.integers(0, 3) | st.integers(size - 3, size - 1)
    tagged = st.tuples(st.integers(1, 3), crowded).map(lambda tag_low: (tag_low[0] << 32) | tag_low[1])
    return (crowded.map(lambda low: low + size * 7919)) | crowded | tagged | st.integers(0, 2**64 - 1)


@SETTINGS
@given(st.data())
def test_tables_answer_like_the_compiled_ones(data: st.DataObject) -> None:
    count = data.draw(st.integers(0, 40))
    size = table.capacity(count)
    values = data.draw(st.lists(hash_values(size), min_size=count, max_size=count))
    hashes = np.array(values, dtype=np.uint64)
    built = {}
    for mod in (compiled, pure_kernels):
        slots, chain = np.empty(size, dtype=np.uint64), np.empty(count, dtype=np.int64)
        mod.table_build(hashes, slots, chain)
        built[mod] = (slots, chain)
    assert np.array_equal(built[compiled][1], built[pure_kernels][1])  # chains do not depend on layout
    queries = np.array(values + data.draw(st.lists(hash_values(size), max_size=20)), dtype=np.uint64)
    valid = np.array(
        data.draw(st.lists(st.booleans(), min_size=queries.size, max_size=queries.size)), np.bool_
    )
    expected = [
        [(q, p) for p in range(count) if valid[q] and values[p] == int(queries[q])]
        for q in range(queries.size)
    ]
    for slots, chain in built.values():  # each module reads either table
        for mod in (compiled, pure_kernels):
            first = np.full(queries.size, 99, dtype=np.int64)
            total = mod.table_first(hashes, slots, chain, queries, valid, first)
            where, found = np.empty(total, np.int64), np.empty(total, np.int64)
            assert mod.table_fill(chain, first, where, found) == total
            assert list(zip(where.tolist(), found.tolist())) == [pair for row in expected for pair in row]


@SETTINGS
@given(st.lists(st.integers(0, 2**64 - 1), max_size=200), st.integers(0, 12))
def test_bit_sets_equal_compiled(values: list[int], log_words: int) -> None:
    hashes = np.array(values, dtype=np.uint64)
    both(lambda m, o: m.bits_build(hashes, *o), [np.full(1 << log_words, 7, dtype=np.uint64)])


@SETTINGS
@given(
    st.binary(max_size=300)
    | st.lists(st.sampled_from([b"\n", b" ", b"\t\r\n", b"a", b"\x0b\x0c", b"xyz"]), max_size=200).map(
        b"".join
    ),
    st.integers(0, 80),
)
def test_line_kernels_equal_compiled(block: bytes, room: int) -> None:
    assert compiled.count_lines(block) == pure_kernels.count_lines(block)
    both(lambda m, o: m.line_ends(block, *o), [np.full(room, -5, dtype=np.int64)])
    both(lambda m, o: m.line_ends(memoryview(bytearray(block)), *o), [np.full(room, -5, dtype=np.int64)])


def test_the_pure_module_is_what_native_loads_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    native.module.cache_clear()
    native.take_notices()  # this run's own, if it runs on the numpy kernels
    try:
        monkeypatch.setenv(native.PURE_ENV, "1")
        assert native.module() is pure_kernels
        assert not native.has_prefilter()
        notices = native.take_notices()
        assert len(notices) == 1 and "numpy kernels" in notices[0]
        assert native.module() is pure_kernels and native.take_notices() == []  # one notice only
        native.module.cache_clear()
        monkeypatch.delenv(native.PURE_ENV)
        assert native.module() is compiled and native.has_prefilter()
        assert native.take_notices() == []
    finally:  # as before the test, whichever the run uses
        monkeypatch.undo()
        native.module.cache_clear()
        native.module()
        native.take_notices()
