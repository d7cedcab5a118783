"""Every kernel, compiled and numpy, called with malformed arguments: an exception, never a crash.

Each case starts from a valid call on random text and breaks one thing: an argument's dtype,
length, contiguity or writability; offsets that decrease, overshoot or hold huge values; a code
point past U+10FFFF; a table too small, not a power of two, full, or with a chain that loops.
The kernel must raise (TypeError, ValueError or BufferError), and must not have written outside
the arrays it was given: every writable argument sits between guard words that are checked after
the call. A wild read or write that misses the guard words is what ``make sanitize`` (the same
tests under AddressSanitizer) catches. A probe that never ends is run in a child process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from contam_guard.core.match import table
from contam_guard.core.spec import normalise, pure_kernels
from contam_guard.core.spec.tables import N_CODEPOINTS, tables_for

compiled: ModuleType = pytest.importorskip("contam_guard._native")
MODULES = [pytest.param(compiled, id="compiled"), pytest.param(pure_kernels, id="numpy")]
TABLES = tables_for(normalise.V1)
N = N_CODEPOINTS
GUARD = 8
CANARY = 0x5A
REFUSED = (TypeError, ValueError, BufferError)
SETTINGS = settings(max_examples=60, deadline=None)

Array = NDArray[Any]


class Guarded:
    """Arrays handed to a kernel, each in the middle of a larger buffer whose ends hold canaries."""

    def __init__(self) -> None:
        self.buffers: list[tuple[Array, int]] = []

    def __call__(self, array: Array) -> Array:
        size = array.nbytes
        raw = np.full(size + 2 * GUARD * 8, CANARY, dtype=np.uint8)
        inner = raw[GUARD * 8 : GUARD * 8 + size].view(array.dtype)
        inner[...] = array.reshape(-1)
        self.buffers.append((raw, size))
        return inner

    def intact(self) -> bool:
        return all(
            (raw[: GUARD * 8] == CANARY).all() and (raw[GUARD * 8 + size :] == CANARY).all()
            for raw, size in self.buffers
        )


@dataclass
class Call:
    """A valid call of ``kernel``: its arguments, which of them it writes, and for each argument
    that may not be shorter, how long it must be at least."""

    kernel: str
    args: list[Any]
    writable: set[int]
    need: dict[int, int] = field(default_factory=dict)
    offsets: dict[int, int] = field(default_factory=dict)
    """Arguments holding offsets that must run from 0 to this value without decreasing."""
    codepoints: int | None = None


def features_input(texts: list[str]) -> tuple[Array, Array]:
    record_start = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) + 1 for t in texts], out=record_start[1:])
    data = "".join(t + "\n" for t in texts).encode("utf-32-le", "surrogatepass")
    codepoints = np.frombuffer(data, dtype=np.uint32).copy()
    TABLES.classify_new(codepoints)
    return codepoints, record_start


def valid_calls(texts: list[str], values: list[int], block: bytes) -> dict[str, Call]:
    """One valid call of each kernel (they share the random text and hashes)."""
    cps, starts = features_input(texts)
    words = int(compiled.count_tokens(cps, TABLES.cls))
    count = len(values)
    size = table.capacity(count)
    hashes = np.array(values, dtype=np.uint64)
    slots, chain = np.empty(size, dtype=np.uint64), np.empty(count, dtype=np.int64)
    compiled.table_build(hashes, slots, chain)
    queries = np.concatenate([hashes, np.arange(5, dtype=np.uint64)])
    first = np.empty(queries.size, dtype=np.int64)
    pairs = int(compiled.table_first(hashes, slots, chain, queries, np.ones(queries.size, np.bool_), first))
    alnum = np.empty(cps.size, dtype=np.uint32)
    chars = np.empty(starts.size, dtype=np.int64)
    total = int(compiled.alnum_pass(cps, TABLES.is_alnum, starts, alnum, chars))
    i64, u64 = np.int64, np.uint64

    def empty(n: int, dtype: type[np.generic] = i64) -> Array:
        return np.zeros(n, dtype=dtype)

    return {
        "count_tokens": Call("count_tokens", [cps, TABLES.cls], set(), {1: N}, codepoints=0),
        "words_pass": Call(
            "words_pass",
            [
                cps,
                TABLES.cls,
                TABLES.lower,
                starts,
                empty(words),
                empty(words),
                empty(words),
                empty(words, u64),
                empty(len(texts), np.bool_),
            ],
            {4, 5, 6, 7, 8},
            {1: N, 2: N, 5: words, 6: words, 7: words, 8: len(texts)},
            {3: cps.size},
            codepoints=0,
        ),
        "alnum_pass": Call(
            "alnum_pass",
            [cps, TABLES.is_alnum, starts, empty(cps.size, np.uint32), empty(starts.size)],
            {3, 4},
            {1: N, 3: cps.size, 4: starts.size},
            {2: cps.size},
            codepoints=0,
        ),
        "markup_pass": Call(
            "markup_pass",
            [cps, starts, empty(cps.size, np.uint32)],
            {2},
            {2: cps.size},
            {1: cps.size},
            codepoints=0,
        ),
        "windows_pass": Call(
            "windows_pass",
            [alnum[:total].copy(), chars, empty(total, u64), empty(total, np.bool_)],
            {2, 3},
            {2: total, 3: total},
            {1: total},
        ),
        "table_build": Call("table_build", [hashes, empty(2 * size), empty(count)], {1, 2}, {2: count}),
        "table_first": Call(
            "table_first",
            [hashes, slots, chain, queries, np.ones(queries.size, np.bool_), empty(queries.size)],
            {5},
            {2: count, 4: queries.size, 5: queries.size},
        ),
        "table_fill": Call("table_fill", [chain, first, empty(pairs), empty(pairs)], {2, 3}, {3: pairs}),
        "bits_build": Call("bits_build", [hashes, empty(64, u64)], {1}),
        "siphash24": Call(
            "siphash24", [np.arange(2, dtype=u64), hashes, empty(count, u64)], {2}, {0: 2, 2: count}
        ),
        "line_ends": Call("line_ends", [block, empty(8)], {1}),
        "count_lines": Call("count_lines", [block], set()),
    }


def wrong_dtype(array: Any) -> Array:
    """An array of the same length whose items are not the expected integers."""
    size = len(array) if not isinstance(array, np.ndarray) else array.size
    itemsize = 1 if not isinstance(array, np.ndarray) else array.itemsize
    dtype = {1: np.int16, 2: np.float16, 4: np.float32, 8: np.float64}[itemsize]
    return np.zeros(max(size, 1), dtype=dtype)


def run(mod: ModuleType, call: Call, args: list[Any], writable: set[int]) -> tuple[bool, bool]:
    """(refused, guards intact) for ``mod``'s kernel on ``args``, the writable ones guarded."""
    guarded = Guarded()
    given_args = [
        guarded(a)
        if i in writable and isinstance(a, np.ndarray) and a.flags.writeable and a.flags.c_contiguous
        else a
        for i, a in enumerate(args)
    ]
    try:
        getattr(mod, call.kernel)(*given_args)
    except REFUSED:
        return True, guarded.intact()
    return False, guarded.intact()


KERNELS = list(valid_calls(["a b"], [1], b"x\n"))
UNITS = st.sampled_from([*"ab c.,İ中\t&<>[]();#", "&amp;", "<b>", "](x)", "<!--", "-->"])  # v4's markup
TEXTS = st.lists(st.lists(UNITS, max_size=30).map("".join), min_size=1, max_size=5)
VALUES = st.lists(st.integers(0, 40) | st.integers(0, 2**64 - 1), min_size=1, max_size=30)
BLOCKS = st.binary(min_size=1, max_size=60)


@pytest.mark.parametrize("mod", MODULES)
@pytest.mark.parametrize("kernel", KERNELS)
@SETTINGS
@given(TEXTS, VALUES, BLOCKS, st.data())
def test_a_broken_argument_is_refused(
    mod: ModuleType, kernel: str, texts: list[str], values: list[int], block: bytes, data: st.DataObject
) -> None:
    call = valid_calls(texts, values, block)[kernel]
    refused, intact = run(mod, call, list(call.args), call.writable)
    assert not refused and intact  # the valid call is accepted: the cases below break one thing
    args = list(call.args)
    kinds = ["dtype", "strided"] + ["short"] * bool(call.need) + ["readonly"] * bool(call.writable)
    kinds += ["offsets"] * bool(call.offsets) + ["codepoint"] * (call.codepoints is not None)
    kind = data.draw(st.sampled_from(kinds), label="kind")
    if kind == "dtype":
        i = data.draw(st.integers(0, len(args) - 1), label="argument")
        args[i] = wrong_dtype(args[i])
    elif kind == "strided":
        i = data.draw(st.integers(0, len(args) - 1), label="argument")
        base = np.asarray(memoryview(args[i])).reshape(-1)
        args[i] = np.repeat(base, 2)[::2] if base.size >= 2 else np.zeros(4, base.dtype)[::2]
    elif kind == "short":
        i = data.draw(st.sampled_from(sorted(call.need)), label="argument")
        assume(call.need[i] > 0)
        args[i] = args[i][: data.draw(st.integers(0, call.need[i] - 1), label="length")].copy()
    elif kind == "readonly":
        i = data.draw(st.sampled_from(sorted(call.writable)), label="argument")
        args[i] = args[i].copy()
        args[i].flags.writeable = False
    elif kind == "offsets":
        i, end = next(iter(call.offsets.items()))
        huge = st.integers(-(2**63), 2**63 - 1)
        offsets = data.draw(
            st.lists(st.integers(-3, end + 3) | huge, min_size=0, max_size=8), label="offsets"
        )
        ok = bool(offsets) and offsets[0] == 0 and offsets[-1] == end and offsets == sorted(offsets)
        assume(not ok)
        args[i] = np.array(offsets, dtype=np.int64)
    else:  # a code point past the tables
        cps = args[call.codepoints or 0].copy()
        assume(cps.size > 0)
        cps[data.draw(st.integers(0, cps.size - 1))] = data.draw(st.integers(N, 2**32 - 1), label="value")
        args[call.codepoints or 0] = cps
    refused, intact = run(mod, call, args, call.writable)
    assert refused, kind
    assert intact, kind


# Cases that need a particular shape of input rather than one broken argument.
def no_final_space(mod: ModuleType) -> Callable[[], object]:
    cps, starts = features_input(["ab", "cd"])
    cps[-1] = ord("x")  # the last record no longer ends with its separator
    outs = [np.zeros(4, dtype=t) for t in (np.int64, np.int64, np.int64, np.uint64)]
    return lambda: mod.words_pass(cps, TABLES.cls, TABLES.lower, starts, *outs, np.zeros(2, np.bool_))


def few_word_slots(mod: ModuleType) -> Callable[[], object]:
    cps, starts = features_input(["one two three"])
    outs = [np.zeros(2, dtype=t) for t in (np.int64, np.int64, np.int64, np.uint64)]
    return lambda: mod.words_pass(cps, TABLES.cls, TABLES.lower, starts, *outs, np.zeros(1, np.bool_))


def offsets_past_the_end(mod: ModuleType) -> Callable[[], object]:
    """The issue's case: offsets [0, 10, 0, 10] wrote 20 values into a 10-slot buffer."""
    cps = np.full(10, ord("a"), dtype=np.uint32)
    starts = np.array([0, 10, 0, 10], dtype=np.int64)
    return lambda: mod.alnum_pass(
        cps, TABLES.is_alnum, starts, np.zeros(10, np.uint32), np.zeros(4, np.int64)
    )


def small_table(mod: ModuleType) -> Callable[[], object]:
    hashes = np.arange(16, dtype=np.uint64)
    return lambda: mod.table_build(hashes, np.zeros(16, np.uint64), np.zeros(16, np.int64))


def odd_table(mod: ModuleType) -> Callable[[], object]:
    return lambda: mod.table_build(
        np.arange(3, dtype=np.uint64), np.zeros(12, np.uint64), np.zeros(3, np.int64)
    )


def looping_chain(mod: ModuleType) -> Callable[[], object]:
    hashes = np.array([7, 7], dtype=np.uint64)
    slots, chain = np.zeros(16, np.uint64), np.zeros(2, np.int64)
    compiled.table_build(hashes, slots, chain)
    chain[1] = 0  # 0 -> 1 -> 0 -> ...
    first = np.zeros(1, np.int64)
    return lambda: mod.table_first(hashes, slots, chain, hashes[:1], np.ones(1, np.bool_), first)


def looping_fill(mod: ModuleType) -> Callable[[], object]:
    chain = np.array([0], dtype=np.int64)  # a posting that is its own successor
    return lambda: mod.table_fill(
        chain, np.zeros(1, np.int64), np.zeros(1000, np.int64), np.zeros(1000, np.int64)
    )


def first_out_of_range(mod: ModuleType) -> Callable[[], object]:
    chain = np.array([-1], dtype=np.int64)
    first = np.array([2**62], dtype=np.int64)
    return lambda: mod.table_fill(chain, first, np.zeros(4, np.int64), np.zeros(4, np.int64))


def odd_bits(mod: ModuleType) -> Callable[[], object]:
    return lambda: mod.bits_build(np.arange(3, dtype=np.uint64), np.zeros(48, np.uint64))


def long_key(mod: ModuleType) -> Callable[[], object]:
    """A SipHash key is exactly two words: a third is a mistake, not something to ignore."""
    hashes = np.arange(4, dtype=np.uint64)
    return lambda: mod.siphash24(np.arange(3, dtype=np.uint64), hashes, np.zeros(4, np.uint64))


SHAPES = [
    no_final_space,
    few_word_slots,
    offsets_past_the_end,
    small_table,
    odd_table,
    looping_chain,
    looping_fill,
    first_out_of_range,
    odd_bits,
    long_key,
]


@pytest.mark.parametrize("mod", MODULES)
@pytest.mark.parametrize("case", SHAPES, ids=lambda case: case.__name__)
def test_a_malformed_shape_is_refused(
    mod: ModuleType, case: Callable[[ModuleType], Callable[[], object]]
) -> None:
    with pytest.raises(ValueError):
        case(mod)()


FILTER_ARGS = """
import numpy as np
from contam_guard import _native as n
from contam_guard.core.spec import normalise
from contam_guard.core.spec.tables import tables_for

T = tables_for(normalise.V1)
T.ensure(np.frombuffer("abcdefgh {}\\":".encode("utf-32-le"), dtype=np.uint32))
full = np.zeros(16, np.uint64)   # 16 slots, each (tag 0, posting 0): no empty slot
one, chain, bits = np.array([99], np.uint64), np.array([-1], np.int64), np.full(64, 2**64 - 1, np.uint64)

def hits():
    return [np.zeros(64, np.int64) for _ in range(3)]

def arrays(slots=full, chain=chain):
    return [one, slots, chain, bits, *hits()]

def run(grams=None, windows=None, line_end=np.zeros(8, np.int64), status=np.zeros(8, np.uint8),
        key=np.zeros(0, np.uint64)):
    block = b'{"text": "' + b"a b c d e f g h " * 5 + b'a b"}\\n'
    return n.filter_jsonl(block, b"text", T.cls, T.lower, T.is_alnum, *(grams or arrays()),
                          *(windows or arrays()), line_end, status, np.zeros(8, np.int64),
                          np.zeros(64, np.uint32), key, True, False, None)
"""


def test_a_full_table_ends_every_probe() -> None:
    """A table with no empty slot and no match: probing stops after one lap, in table_first and in
    the prefilter (the probe used to loop for ever with the GIL released: a child process, so a
    regression fails here instead of hanging the run)."""
    code = FILTER_ARGS + textwrap.dedent(
        """
        first = np.zeros(1, np.int64)
        total = n.table_first(one, full, chain, np.array([5], np.uint64), np.ones(1, np.bool_), first)
        print(total, first[0])
        print(run()[0])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "-1", "1"]  # nothing found; one line read


@pytest.mark.parametrize(
    "broken",
    [
        "run(grams=arrays(chain=np.array([0], np.int64)))",  # a chain that loops
        "run(windows=arrays(chain=np.array([5], np.int64)))",  # past the postings
        "run(grams=arrays(slots=np.zeros(12, np.uint64)))",  # not a power of two of slots
        "run(grams=[one, full, chain, np.zeros(3, np.uint64), *hits()])",  # bits not a power of two
        "run(grams=[*arrays()[:5], np.zeros(3, np.int64), np.zeros(64, np.int64)])",  # short hit array
        "run(status=np.zeros(2, np.uint8))",  # per-line arrays of different lengths
        "run(line_end=np.zeros(8, np.float64))",  # not integers
        "run(key=np.zeros(1, np.uint64))",  # a key is no items (unkeyed) or two
        "run(key=np.zeros(3, np.uint64))",
        "run(key=np.zeros(2, np.float64))",
    ],
)
def test_the_prefilter_refuses_malformed_arguments(broken: str) -> None:
    code = (
        FILTER_ARGS
        + f"\ntry:\n    {broken}\nexcept (TypeError, ValueError) as exc:\n    print('refused', exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused"), done.stdout
