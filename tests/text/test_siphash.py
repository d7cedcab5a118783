"""SipHash-2-4, the keyed function of keyed manifests: the reference implementation's test
vectors, then the compiled and numpy kernels and ``HashKey`` against a pure-Python SipHash."""

from __future__ import annotations

import hashlib
import pickle
from types import ModuleType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.spec import pure_kernels
from contam_guard.core.spec.hashing import SIPHASH_SPEC, HashKey
from tests.text.siphash_reference import VECTORS, siphash24, siphash24_of_hash

compiled: ModuleType = pytest.importorskip("contam_guard._native")
MODULES = [pytest.param(compiled, id="compiled"), pytest.param(pure_kernels, id="numpy")]
REFERENCE_KEY = bytes(range(16))
SECRET = "a-long-secret-that-only-the-eval-team-holds-0123"
U64 = np.uint64


def key_words(key: bytes) -> np.ndarray:
    return np.frombuffer(key, dtype="<u8").astype(U64)


def test_the_python_siphash_gives_the_reference_vectors() -> None:
    """All 64 vectors (messages of 0 to 63 bytes): the reference the kernels are checked against."""
    got = [siphash24(REFERENCE_KEY, bytes(range(i))).to_bytes(8, "little").hex() for i in range(64)]
    assert got == VECTORS


@pytest.mark.parametrize("mod", MODULES)
def test_the_kernels_give_the_reference_vector_of_an_8_byte_message(mod: ModuleType) -> None:
    message = np.frombuffer(bytes(range(8)), dtype="<u8").astype(U64)
    out = np.zeros(1, dtype=U64)
    mod.siphash24(key_words(REFERENCE_KEY), message, out)
    assert int(out[0]).to_bytes(8, "little").hex() == VECTORS[8]


@pytest.mark.parametrize("mod", MODULES)
@settings(max_examples=80, deadline=None)
@given(
    key=st.binary(min_size=16, max_size=16),
    values=st.lists(st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**63, 2**64 - 1]), max_size=40),
)
def test_the_kernels_equal_the_python_siphash(mod: ModuleType, key: bytes, values: list[int]) -> None:
    hashes = np.array(values, dtype=U64)
    out = np.full(len(values) + 3, 0xDEADBEEF, dtype=U64)  # the slots past the input stay alone
    mod.siphash24(key_words(key), hashes, out)
    assert out[: len(values)].tolist() == [siphash24_of_hash(key, v) for v in values]
    assert out[len(values) :].tolist() == [0xDEADBEEF] * 3


@pytest.mark.parametrize("mod", MODULES)
def test_the_output_may_be_the_input(mod: ModuleType) -> None:
    values = np.random.default_rng(7).integers(0, 2**64 - 1, 300, dtype=U64, endpoint=True)
    expected = np.empty_like(values)
    mod.siphash24(key_words(REFERENCE_KEY), values, expected)
    mod.siphash24(key_words(REFERENCE_KEY), values, values)
    assert values.tolist() == expected.tolist()


def test_compiled_and_numpy_agree_on_many_hashes() -> None:
    rng = np.random.default_rng(12)
    values = rng.integers(0, 2**64 - 1, 200_000, dtype=U64, endpoint=True)
    key = key_words(rng.bytes(16))
    by_c, by_numpy = np.empty_like(values), np.empty_like(values)
    compiled.siphash24(key, values, by_c)
    pure_kernels.siphash24(key, values, by_numpy)
    assert np.array_equal(by_c, by_numpy)
    assert np.unique(by_c).size == values.size  # a permutation-like spread, no collapse


@pytest.mark.parametrize("variant", ["scalar", "avx2", "avx512"])
def test_every_compiled_loop_equals_the_python_siphash(variant: str) -> None:
    """The compiled module runs the widest SipHash loop the CPU has (chosen at import); each loop
    this CPU can run gives the reference's hashes, at every length (the vector loops' tails)."""
    rng = np.random.default_rng(5)
    key = rng.bytes(16)
    for size in (0, 1, 3, 7, 8, 9, 17, 64, 1001):
        values = rng.integers(0, 2**64 - 1, size, dtype=U64, endpoint=True)
        out = np.full(size, 7, dtype=U64)
        if not compiled.siphash24_variant(variant, key_words(key), values, out):
            pytest.skip(f"this CPU (or build) has no {variant} loop")
        assert out.tolist() == [siphash24_of_hash(key, int(v)) for v in values]
    assert compiled.siphash_simd in ("scalar", "avx2", "avx512")


def test_a_hashkey_applies_siphash_under_a_key_derived_from_the_secret() -> None:
    derived = hashlib.blake2b(SECRET.encode(), digest_size=16, person=b"cg-siphash24-key").digest()
    values = np.random.default_rng(3).integers(0, 2**64 - 1, 50, dtype=U64, endpoint=True)
    assert HashKey(SECRET).apply(values).tolist() == [siphash24_of_hash(derived, int(v)) for v in values]
    assert HashKey(SECRET).apply(np.zeros(0, dtype=U64)).size == 0


def test_a_key_check_tells_secrets_apart_and_a_key_gives_the_keyed_spec() -> None:
    key = HashKey(SECRET)
    assert key.check == "cc13ad8aa082a15b"  # the same secret: the same check, on every machine
    assert HashKey("b" * 40).check != key.check
    assert key.hash_spec == SIPHASH_SPEC and key.kernel_key.size == 2


def test_a_hashkey_holds_no_secret() -> None:
    """A key travels (a Spark broadcast pickles it): it carries derived keys, never the secret."""
    key = HashKey(SECRET)
    data = pickle.dumps(key)
    assert SECRET.encode() not in data and SECRET not in repr(key)
    values = np.arange(10, dtype=U64)
    assert pickle.loads(data).apply(values).tolist() == key.apply(values).tolist()
