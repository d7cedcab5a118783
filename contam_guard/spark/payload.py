"""What every task needs from the driver, broadcast once: the manifest (hashes only) and settings.

The manifest travels as its canonical JSON text (``manifest.store.dumps``), the same bytes the
manifest file holds. Each Python worker builds the ``ManifestIndex`` from it once and keeps it
for the next tasks (workers are reused between tasks), keyed by the manifest's digest: a second
scan with the same manifest in the same session builds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from contam_guard.engine.index import ManifestIndex
from contam_guard.manifest import store
from contam_guard.manifest.model import Manifest
from contam_guard.scrub.golden import GoldenNgrams
from contam_guard.text.hashing import HashKey


@dataclass(frozen=True)
class EnginePayload:
    """The broadcast value. ``key`` is the hashing key of a keyed manifest: it reaches the
    executors like any broadcast (see README, "Run it on Spark", on encrypting it in transit)."""

    digest: str
    manifest_json: str
    key: HashKey | None
    windows: bool
    batch_chars: int


def payload_for(manifest: Manifest, key: HashKey | None, *, windows: bool, batch_chars: int) -> EnginePayload:
    return EnginePayload(store.content_digest(manifest), store.dumps(manifest), key, windows, batch_chars)


_INDEXES: dict[str, ManifestIndex] = {}
_GOLDEN: dict[tuple[str, int], GoldenNgrams] = {}


def index_of(payload: EnginePayload) -> ManifestIndex:
    """The payload's index, built at most once per Python process and manifest."""
    index = _INDEXES.get(payload.digest)
    if index is None:
        _INDEXES.clear()  # one manifest at a time: a worker never holds two indexes
        _GOLDEN.clear()
        index = ManifestIndex.from_manifest(Manifest.model_validate_json(payload.manifest_json))
        _INDEXES[payload.digest] = index
    return index


def golden_of(payload: EnginePayload, n: int) -> GoldenNgrams:
    """The scrub's golden n-grams of the payload's manifest, built once per process."""
    index = index_of(payload)
    golden = _GOLDEN.get((payload.digest, n))
    if golden is None:
        golden = GoldenNgrams.build(index, n)
        _GOLDEN[(payload.digest, n)] = golden
    return golden
