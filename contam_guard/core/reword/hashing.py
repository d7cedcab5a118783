"""Hashes of word lists under a manifest's hash spec and key: what the derived views store.

Words are hashed as the text engine hashes them (``core.spec.hashing.hash_words``, ``hash_grams``:
spec ``cg-poly64-v1``), and a keyed manifest's key is applied to every hash, so the derived
views are keyed like every other hash in the manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec.hashing import GRAM_N, HashKey, hash_grams, hash_words

U64 = NDArray[np.uint64]
I64 = NDArray[np.int64]


def word_hashes(words: Sequence[str]) -> U64:
    """Unkeyed hash of each word (every word non-empty)."""
    if not words:
        return np.zeros(0, dtype=np.uint64)
    joined = "".join(words)
    chars = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    return hash_words(chars, lengths)


@dataclass(frozen=True)
class Grams:
    """The 5-gram hashes of several word lists, concatenated: list ``u``'s grams are
    ``hashes[first[u]:first[u + 1]]``, the gram at offset ``p`` starting at its word ``p``."""

    hashes: U64
    first: I64


def grams_of(lists: Sequence[Sequence[str]], key: HashKey | None) -> Grams:
    """5-gram hashes of each word list (none for a list under 5 words), keyed when ``key``."""
    sizes = np.fromiter((len(w) for w in lists), dtype=np.int64, count=len(lists))
    all_words = word_hashes([word for words in lists for word in words])
    word_first = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(sizes, out=word_first[1:])
    counts = np.maximum(sizes - (GRAM_N - 1), 0)
    first = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    grams = hash_grams(all_words)  # over the concatenation: keep those inside one list
    starts = np.repeat(word_first[:-1], counts) + (
        np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(first[:-1], counts)
    )
    return Grams(_keyed(grams[starts], key), first)


def unigrams_of(lists: Sequence[Sequence[str]], key: HashKey | None) -> tuple[U64, I64]:
    """Each list's distinct word hashes (sorted), concatenated, and where each list starts."""
    sizes = np.fromiter((len(w) for w in lists), dtype=np.int64, count=len(lists))
    hashes = _keyed(word_hashes([word for words in lists for word in words]), key)
    owner = np.repeat(np.arange(len(lists), dtype=np.int64), sizes)
    order = np.lexsort((hashes, owner))
    hashes, owner = hashes[order], owner[order]
    distinct = np.ones(hashes.size, dtype=np.bool_)
    distinct[1:] = (hashes[1:] != hashes[:-1]) | (owner[1:] != owner[:-1])
    hashes, owner = hashes[distinct], owner[distinct]
    first = np.searchsorted(owner, np.arange(len(lists) + 1)).astype(np.int64)
    return hashes, first


def _keyed(hashes: U64, key: HashKey | None) -> U64:
    if key is None or hashes.size == 0:
        return np.ascontiguousarray(hashes, dtype=np.uint64)
    return np.array(key.apply(hashes), dtype=np.uint64)
