"""The manifest: hashes, counts and digests of registered golden sets, never their text.

One JSON file, written deterministically (sorted keys, no timestamps, no absolute paths,
trailing newline) so that it can be committed and diffed. Arrays of hashes and counts are
stored as base64 of little-endian numpy arrays, one string per line.

Per set: a version that grows when its content changes, a content digest, the version history,
and one *view* per registered text field (``question``, ``answer``, ...). Per view and item:
the word count, the alnum-view length, the 5-gram hashes in order and the 50-character window
hashes in order; that is all the engine needs to compute every rule.
"""

from __future__ import annotations

import base64
from functools import cached_property
from typing import Annotated, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from contam_guard.text import normalise
from contam_guard.text.hashing import GRAM_N, HASH_SPEC, HASH_SPECS, SIPHASH_SPEC, WINDOW_CHARS

SCHEMA_VERSION = 1
MANIFEST_FORMAT = "contam-guard-manifest"
MAX_COUNT = 2**31 - 1
"""Counts and versions are 32-bit in the arrays; a larger (or negative) one was not written by us."""
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Version = Annotated[int, Field(ge=1, le=MAX_COUNT)]


def encode_array(array: NDArray[np.generic], dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def decode_array(text: str, dtype: str) -> NDArray[np.generic]:
    return np.frombuffer(base64.b64decode(text.encode("ascii"), validate=True), dtype=dtype)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Spec(_Frozen):
    """How text was normalised and hashed. Text is always hashed under the manifest's own spec
    (``text()``): version 1 manifests keep working with version 1 until ``contam-guard
    upgrade``; a spec this contam-guard does not know is an error, never a silent rehash.

    ``hash`` is ``cg-poly64-v1`` for an unkeyed manifest, ``cg-poly64-v1+siphash24`` for a keyed
    one; a keyed manifest made before SipHash records ``cg-poly64-v1`` with its ``key_check``
    (its hashes went through AES) and is read as it is until ``contam-guard upgrade``."""

    words: str = normalise.CURRENT.words_name
    alnum: str = normalise.CURRENT.alnum_name
    hash: str = HASH_SPEC
    gram_n: int = GRAM_N
    window_chars: int = WINDOW_CHARS
    unicode: str = normalise.UNICODE_VERSION

    def core(self) -> tuple[str, str, str, int, int]:
        """The parts that must match exactly (the Unicode version only warns)."""
        return (self.words, self.alnum, self.hash, self.gram_n, self.window_chars)

    def known(self) -> bool:
        """Whether this contam-guard can hash text under this spec."""
        return (
            normalise.spec_named(self.words, self.alnum) is not None
            and self.hash in HASH_SPECS
            and (self.gram_n, self.window_chars) == (GRAM_N, WINDOW_CHARS)
        )

    @classmethod
    def current(cls, *, keyed: bool) -> Spec:
        """The spec new manifests get, keyed or not."""
        return cls(hash=SIPHASH_SPEC if keyed else HASH_SPEC)

    def is_current(self, *, keyed: bool) -> bool:
        """Whether new manifests (keyed or not, as this one is) get this spec (else
        ``contam-guard upgrade`` converts it)."""
        return self.core() == Spec.current(keyed=keyed).core()

    def text(self) -> normalise.TextSpec:
        """The normalisation to hash text with, to compare it with this manifest's hashes."""
        spec = normalise.spec_named(self.words, self.alnum)
        if spec is None or not self.known():
            raise ValueError(f"unknown normalisation/hash spec {self.core()}")
        return spec


class View(_Frozen):
    """One text field of a golden set, hashed. Arrays are base64 (little-endian)."""

    field: str
    digest: str
    words: str = Field(description="int32 word count per item")
    alnum_chars: str = Field(description="int32 length of the alnum view per item")
    grams: str = Field(description="uint64 5-gram hashes, items concatenated in order")
    windows: str = Field(description="uint64 50-character window hashes, items concatenated")

    @cached_property
    def word_counts(self) -> NDArray[np.int64]:
        return decode_array(self.words, "<i4").astype(np.int64)

    @cached_property
    def alnum_counts(self) -> NDArray[np.int64]:
        return decode_array(self.alnum_chars, "<i4").astype(np.int64)

    @cached_property
    def gram_hashes(self) -> NDArray[np.uint64]:
        return decode_array(self.grams, "<u8").astype(np.uint64)

    @cached_property
    def window_hashes(self) -> NDArray[np.uint64]:
        return decode_array(self.windows, "<u8").astype(np.uint64)

    @property
    def gram_counts(self) -> NDArray[np.int64]:
        return np.maximum(self.word_counts - (GRAM_N - 1), 0)

    @property
    def window_counts(self) -> NDArray[np.int64]:
        return np.maximum(self.alnum_counts - (WINDOW_CHARS - 1), 0)


class GoldenFile(_Frozen):
    """A golden file as registered: its path (relative to the project root, POSIX style; only
    the file name when it lies outside the root) and how many items it gave."""

    path: str
    items: Count


class SetVersion(_Frozen):
    version: Version
    digest: str
    items: Count


class GoldenSet(_Frozen):
    version: Version
    digest: str
    id_field: str | None
    files: list[GoldenFile]
    ids: list[str]
    views: dict[str, View]
    history: list[SetVersion]
    n: Annotated[int, Field(ge=5, le=1_000_000)] | None = None
    """The GPT-3 rule's N for this set (``register --n``; text written without spaces gets its
    own default, ``rules.gpt3.default_n``); None: the rule's setting. Not content: changing it
    keeps the version."""

    @model_serializer(mode="wrap")
    def _without_default_n(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # A set without its own n is written as before n existed: same bytes, same digests.
        data: dict[str, object] = handler(self)
        if data.get("n") is None:
            data.pop("n", None)
        return data

    @property
    def items(self) -> int:
        return len(self.ids)

    def test_index(self) -> NDArray[np.int64]:
        """Each item's 0-based position within its own golden file."""
        return np.concatenate(
            [np.arange(f.items, dtype=np.int64) for f in self.files] or [np.zeros(0, np.int64)]
        )


class Manifest(_Frozen):
    format: Literal["contam-guard-manifest"] = "contam-guard-manifest"
    schema_version: Version = SCHEMA_VERSION
    spec: Spec = Spec()
    key_check: str | None = None
    """Identifies the key of a keyed manifest (None: hashes are unkeyed)."""
    sets: dict[str, GoldenSet] = {}
    digest: str = ""
    """Integrity digest over everything above (``store.content_digest``)."""
