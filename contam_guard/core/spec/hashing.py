"""Hashing: words, word n-grams and character windows to 64-bit values, vectorised.

Spec ``cg-poly64-v1``. A word is hashed as a polynomial over its code points,
``sum(c[u] * B**u) mod 2**64``, mixed with its length and finalised with MurmurHash3's fmix64;
an n-gram of words as ``fmix64(sum(w[k] * C**k))``; a 50-character window of the alnum view as
``fmix64(sum(c[u] * B**u))``. Each is a handful of whole-array numpy passes: xxhash (used here
for digests) has no batch interface, and calling any hash once per token from Python would put
a Python loop on the hot path.

Identical inputs always give identical hashes, so nothing is missed; distinct inputs collide
with probability about 2**-64 per pair, which can only add a false candidate, never hide a
match. With a key (spec ``cg-poly64-v1+siphash24``), every hash is passed through SipHash-2-4,
a pseudo-random function of its 8 bytes under a 128-bit key, computed in the compiled kernels
(in one call per batch here, and inline in the scan's prefilter): without the key, the
committed manifest cannot be used to test guesses of the golden text.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np
import xxhash
from numpy.typing import NDArray

from contam_guard.core.spec import native
from contam_guard.core.spec.constants import CHAR_BASE as CHAR_BASE  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import GRAM_N as GRAM_N  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import LEN_MIX as LEN_MIX  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import WINDOW_CHARS as WINDOW_CHARS  # noqa: PLC0414 (importable from here too)
from contam_guard.core.spec.constants import WORD_BASE as WORD_BASE  # noqa: PLC0414 (importable from here too)

HASH_SPEC = "cg-poly64-v1"
"""The hashes of an unkeyed manifest."""
SIPHASH_SPEC = HASH_SPEC + "+siphash24"
"""The hashes of a keyed manifest: each ``cg-poly64-v1`` hash through SipHash-2-4 under the key."""
HASH_SPECS = (HASH_SPEC, SIPHASH_SPEC)
U64 = np.uint64
_MASK = (1 << 64) - 1

HashArray = NDArray[np.uint64]


def fmix64(x: HashArray) -> HashArray:
    """MurmurHash3's 64-bit finaliser, applied element-wise (returns a new array)."""
    x = x ^ (x >> U64(33))
    x = x * U64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> U64(33))
    x = x * U64(0xC4CEB9FE1A85EC53)
    mixed: HashArray = x ^ (x >> U64(33))
    return mixed


@lru_cache(maxsize=8)
def _powers(base: int, count: int) -> HashArray:
    powers = np.full(count, base, dtype=U64)
    powers[0] = 1
    out = np.asarray(np.cumprod(powers, dtype=U64), dtype=U64)
    out.setflags(write=False)
    return out


def power_table(count: int) -> HashArray:
    """CHAR_BASE ** k mod 2**64 for k = 0 .. at least ``count - 1`` (read-only)."""
    # Round up so the cache sees few distinct sizes.
    size = 1 << max(6, int(count - 1).bit_length())
    return _powers(CHAR_BASE, size)


def hash_words(chars: NDArray[np.uint32], lengths: NDArray[np.int64]) -> HashArray:
    """Hash words given as their concatenated code points and their lengths (all >= 1)."""
    if lengths.size == 0:
        return np.zeros(0, dtype=U64)
    starts = np.cumsum(lengths) - lengths
    position_in_word = np.arange(chars.size, dtype=np.int64) - np.repeat(starts, lengths)
    terms = chars.astype(U64) * power_table(int(lengths.max()))[position_in_word]
    raw: HashArray = np.add.reduceat(terms, starts)
    return fmix64(raw ^ (lengths.astype(U64) * U64(LEN_MIX)))


def hash_grams(word_hashes: HashArray, n: int = GRAM_N) -> HashArray:
    """Hash every run of ``n`` consecutive word hashes; ``len(words) - n + 1`` values."""
    count = word_hashes.size - n + 1
    if count <= 0:
        return np.zeros(0, dtype=U64)
    acc = word_hashes[:count].copy()
    factor = 1
    for k in range(1, n):
        factor = (factor * WORD_BASE) & _MASK
        acc += word_hashes[k : k + count] * U64(factor)
    return fmix64(acc)


def hash_windows(chars: NDArray[np.uint32], width: int = WINDOW_CHARS) -> HashArray:
    """Hash every window of ``width`` consecutive code points; ``len(chars) - width + 1`` values.

    Built by doubling (spans of 1, 2, 4, ... characters), so it costs O(log width) passes.
    This is the definition of a window hash; scans use the rolling one-pass kernel
    (``kernel.windows_pass``), which the tests check against it on random text.
    """
    count = chars.size - width + 1
    if count <= 0:
        return np.zeros(0, dtype=U64)
    current = chars.astype(U64)
    spans: dict[int, HashArray] = {1: current} if width & 1 else {}
    span = 1
    while span * 2 <= width:
        shift = pow(CHAR_BASE, span, 1 << 64)
        current = current[: current.size - span] + current[span:] * U64(shift)
        span *= 2
        if width & span:  # keep only the spans the final sum needs, to bound memory
            spans[span] = current
    # Combine the spans named by the binary digits of ``width``, highest first.
    acc = np.zeros(count, dtype=U64)
    offset = 0
    for bit in sorted((s for s in spans if width & s), reverse=True):
        acc += spans[bit][offset : offset + count] * U64(pow(CHAR_BASE, offset, 1 << 64))
        offset += bit
    return fmix64(acc)


class HashKey:
    """A secret for keyed hashing (SipHash-2-4, spec ``SIPHASH_SPEC``), derived from a
    user-supplied string. Only keys derived from the secret are kept, never the secret."""

    MIN_SECRET_CHARS = 32

    def __init__(self, secret: str) -> None:
        material = secret.encode("utf-8")
        derived = hashlib.blake2b(material, digest_size=16, person=b"cg-siphash24-key").digest()
        self._siphash = np.frombuffer(derived, dtype="<u8").astype(U64)
        self._siphash.setflags(write=False)
        self.check = hashlib.blake2b(material, digest_size=8, person=b"cg-key-check").hexdigest()
        """Identifies the secret (so a wrong key is an error, not a silent miss); reveals nothing
        that the keyed hashes themselves would not."""

    hash_spec = SIPHASH_SPEC
    """The hash spec of a manifest keyed with this key."""

    @property
    def kernel_key(self) -> HashArray:
        """The SipHash key (k0, k1), which the compiled prefilter applies itself."""
        return self._siphash

    def apply(self, hashes: HashArray) -> HashArray:
        """Map each hash through SipHash-2-4 under this key."""
        return native.siphash24(self._siphash, np.ascontiguousarray(hashes, dtype=U64))


def digest(*parts: bytes) -> str:
    """A short content digest (xxh3-128, hex) of byte strings, for integrity and identity."""
    hasher = xxhash.xxh3_128()
    for part in parts:
        hasher.update(len(part).to_bytes(8, "little"))
        hasher.update(part)
    return hasher.hexdigest()
