"""The kernels of ``csrc/native.c`` in numpy: the fallback where the compiled module is not built.

Same names, arguments, checks and results as the compiled functions (the tests run both on
random input and on malformed arguments), vectorised: whole-array passes instead of one loop per
character, so several times slower than C but no Python loop per character. The scan's
prefilter (``filter_jsonl``) has no counterpart here: without it every line takes the exact
path (``core.spec.native.has_prefilter``), which computes the same findings.

``native.module()`` returns this module in place of ``contam_guard._native``; nothing else
imports it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec import constants, hashing, markup, normalise
from contam_guard.core.spec.tables import N_CODEPOINTS as _CODEPOINTS

CHAR_BASE = hashing.CHAR_BASE
WORD_BASE = hashing.WORD_BASE
LEN_MIX = hashing.LEN_MIX
WINDOW_CHARS = hashing.WINDOW_CHARS
GRAM_N = hashing.GRAM_N
CLS_UNKNOWN = normalise.UNKNOWN
CLS_ALNUM = normalise.ALNUM
CLS_KEPT = normalise.KEPT
CLS_REMOVED = normalise.REMOVED
CLS_SPACE = normalise.SPACE
CLS_SPECIAL = normalise.SPECIAL
CLS_SOLO = normalise.SOLO
CLS_MARKUP = normalise.MARKUP
# The compiled module defines the line statuses of its prefilter; these mirror them, so that the
# modules reading ``native.module().LINE_*`` import in either mode (a test checks they are equal).
LINE_BLANK = 0
LINE_CLEAN = 1
LINE_HITS = 2
LINE_EXACT = 3
LINE_MORE = 4
PARAGRAPH_BYTES = constants.PARAGRAPH_BYTES
# ... and how its prefilter reads a line (this module has no prefilter; the values only let the
# modules that name the modes import).
READ_TEXT = 0
READ_KEYS = 1
READ_ALL = 2

_EMPTY = -1
_U64 = np.uint64
_INT_KINDS = "biu"
_UNSIGNED = {1: np.uint8, 4: np.uint32, 8: np.uint64}
_SIGNED = {8: np.int64}
_WHITESPACE = np.zeros(256, dtype=np.bool_)
_WHITESPACE[[0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D]] = True  # bytes.isspace()

Array = NDArray[Any]


def _take(
    func: str, name: str, obj: object, itemsize: int, *, writable: bool = False, signed: bool = False
) -> Array:
    """``obj``'s buffer as a flat array of ``itemsize``-byte integers, checked as the C side does:
    C-contiguous, writable where written, integer items of that size (TypeError otherwise)."""
    try:
        view = memoryview(obj)  # type: ignore[arg-type]
    except TypeError as exc:
        raise TypeError(f"{func}: {name} must be a buffer") from exc
    if not view.c_contiguous or (writable and view.readonly):
        raise TypeError(f"{func}: {name} must be C-contiguous{' and writable' if writable else ''}")
    array = np.asarray(view) if view.ndim else np.asarray(view).reshape(1)
    if array.dtype.kind not in _INT_KINDS or array.dtype.itemsize != itemsize or not array.dtype.isnative:
        raise TypeError(f"{func}: {name} must have integer items of {itemsize} bytes")
    wanted = (_SIGNED if signed else _UNSIGNED)[itemsize]
    flat: Array = array.reshape(-1).view(wanted)
    return flat


def _too_short(func: str, name: str, array: Array, need: int) -> None:
    if array.size < need:
        raise ValueError(f"{func}: {name} holds {array.size} items, needs {need}")


def _tables(func: str, **tables: Array) -> None:
    for name, table in tables.items():
        _too_short(func, name, table, _CODEPOINTS)


def _codepoints(func: str, codepoints: Array) -> None:
    if codepoints.size and int(codepoints.max()) >= _CODEPOINTS:
        raise ValueError(f"{func}: code point {int(codepoints.max())} out of range")


def _offsets(func: str, name: str, offsets: Array, size: int) -> None:
    if offsets.size < 1 or offsets[0] != 0 or offsets[-1] != size or (np.diff(offsets) < 0).any():
        raise ValueError(f"{func}: {name} must run from 0 to {size} without decreasing")


def _solo_breaks(kind: Array) -> Array:
    """Where spec v3 starts a word inside a run of non-space code points: at a SOLO code point,
    and at an ALNUM one whose last SOLO or ALNUM code point before it in the run is SOLO."""
    setter = (kind == CLS_SOLO) | (kind == CLS_ALNUM) | (kind == CLS_SPACE)
    last = np.maximum.accumulate(np.where(setter, np.arange(kind.size, dtype=np.int64), -1))
    before = np.concatenate(([-1], last[:-1])) if kind.size else last
    after_solo = (before >= 0) & (kind[np.maximum(before, 0)] == CLS_SOLO)
    breaks: Array = (kind == CLS_SOLO) | ((kind == CLS_ALNUM) & after_solo)
    return breaks


def count_tokens(codepoints: object, classes: object) -> int:
    cps = _take("count_tokens", "codepoints", codepoints, 4)
    cls = _take("count_tokens", "classes", classes, 1)
    _tables("count_tokens", classes=cls)
    _codepoints("count_tokens", cps)
    kind = cls[cps]
    space = kind == CLS_SPACE
    starts = ~space
    starts[1:] &= space[:-1]
    return int(np.count_nonzero(starts | _solo_breaks(kind)))


def words_pass(
    codepoints: object,
    classes: object,
    lower_case: object,
    record_starts: object,
    word_records: object,
    word_starts: object,
    word_ends: object,
    word_hashes: object,
    flags: object,
) -> int:
    func = "words_pass"
    cps = _take(func, "codepoints", codepoints, 4)
    cls = _take(func, "classes", classes, 1)
    lower = _take(func, "lower", lower_case, 4)
    record_start = _take(func, "record_start", record_starts, 8, signed=True)
    word_record = _take(func, "word_record", word_records, 8, writable=True, signed=True)
    word_start = _take(func, "word_start", word_starts, 8, writable=True, signed=True)
    word_end = _take(func, "word_end", word_ends, 8, writable=True, signed=True)
    word_hash = _take(func, "word_hash", word_hashes, 8, writable=True)
    flagged = _take(func, "flagged", flags, 1, writable=True)
    _tables(func, classes=cls, lower=lower)
    _codepoints(func, cps)
    _offsets(func, "record_start", record_start, cps.size)
    records, capacity = record_start.size - 1, word_record.size
    _too_short(func, "flagged", flagged, records)
    for name, array in (("word_start", word_start), ("word_end", word_end), ("word_hash", word_hash)):
        _too_short(func, name, array, capacity)
    kind = cls[cps]
    lengths = np.diff(record_start)
    last = record_start[1:][lengths > 0] - 1
    if (kind[last] != CLS_SPACE).any():  # a word ends at a space: no word may span two records
        record = int(np.flatnonzero(lengths > 0)[np.argmax(kind[last] != CLS_SPACE)])
        raise ValueError(f"{func}: record {record} does not end with a space")

    record_of = np.repeat(np.arange(records, dtype=np.int64), lengths)
    special = np.unique(record_of[kind == CLS_SPECIAL])
    flagged[special] = 1  # these records make no words here (the reference path does them)
    dropped = np.zeros(records, dtype=np.bool_)
    dropped[special] = True
    space = kind == CLS_SPACE
    token_start = ~space
    token_start[1:] &= space[:-1]
    token = np.cumsum(token_start) - 1
    kept = np.flatnonzero(~space & (kind != CLS_REMOVED) & (kind != CLS_MARKUP) & ~dropped[record_of])
    if kept.size == 0:
        return 0
    first_of_word = np.flatnonzero((np.diff(token[kept], prepend=-1) != 0) | _solo_breaks(kind)[kept])
    count = first_of_word.size
    if count > capacity:
        raise ValueError(f"{func}: more words than the output arrays hold")
    word_lengths = np.diff(first_of_word, append=kept.size)
    first = kept[first_of_word]
    last_char = kept[first_of_word + word_lengths - 1]
    owner = record_of[first]
    word_record[:count] = owner
    word_start[:count] = first - record_start[owner]
    word_end[:count] = last_char + 1 - record_start[owner]
    word_hash[:count] = _hash_words(lower[cps[kept]], word_lengths)
    return count


_LONG_WORD = 4096


def _hash_words(chars: Array, lengths: Array) -> NDArray[np.uint64]:
    """``hashing.hash_words``; for words longer than ``_LONG_WORD``, each power of the base is
    computed from its exponent's bits rather than looked up in a table as long as the longest
    word (gigabytes for a 100 MB token, which the compiled kernel hashes in constant memory)."""
    if int(lengths.max()) <= _LONG_WORD:
        return hashing.hash_words(chars, lengths)
    starts = np.cumsum(lengths) - lengths
    exponent = (np.arange(chars.size, dtype=np.int64) - np.repeat(starts, lengths)).astype(_U64)
    power = np.ones(chars.size, dtype=_U64)
    base = CHAR_BASE  # B ** (2 ** bit), a Python int: numpy warns of a scalar's wrap-around
    for bit in range(int(lengths.max()).bit_length()):
        odd = (exponent >> _U64(bit)) & _U64(1) == 1
        power[odd] *= _U64(base)
        base = base * base % (1 << 64)
    raw: NDArray[np.uint64] = np.add.reduceat(chars.astype(_U64) * power, starts)
    return hashing.fmix64(raw ^ (lengths.astype(_U64) * _U64(LEN_MIX)))


def alnum_pass(
    codepoints: object, alnum_table: object, record_starts: object, out: object, out_chars: object
) -> int:
    func = "alnum_pass"
    cps = _take(func, "codepoints", codepoints, 4)
    is_alnum = _take(func, "is_alnum", alnum_table, 1)
    record_start = _take(func, "record_start", record_starts, 8, signed=True)
    alnum = _take(func, "alnum", out, 4, writable=True)
    record_chars = _take(func, "record_chars", out_chars, 8, writable=True, signed=True)
    _tables(func, is_alnum=is_alnum)
    _codepoints(func, cps)
    _offsets(func, "record_start", record_start, cps.size)
    _too_short(func, "alnum", alnum, cps.size)
    _too_short(func, "record_chars", record_chars, record_start.size)
    keep = is_alnum[cps] != 0
    before = np.zeros(cps.size + 1, dtype=np.int64)
    np.cumsum(keep, out=before[1:])
    written = int(before[-1])
    alnum[:written] = cps[keep]
    record_chars[: record_start.size] = before[record_start]
    return written


_TRIGGERS = np.array([ord(ch) for ch in markup.TRIGGERS], dtype=np.uint32)


def markup_pass(codepoints: object, record_starts: object, out: object) -> int:
    """Step m of spec v4: the records holding a character markup starts with are rewritten by
    ``markup.rewrite`` itself (a Python loop per such record, not per character)."""
    func = "markup_pass"
    cps = _take(func, "codepoints", codepoints, 4)
    record_start = _take(func, "record_start", record_starts, 8, signed=True)
    result = _take(func, "out", out, 4, writable=True)
    _codepoints(func, cps)
    _offsets(func, "record_start", record_start, cps.size)
    _too_short(func, "out", result, cps.size)
    source = cps.copy()  # ``out`` may be ``codepoints``
    result[: cps.size] = source
    triggers = np.flatnonzero(np.isin(source, _TRIGGERS))
    changed = 0
    for record in np.unique(np.searchsorted(record_start, triggers, side="right") - 1).tolist():
        lo, hi = int(record_start[record]), int(record_start[record + 1])
        text = source[lo:hi].astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
        new = np.frombuffer(markup.rewrite(text).encode("utf-32-le", "surrogatepass"), dtype="<u4")
        result[lo:hi] = new
        changed += int(np.count_nonzero(new != source[lo:hi]))
    return changed


def windows_pass(chars: object, chars_start: object, hashes_out: object, valid_out: object) -> None:
    func = "windows_pass"
    alnum = _take(func, "alnum", chars, 4)
    record_chars = _take(func, "record_chars", chars_start, 8, signed=True)
    window_hash = _take(func, "window_hash", hashes_out, 8, writable=True)
    window_valid = _take(func, "window_valid", valid_out, 1, writable=True)
    _offsets(func, "record_chars", record_chars, alnum.size)
    _too_short(func, "window_hash", window_hash, alnum.size)
    _too_short(func, "window_valid", window_valid, alnum.size)
    hashes = hashing.hash_windows(alnum, WINDOW_CHARS)  # every window, across records too
    if hashes.size == 0:
        return
    record_end = np.repeat(record_chars[1:], np.diff(record_chars))[: hashes.size]
    inside = np.flatnonzero(np.arange(hashes.size) + WINDOW_CHARS <= record_end)
    window_hash[inside] = hashes[inside]
    window_valid[inside] = 1


_SLOT_POSTING = _U64(0xFFFFFFFF)
"""A slot's posting bits (all ones: an empty slot); its top 32 bits are the hash's."""


def _slots(func: str, slots: Array) -> int:
    size = slots.size
    if size < 1 or size & (size - 1):
        raise ValueError(f"{func}: slots must be a power of two of them")
    return size


def table_build(hashes: object, slots: object, chain: object) -> None:
    """The compiled table's layout rules (linear probing from ``hash & mask``; a slot is the hash's
    top 32 bits over its first posting's 32; chains run forwards), placed in whole-array passes:
    keys sorted by home slot take the next free slot in turn, which is ``i + cummax(home - i)``,
    starting after a slot that nothing wraps into (the carry of keys into each slot is a
    running-minimum formula)."""
    func = "table_build"
    keys_all = _take(func, "hashes", hashes, 8)
    table = _take(func, "slots", slots, 8, writable=True)
    links = _take(func, "chain", chain, 8, writable=True, signed=True)
    size, count = _slots(func, table), keys_all.size
    _too_short(func, "chain", links, count)
    if count >= size or count >= int(_SLOT_POSTING):
        raise ValueError(f"{func}: the table is too small")
    order = np.argsort(keys_all, kind="stable")  # postings of one hash in increasing order
    ordered = keys_all[order]
    same = ordered[1:] == ordered[:-1]
    links[:count] = _EMPTY
    links[order[:-1][same]] = order[1:][same]
    head = np.concatenate(([True], ~same)) if count else np.zeros(0, dtype=np.bool_)
    keys, firsts = ordered[head], order[head]
    table[:] = _SLOT_POSTING
    if keys.size == 0:
        return
    mask = size - 1
    home = (keys & _U64(mask)).astype(np.int64)
    steps = np.tile(np.bincount(home, minlength=size) - 1, 2)  # two laps: the carry settles
    total = np.concatenate(([0], np.cumsum(steps)))
    carry = (total - np.minimum.accumulate(total))[size : 2 * size]
    anchor = int(np.argmax(carry == 0))  # exists: the table has an empty slot
    home = (home - anchor) & mask
    by_home = np.argsort(home, kind="stable")
    rank = np.arange(keys.size, dtype=np.int64)
    place = (rank + np.maximum.accumulate(home[by_home] - rank) + anchor) & mask
    table[place] = (keys[by_home] & ~_SLOT_POSTING) | firsts[by_home].astype(_U64)


def _walk(func: str, links: Array, start: Array, bound: int) -> list[Array]:
    """The chains from ``start`` (postings), level by level: element k of level d is the d-th
    posting after ``start[k]``'s (its chain's end drops it). ValueError for a corrupt chain."""
    levels: list[Array] = []
    index = np.arange(start.size, dtype=np.int64)
    current = start
    while current.size:
        levels.append(index)
        levels.append(current)
        following = links[current]
        if ((following != _EMPTY) & ((following <= current) | (following >= bound))).any():
            raise ValueError(f"{func}: chain must hold -1 or a larger posting for each posting")
        more = following != _EMPTY
        index, current = index[more], following[more]
    return levels


def table_first(
    hashes: object, slots: object, chain: object, queries_in: object, valid_in: object, out: object
) -> int:
    func = "table_first"
    keys = _take(func, "hashes", hashes, 8)
    table = _take(func, "slots", slots, 8)
    links = _take(func, "chain", chain, 8, signed=True)
    queries = _take(func, "queries", queries_in, 8)
    valid = _take(func, "valid", valid_in, 1)
    first = _take(func, "first", out, 8, writable=True, signed=True)
    size, count = _slots(func, table), keys.size
    _too_short(func, "chain", links, count)
    _too_short(func, "valid", valid, queries.size)
    _too_short(func, "first", first, queries.size)
    first[: queries.size] = _EMPTY
    pending = np.flatnonzero(valid[: queries.size])
    slot = (queries[pending] & _U64(size - 1)).astype(np.int64)
    for _ in range(size):  # each slot looked at once at most, as in C: a full table ends the probe
        if pending.size == 0:
            break
        entry = table[slot]
        posting = entry & _SLOT_POSTING
        empty = posting >= _U64(count)  # a posting outside [0, count) ends the probe
        asked = queries[pending]
        hit = ~empty & ((entry & ~_SLOT_POSTING) == (asked & ~_SLOT_POSTING))
        hit[hit] = keys[posting[hit].astype(np.int64)] == asked[hit]  # the tag matched: the hash?
        first[pending[hit]] = posting[hit].astype(np.int64)
        going = ~empty & ~hit
        pending, slot = pending[going], (slot[going] + 1) & (size - 1)
    found = first[: queries.size]
    levels = _walk(func, links, found[found >= 0], count)
    return sum(level.size for level in levels[1::2])


def table_fill(chain: object, first: object, where: object, found: object) -> int:
    func = "table_fill"
    links = _take(func, "chain", chain, 8, signed=True)
    starts = _take(func, "first", first, 8, signed=True)
    out_where = _take(func, "where", where, 8, writable=True, signed=True)
    out_found = _take(func, "found", found, 8, writable=True, signed=True)
    capacity = out_where.size
    _too_short(func, "found", out_found, capacity)
    if ((starts != _EMPTY) & ((starts < 0) | (starts >= links.size))).any():
        raise ValueError(f"{func}: first must hold -1 or a posting of the chain")
    queries = np.flatnonzero(starts >= 0)
    levels = _walk(func, links, starts[queries], links.size)
    query = np.concatenate([queries[index] for index in levels[0::2]] or [np.zeros(0, np.int64)])
    posting = np.concatenate(levels[1::2] or [np.zeros(0, np.int64)])
    if query.size > capacity:
        raise ValueError(f"{func}: more pairs than the output arrays hold")
    by_query = np.argsort(query, kind="stable")  # levels were appended in chain order
    out_where[: query.size] = query[by_query]
    out_found[: query.size] = posting[by_query]
    return int(query.size)


def bits_build(hashes: object, bits: object) -> None:
    keys = _take("bits_build", "hashes", hashes, 8)
    words = _take("bits_build", "bits", bits, 8, writable=True)
    if words.size < 1 or words.size & (words.size - 1):
        raise ValueError("bits_build: bits must be a power of two of words")
    shift = 64 - (words.size.bit_length() - 1)
    word = keys >> _U64(shift) if shift < 64 else np.zeros(keys.size, dtype=_U64)
    one = _U64(1)
    mask = (one << (keys & _U64(63))) | (one << ((keys >> _U64(6)) & _U64(63)))
    mask |= one << ((keys >> _U64(12)) & _U64(63))
    words[:] = 0
    np.bitwise_or.at(words, word.astype(np.int64), mask)


_SIP_INIT = (0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573)


def _rotl(x: NDArray[np.uint64], bits: int) -> NDArray[np.uint64]:
    rotated: NDArray[np.uint64] = (x << _U64(bits)) | (x >> _U64(64 - bits))
    return rotated


def _sip_rounds(v: list[NDArray[np.uint64]], rounds: int) -> None:
    """SipHash's SipRound ``rounds`` times on the four state arrays ``v`` (wrapping uint64 adds)."""
    v0, v1, v2, v3 = v
    for _ in range(rounds):
        v0 = v0 + v1
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = v2 + v3
        v3 = _rotl(v3, 16) ^ v2
        v0 = v0 + v3
        v3 = _rotl(v3, 21) ^ v0
        v2 = v2 + v1
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
    v[:] = [v0, v1, v2, v3]


def siphash24(key: object, hashes: object, out: object) -> None:
    """SipHash-2-4 of each hash (an 8-byte message) under ``key`` = (k0, k1), as in C: every
    SipRound is a few whole-array adds, rotations and xors."""
    func = "siphash24"
    k = _take(func, "key", key, 8)
    values = _take(func, "hashes", hashes, 8)
    result = _take(func, "out", out, 8, writable=True)
    if k.size != 2:
        raise ValueError(f"{func}: key must hold 2 items (k0, k1)")
    _too_short(func, "out", result, values.size)
    m = values.copy()  # ``out`` may be ``hashes``
    k0, k1 = _U64(k[0]), _U64(k[1])
    v = [
        np.full(m.size, k0 ^ _U64(_SIP_INIT[0]), dtype=_U64),
        np.full(m.size, k1 ^ _U64(_SIP_INIT[1]), dtype=_U64),
        np.full(m.size, k0 ^ _U64(_SIP_INIT[2]), dtype=_U64),
        np.full(m.size, k1 ^ _U64(_SIP_INIT[3]), dtype=_U64) ^ m,
    ]
    _sip_rounds(v, 2)
    v[0] ^= m
    last = _U64(8 << 56)  # the final block: only the message length, 8 bytes
    v[3] ^= last
    _sip_rounds(v, 2)
    v[0] ^= last
    v[2] ^= _U64(0xFF)
    _sip_rounds(v, 4)
    result[: m.size] = v[0] ^ v[1] ^ v[2] ^ v[3]


def line_ends(block: object, out: object) -> int:
    data = _take("line_ends", "block", block, 1)
    ends = _take("line_ends", "out", out, 8, writable=True, signed=True)
    found = np.flatnonzero(data == 0x0A) + 1
    if data.size and (found.size == 0 or found[-1] != data.size):
        found = np.append(found, data.size)  # a last line without its newline
    room = min(found.size, ends.size)
    ends[:room] = found[:room]
    return int(found.size)


def count_lines(block: object) -> tuple[int, int]:
    data = _take("count_lines", "block", block, 1)
    newline = np.flatnonzero(data == 0x0A)
    not_space = np.zeros(data.size + 1, dtype=np.int64)
    np.cumsum(~_WHITESPACE[data], out=not_space[1:])
    start = np.concatenate(([0], newline[:-1] + 1)) if newline.size else newline
    blank = np.count_nonzero(not_space[newline + 1] == not_space[start])
    return int(newline.size), int(blank)


_CHAIN_PARAMS = 5
"""``chain_runs``'s parameters: the most one link may cost, the budget's fixed part, its part per
``every`` words of the span, ``every``, and the most links a span follows back."""


def chain_runs(
    pair: object, i0: object, i1: object, j0: object, j1: object, by_end: object, params: object, out: object
) -> None:
    func = "chain_runs"
    p = _take(func, "pair", pair, 8, signed=True)
    a0, a1 = _take(func, "i0", i0, 8, signed=True), _take(func, "i1", i1, 8, signed=True)
    b0, b1 = _take(func, "j0", j0, 8, signed=True), _take(func, "j1", j1, 8, signed=True)
    order = _take(func, "by_end", by_end, 8, signed=True)
    settings = _take(func, "params", params, 8, signed=True)
    start = _take(func, "start", out, 8, writable=True, signed=True)
    n = p.size
    for name, array in (("i0", a0), ("i1", a1), ("j0", b0), ("j1", b1), ("by_end", order), ("start", start)):
        _too_short(func, name, array, n)
    _too_short(func, "params", settings, _CHAIN_PARAMS)
    max_link, fixed, per, every, max_links = (int(v) for v in settings[:_CHAIN_PARAMS])
    if not 0 <= max_link <= 64 or fixed < 0 or per < 0 or every < 1 or max_links < 0:
        raise ValueError(
            f"{func}: params must be max_link 0..64, fixed >= 0, per >= 0, every >= 1, links >= 0"
        )
    order = order[:n]
    if n and ((order < 0) | (order >= n)).any():
        raise ValueError(f"{func}: by_end must hold run indices")
    if n == 0:
        return
    a0, a1, b0, b1 = a0[:n], a1[:n], b0[:n], b1[:n]
    # Each run's cheapest predecessor: a run of the same pair ending t <= max_link words before it
    # starts (in the item) and not after it starts (in the record); a link costs the longer of its
    # two gaps (words replaced, inserted or deleted), at least 1. Ties: the longer run, then the
    # first index.
    offset = max_link + 1
    span = int(max(int(a1.max()), int(a0.max()))) + 2 * offset + 1
    ends = p[order] * span + a1[order] + offset
    pred = np.full(n, -1, dtype=np.int64)
    cost = np.full(n, max_link + 1, dtype=np.int64)
    length = np.full(n, -1, dtype=np.int64)
    runs = np.arange(n, dtype=np.int64)
    for t in range(max_link + 1):
        query = p * span + a0 - t + offset
        lo = np.searchsorted(ends, query, side="left")
        hi = np.searchsorted(ends, query, side="right")
        for k in range(int((hi - lo).max())):
            has = np.flatnonzero(lo + k < hi)
            a = order[lo[has] + k]
            gj = b0[has] - b1[a]
            c = np.maximum(np.maximum(gj, t), 1)
            size = a1[a] - a0[a]
            ok = (a != runs[has]) & (gj >= 0) & (c <= max_link)
            better = ok & (
                (c < cost[has])
                | ((c == cost[has]) & ((size > length[has]) | ((size == length[has]) & (a < pred[has]))))
            )
            at = has[better]
            pred[at], cost[at], length[at] = a[better], c[better], size[better]
    # Each run's span: back along its predecessors while the links' cost fits the budget for the
    # span they reach (at most max_links links; a budget no longer span could meet ends the walk).
    start[:n] = a0
    current, spent = runs.copy(), np.zeros(n, dtype=np.int64)
    alive = pred >= 0
    for _ in range(max_links):
        live = np.flatnonzero(alive)
        if live.size == 0:
            break
        back = pred[current[live]]
        spent[live] += cost[current[live]]
        reach = spent[live] * every <= fixed * every + per * a1[live]
        fits = reach & (spent[live] * every <= fixed * every + per * (a1[live] - a0[back]))
        start[live[fits]] = a0[back[fits]]
        current[live] = back
        alive[live] = reach & (pred[back] >= 0)
