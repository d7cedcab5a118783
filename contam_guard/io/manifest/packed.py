"""Sorted, bit-packed hash tables: how a manifest stores 5-gram and window hashes.

A table holds ``count`` entries, each a 64-bit hash and a small payload (a 5-gram's place in
its view, or the item a window belongs to), sorted by (hash, payload). It is stored as an
Elias-Fano sequence, which is about as small as such a table can be and still be searched where
it lies, memory-mapped, without being loaded:

- the top ``bucket_bits`` bits of each hash (``b = floor(log2(count))``, about one entry per
  bucket) are stored in unary in ``units``: entry i sets bit ``bucket[i] + i``, so that the
  zeros end the buckets (``count + 2**b`` bits, under two bits per entry);
- ``groups[g]`` counts the entries in buckets below ``64 * g``: a lookup jumps to its group and
  reads a few words of ``units`` to find its bucket;
- the other ``64 - b`` bits of each hash, and each payload, are packed at fixed widths in
  ``remainders`` and ``payloads`` (little-endian 64-bit words, one spare word at the end).

So an entry costs ``64 - b + 2`` bits plus its payload: 8 bytes or a little less for a table of
a million entries, where an open-addressing table of (hash, posting) pairs costs three times
that. A lookup touches a handful of cache lines; decoding the whole table (to build the scan's
in-memory hash table, ``core.match.table``) is a few whole-array passes.

Everything here is numpy; arrays may be read-only views of a memory-mapped file. The arrays
are checked for their sizes (``PackedTable.check``) before use, and every index a lookup computes
from them is clipped to the arrays: a damaged table gives wrong answers, never a read out of
bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

U64 = np.uint64
Words = NDArray[np.uint64]
IntArray = NDArray[np.int64]

GROUP_BUCKETS = 64
_SCAN_WORDS = 8
"""Words of ``units`` read per lookup: a group spans its 64 zeros and about 64 to 128 ones."""
_LOOKUP_BATCH = 4096
"""Queries handled per step of a lookup (each reads ``_SCAN_WORDS * 64`` bits)."""
_FEW_READS = 2048
"""Up to this many fields per step are read from the file (``PackedTable.pairs``); more, and
the mapping is read (most of its pages would be read anyway)."""


def packed_words(count: int, width: int) -> int:
    """64-bit words holding ``count`` fields of ``width`` bits, and one spare word (so that a
    field read may always take two words)."""
    return (count * width + 63) // 64 + 1


def pack(values: NDArray[np.uint64], width: int) -> Words:
    """``values`` (each below ``2**width``) as consecutive ``width``-bit fields."""
    words = np.zeros(packed_words(values.size, width), dtype=U64)
    if values.size == 0 or width == 0:
        return words
    v = values.astype(U64, copy=False)
    offset = np.arange(values.size, dtype=np.int64) * width
    word = offset >> 6
    shift = (offset & 63).astype(U64)
    # Fields sharing a word occupy disjoint bits, so their sum is their union.
    starts = np.flatnonzero(np.concatenate([[True], word[1:] != word[:-1]]))
    words[word[starts]] = np.add.reduceat(v << shift, starts)
    spill = (offset & 63) + width > 64
    if spill.any():  # the high part of a field that crosses into the next word (one per word)
        words[word[spill] + 1] |= v[spill] >> (U64(64) - shift[spill])
    return words


WordPairs = Callable[[IntArray], NDArray[np.uint64]]
"""Words ``i`` and ``i + 1`` of an array for each index ``i``, shape (n, 2): how a lookup reads a
few fields of a table without touching its memory mapping (``PackedTable.pairs``)."""


def unpack(words: Words, width: int, index: IntArray, pairs: WordPairs | None = None) -> NDArray[np.uint64]:
    """The ``width``-bit fields at ``index`` (clipped into the array), read from ``words`` or
    through ``pairs``."""
    if width == 0 or index.size == 0:
        return np.zeros(index.size, dtype=U64)
    offset = index.astype(np.int64) * width
    word = np.clip(offset >> 6, 0, max(words.size - 2, 0))
    shift = (offset & 63).astype(U64)
    if pairs is not None:
        both = pairs(word)
        first, second = both[:, 0], both[:, 1]
    else:
        first, second = words[word], words[np.minimum(word + 1, words.size - 1)]
    low = first >> shift
    high = np.where(shift > 0, second << ((U64(64) - shift) & U64(63)), U64(0))
    value: NDArray[np.uint64] = low | high
    return value if width == 64 else value & U64((1 << width) - 1)


def width_for(largest: int) -> int:
    """Bits for values 0 .. ``largest``."""
    return max(int(largest).bit_length(), 1)


@dataclass(frozen=True)
class Shape:
    """A table's parameters, as a file's header records them."""

    count: int
    bucket_bits: int
    payload_bits: int

    @property
    def remainder_bits(self) -> int:
        return 64 - self.bucket_bits

    @property
    def unit_bits(self) -> int:
        return self.count + (1 << self.bucket_bits)

    @property
    def group_count(self) -> int:
        return ((1 << self.bucket_bits) + GROUP_BUCKETS - 1) // GROUP_BUCKETS + 1

    def sizes(self) -> dict[str, int]:
        """The length (in elements) of each array."""
        return {
            "units": (self.unit_bits + 63) // 64 + _SCAN_WORDS,
            "groups": self.group_count,
            "remainders": packed_words(self.count, self.remainder_bits),
            "payloads": packed_words(self.count, self.payload_bits),
        }

    @classmethod
    def of(cls, count: int, payload_bits: int) -> Shape:
        return cls(count, max(1, count.bit_length() - 1), payload_bits)


ARRAY_DTYPES = {"units": "<u8", "groups": "<u4", "remainders": "<u8", "payloads": "<u8"}


@dataclass(frozen=True)
class PackedTable:
    """A sorted, packed table (the module docstring): entry ``s`` (0 .. count - 1, in sorted
    order) has ``hash_at(s)`` and ``payload_at(s)``."""

    shape: Shape
    units: Words
    groups: NDArray[np.uint32]
    remainders: Words
    payloads: Words
    pairs: dict[str, WordPairs] = field(default_factory=dict, compare=False, repr=False)
    """For a table in a file: reads of a few words of ``remainders`` and ``payloads`` that go to
    the file (``os.pread``) rather than through the mapping. A read through a mapping maps 64 KB
    around it into the process (the kernel's fault-around), so the few thousand probes of a small
    scan would make most of a large manifest resident; these leave it in the page cache."""

    @property
    def count(self) -> int:
        return self.shape.count

    def arrays(self) -> dict[str, NDArray[np.unsignedinteger[Any]]]:
        return {
            "units": self.units,
            "groups": self.groups,
            "remainders": self.remainders,
            "payloads": self.payloads,
        }

    @classmethod
    def build(
        cls, hashes: NDArray[np.uint64], payloads: NDArray[np.uint64], payload_bits: int
    ) -> PackedTable:
        """The table of (hash, payload) pairs; ``payloads`` must be nondecreasing (the order of
        the items), so that a stable sort by hash sorts by (hash, payload)."""
        shape = Shape.of(int(hashes.size), payload_bits)
        order = np.argsort(hashes, kind="stable")
        ordered = hashes[order]
        r = U64(shape.remainder_bits)
        bucket = (ordered >> r).astype(np.int64)
        sizes = shape.sizes()
        bits = np.zeros(sizes["units"] * 64, dtype=np.uint8)
        bits[bucket + np.arange(bucket.size, dtype=np.int64)] = 1
        units = np.packbits(bits, bitorder="little").view("<u8").astype(U64)
        edges = np.arange(shape.group_count, dtype=np.int64) * GROUP_BUCKETS
        groups = np.searchsorted(bucket, edges, side="left").astype(np.uint32)
        mask = U64((1 << shape.remainder_bits) - 1)
        return cls(
            shape,
            units,
            groups,
            pack(ordered & mask, shape.remainder_bits),
            pack(payloads[order].astype(U64), payload_bits),
        )

    def check(self) -> str | None:
        """What is wrong with the arrays' sizes for this shape (None: nothing)."""
        s = self.shape
        if not (0 <= s.count < 1 << 32 and 1 <= s.bucket_bits <= 32 and 0 <= s.payload_bits <= 64):
            return f"table parameters out of range ({s})"
        for name, size in s.sizes().items():
            if getattr(self, name).size != size:
                return f"array {name} holds {getattr(self, name).size} values, not {size}"
        if int(self.groups[-1]) != s.count:
            return "the bucket directory does not end at the entry count"
        return None

    def deep_check(self) -> str | None:
        """What is wrong with the entries themselves (reads them all; ``verify``): the bucket
        bits must hold ``count`` entries, sorted by (hash, payload)."""
        try:
            hashes = self.all_hashes
        except ValueError as exc:
            return str(exc)
        payloads = self.all_payloads
        if hashes.size > 1:
            same = hashes[1:] == hashes[:-1]
            if bool((hashes[1:] < hashes[:-1]).any()) or bool(
                (payloads[1:][same] < payloads[:-1][same]).any()
            ):
                return "its entries are not in order"
        return None

    # --- reading ---------------------------------------------------------------------------

    def payload_at(self, entries: IntArray) -> NDArray[np.uint64]:
        return unpack(self.payloads, self.shape.payload_bits, entries, self._reader("payloads", entries.size))

    def _reader(self, name: str, reads: int) -> WordPairs | None:
        """The file reader of ``name`` for a few reads; None (read the mapping) for many."""
        return self.pairs.get(name) if reads <= _FEW_READS else None

    @cached_property
    def all_hashes(self) -> NDArray[np.uint64]:
        """Every entry's hash, in sorted order (reads the whole table; kept)."""
        return self.decode_hashes()

    def decode_hashes(self) -> NDArray[np.uint64]:
        """Every entry's hash, in sorted order (reads the whole table; not kept)."""
        n = self.count
        if n == 0:
            return np.zeros(0, dtype=U64)
        ones = np.flatnonzero(np.unpackbits(self.units.view(np.uint8), bitorder="little"))[:n]
        if ones.size != n:
            raise ValueError("the bucket bits hold fewer entries than the table's count")
        bucket = (ones - np.arange(n, dtype=np.int64)).astype(U64)
        low = unpack(self.remainders, self.shape.remainder_bits, np.arange(n, dtype=np.int64))
        hashes: NDArray[np.uint64] = (bucket << U64(self.shape.remainder_bits)) | low
        return hashes

    @cached_property
    def all_payloads(self) -> NDArray[np.uint64]:
        return self.decode_payloads()

    def let_go(self) -> None:
        """Drop the decoded arrays (``all_hashes``, ``all_payloads``): decoded again if asked."""
        self.__dict__.pop("all_hashes", None)
        self.__dict__.pop("all_payloads", None)

    def decode_payloads(self) -> NDArray[np.uint64]:
        """Every entry's payload, in sorted order (reads the whole table; not kept)."""
        return self.payload_at(np.arange(self.count, dtype=np.int64))

    def lookup(self, queries: NDArray[np.uint64]) -> tuple[IntArray, IntArray]:
        """(query index, entry) for every entry whose hash equals a query, in query order and
        entry order; reads only the buckets the queries fall in."""
        wheres, founds = [], []
        for start in range(0, queries.size, _LOOKUP_BATCH):
            where, found = self._lookup(queries[start : start + _LOOKUP_BATCH])
            wheres.append(where + start)
            founds.append(found)
        if not wheres:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(wheres), np.concatenate(founds)

    def _lookup(self, queries: NDArray[np.uint64]) -> tuple[IntArray, IntArray]:
        first, size = self._buckets(queries)
        query = np.repeat(np.arange(queries.size, dtype=np.int64), size)
        entry = np.repeat(first, size) + (
            np.arange(query.size, dtype=np.int64) - np.repeat(np.cumsum(size) - size, size)
        )
        entry = np.clip(entry, 0, max(self.count - 1, 0))
        mask = U64((1 << self.shape.remainder_bits) - 1)
        reader = self._reader("remainders", entry.size)
        equal = unpack(self.remainders, self.shape.remainder_bits, entry, reader) == (queries[query] & mask)
        return query[equal], entry[equal]

    def _buckets(self, queries: NDArray[np.uint64]) -> tuple[IntArray, IntArray]:
        """For each query, the first entry of its bucket and the bucket's size."""
        if self.count == 0 or queries.size == 0:
            zeros = np.zeros(queries.size, dtype=np.int64)
            return zeros, zeros
        bucket = (queries >> U64(self.shape.remainder_bits)).astype(np.int64)
        group, k = bucket // GROUP_BUCKETS, bucket % GROUP_BUCKETS
        before = self.groups[np.clip(group, 0, self.groups.size - 1)].astype(np.int64)
        start_bit = before + group * GROUP_BUCKETS  # ones and zeros before the group
        word = np.clip(start_bit >> 6, 0, self.units.size - _SCAN_WORDS)
        rows = self.units[word[:, None] + np.arange(_SCAN_WORDS)]
        bits = np.unpackbits(rows.view(np.uint8), axis=1, bitorder="little")
        skip = start_bit - word * 64
        column = np.arange(bits.shape[1], dtype=np.int64)
        zero = (bits == 0) & (column >= skip[:, None])
        zeros_to = np.cumsum(zero, axis=1)
        # The bucket lies between the group's k-th and (k+1)-th zeros.
        end = np.argmax(zeros_to >= (k + 1)[:, None], axis=1)
        begin = np.where(k > 0, np.argmax(zeros_to >= k[:, None], axis=1) + 1, skip)
        found = zeros_to[:, -1] >= k + 1
        if not found.all():  # a group wider than the words read (a very uneven table): count on
            for q in np.flatnonzero(~found).tolist():
                begin[q], end[q] = self._bucket_bits(int(start_bit[q]), int(k[q]))
                word[q] = 0
        first = before + (word * 64 + begin - start_bit) - k
        return first, np.maximum(end - begin, 0)

    def _bucket_bits(self, start_bit: int, k: int) -> tuple[int, int]:
        """The bucket k zeros after ``start_bit``: its first and end bit (absolute)."""
        bits = np.unpackbits(self.units.view(np.uint8), bitorder="little")
        zeros = np.flatnonzero(bits[start_bit:] == 0)
        if zeros.size <= k:
            return start_bit, start_bit
        begin = start_bit + (int(zeros[k - 1]) + 1 if k > 0 else 0)
        return begin, start_bit + int(zeros[k])
