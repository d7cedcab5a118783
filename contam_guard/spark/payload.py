"""What every task needs from the driver, broadcast once: where the manifest is, and settings.

A manifest travels as the path of its index and the index's digest, nothing more: each Python
worker reads it from there (format 2: maps its files, as the driver does, so every worker on a
machine shares one copy in the page cache) and checks that the digest is the driver's, so a
``register`` between the driver's read and a worker's is an error, never a silent mix. Workers
are reused between tasks and keep the ``ManifestIndex`` they built (and the rewording rules'
``RewordIndex``), keyed by the digest: a second scan with the same manifest in the same session
builds nothing. The executors must see
the manifest's folder at the driver's path (local and local-cluster masters do; on a cluster,
a shared file system).

A manifest held only in memory (built by a program, never saved) is written once to a
temporary folder of format 2 and travels as that.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from contam_guard.engine.index import ManifestIndex
from contam_guard.errors import ManifestError
from contam_guard.manifest import store
from contam_guard.manifest.model import Manifest
from contam_guard.manifest.sealing import SealKey
from contam_guard.reword.index import RewordIndex
from contam_guard.reword.matching import Scorer
from contam_guard.reword.scan_pass import Bars, scorers_for
from contam_guard.reword.step import PassSettings
from contam_guard.scrub.golden import GoldenNgrams
from contam_guard.text.hashing import HashKey


@dataclass(frozen=True)
class EnginePayload:
    """The broadcast value. ``key`` is the hashing key of a keyed manifest and ``seal`` the key
    that opens its files: they reach the executors like any broadcast (see README, "Run it on
    Spark", on encrypting it in transit)."""

    digest: str
    manifest_path: str
    seal: SealKey | None
    key: HashKey | None
    windows: bool
    batch_chars: int
    reword: PassSettings | None = None
    """The rewording rules' bars when one of them is on: the tasks run their pass too."""


_SAVED: dict[int, tuple[Manifest, Path]] = {}


def payload_for(
    manifest: Manifest,
    key: HashKey | None,
    *,
    windows: bool,
    batch_chars: int,
    reword: PassSettings | None = None,
) -> EnginePayload:
    """The payload of ``manifest`` (read from a file, or saved to a temporary one now)."""
    if manifest.path is None or not manifest.digest:
        manifest = _saved(manifest)
    assert manifest.path is not None
    # Absolute: an executor's working directory is not the driver's.
    where = str(manifest.path.absolute())
    return EnginePayload(manifest.digest, where, manifest.seal, key, windows, batch_chars, reword)


def _saved(manifest: Manifest) -> Manifest:
    """``manifest`` written to a temporary folder (removed when this process ends), and read back."""
    kept = _SAVED.get(id(manifest))
    if kept is None or kept[0] is not manifest:
        folder = Path(tempfile.mkdtemp(prefix="contam-guard-manifest-"))
        atexit.register(shutil.rmtree, folder, True)
        store.save(folder / "manifest.json", manifest)
        kept = (manifest, folder / "manifest.json")
        _SAVED[id(manifest)] = kept
    return store.load(kept[1], seal=manifest.seal)


_INDEXES: dict[str, ManifestIndex] = {}
_MANIFESTS: dict[str, Manifest] = {}
_REWORD: dict[str, RewordIndex] = {}
_SCORERS: dict[tuple[str, float | None], list[Scorer]] = {}
_GOLDEN: dict[tuple[str, int], GoldenNgrams] = {}


def index_of(payload: EnginePayload) -> ManifestIndex:
    """The payload's index, built at most once per Python process and manifest."""
    index = _INDEXES.get(payload.digest)
    if index is None:
        _INDEXES.clear()  # one manifest at a time: a worker never holds two indexes
        _MANIFESTS.clear()
        _REWORD.clear()
        _SCORERS.clear()
        _GOLDEN.clear()
        path = Path(payload.manifest_path)
        manifest = store.load(path, seal=payload.seal)
        if manifest.digest != payload.digest:
            raise ManifestError(
                f"{path}: the manifest changed after the driver read it (or this executor sees "
                "another one at that path)",
                hint="run the scan again; do not register or remove sets while a scan runs",
            )
        index = ManifestIndex.from_manifest(manifest)
        _INDEXES[payload.digest] = index
        _MANIFESTS[payload.digest] = manifest
    return index


def reword_index_of(payload: EnginePayload) -> RewordIndex:
    """The rewording rules' index of the payload's manifest, built once per process (it reads
    the per-item counts only; the views' tables are searched where they are mapped)."""
    index = index_of(payload)
    reword = _REWORD.get(payload.digest)
    if reword is None:
        reword = _REWORD[payload.digest] = RewordIndex.build(_MANIFESTS[payload.digest], index)
    return reword


def scorers_of(payload: EnginePayload, bars: Bars) -> list[Scorer]:
    """The reworded rule's scorers, kept per process and threshold: a scorer keeps the prefix
    filter it built for a large batch (a sort of the whole view), which every task would
    otherwise build again."""
    index = reword_index_of(payload)
    floor = bars.reworded
    scorers = _SCORERS.get((payload.digest, floor))
    if scorers is None:
        scorers = _SCORERS[(payload.digest, floor)] = scorers_for(index, bars)
    return scorers


def golden_of(payload: EnginePayload, n: int) -> GoldenNgrams:
    """The scrub's golden n-grams of the payload's manifest, built once per process."""
    index = index_of(payload)
    golden = _GOLDEN.get((payload.digest, n))
    if golden is None:
        golden = GoldenNgrams.build(index, n)
        _GOLDEN[(payload.digest, n)] = golden
    return golden
