"""An open-addressing hash table from 64-bit hashes to postings (compiled, ``csrc/native.c``; or
the numpy kernels, ``pure_kernels``, which build the same kind of table).

Sorting the manifest's hashes at every start (for binary search) cost seconds for a large
manifest; this table is built in one linear pass and probed in one pass per batch. A slot is one
uint64, the hash's top 32 bits (its tag) over its first posting's 32 (all ones: empty): a probe
compares tags in the slots' cache line and reads the hash itself only where a tag matches. That
is half the memory of (hash, posting) pairs (against 100,000 items, 256 MiB less for the windows
alone), and a table holds fewer than 2**32 - 1 postings. Postings that share a hash are chained
(``chain[p]`` is the next posting with the same hash, -1 at the end), in increasing posting
order.

Beside it, a blocked Bloom filter (``bits``: three bits in one 64-bit word per hash) answers
"certainly not there" from a few hundred kilobytes that stay in cache: the scan's prefilter
asks about every 5-gram and window of the training data, and nearly all the answers are no.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec import native
from contam_guard.core.spec.native import need

BITS_PER_HASH = 16
"""Bloom filter bits per stored hash, at least (sizes round up to a power of two): about 1 in 150
absent hashes pass it and probe the table; measured on the bench corpus against the GSM8K test
manifest, 1 in 187 for 5-grams and 1 in 278 for windows."""
MAX_BITS = 1 << 30

_native = native.module()


def capacity(count: int) -> int:
    """A power of two with at least one and a half times as many slots as entries: probe runs
    stay short (the Bloom filter answers most absent hashes before any probe), and the table of
    a 2-million-window manifest stays at 32 MB instead of 64."""
    return 1 << max(4, (count + count // 2).bit_length())


def build(hashes: NDArray[np.uint64]) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
    """The slots (``capacity`` of them) and chains (one per hash) of a table over ``hashes``. The
    table always has empty slots (``capacity``), which keeps probe runs short; the kernels bound
    every probe to one lap of the table whatever they are given."""
    slots = np.empty(capacity(hashes.size), dtype=np.uint64)
    chain = np.empty(hashes.size, dtype=np.int64)
    _native.table_build(need(hashes, np.uint64), slots, chain)
    return slots, chain


def build_bits(hashes: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """The Bloom filter over ``hashes`` (a power of two of 64-bit words)."""
    want = min(max(BITS_PER_HASH * hashes.size, 1 << 12), MAX_BITS)
    words = 1 << max(0, (want - 1).bit_length() - 6)
    bits = np.empty(words, dtype=np.uint64)
    _native.bits_build(need(hashes, np.uint64), bits)
    return bits


def probe(
    hashes: NDArray[np.uint64],
    slots: NDArray[np.uint64],
    chain: NDArray[np.int64],
    queries: NDArray[np.uint64],
    valid: NDArray[np.bool_],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every (query position, posting) pair whose hashes are equal, for the valid queries."""
    first = np.empty(queries.size, dtype=np.int64)
    total = _native.table_first(
        need(hashes, np.uint64), slots, chain, need(queries, np.uint64), need(valid, np.bool_), first
    )
    where = np.empty(total, dtype=np.int64)
    found = np.empty(total, dtype=np.int64)
    _native.table_fill(chain, first, where, found)
    return where, found
