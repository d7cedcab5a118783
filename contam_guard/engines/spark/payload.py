"""What every task needs from the driver, broadcast once: where the manifest is, and settings.

A manifest travels as the path of its index and the index's digest, nothing more: each Python
worker reads it from there (format 2: maps its files, as the driver does, so every worker on a
machine shares one copy in the page cache) and checks that the digest is the driver's, so a
``register`` between the driver's read and a worker's is an error, never a silent mix. Workers
are reused between tasks and keep the ``Scanner`` they built, keyed by the digest: a second
task with the same manifest in the same session builds nothing. The executors must see
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

from contam_guard.core.config import Config
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.scanner import Scanner
from contam_guard.core.scrub.golden import GoldenNgrams
from contam_guard.core.spec.hashing import HashKey
from contam_guard.errors import ManifestError
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.manifest.sealing import SealKey


@dataclass(frozen=True)
class EnginePayload:
    """The broadcast value. ``key`` is the hashing key of a keyed manifest and ``seal`` the key
    that opens its files: they reach the executors like any broadcast (see the Spark how-to on
    encrypting it in transit)."""

    digest: str
    manifest_path: str
    seal: SealKey | None
    key: HashKey | None
    config: Config
    """The settings, with any rule overrides: the executors' scanners are the driver's."""
    max_pairs: int

    @property
    def batch_chars(self) -> int:
        return int(self.config.scan.batch_chars)

    @property
    def windows(self) -> bool:
        return bool(self.config.rules.windows)


_SAVED: dict[int, tuple[Manifest, Path]] = {}


def payload_for(scanner: Scanner) -> EnginePayload:
    """The payload of ``scanner``'s manifest (read from a file, or saved to a temporary one now)."""
    manifest = scanner.manifest
    if manifest.path is None or not manifest.digest:
        manifest = _saved(manifest)
    assert manifest.path is not None
    # Absolute: an executor's working directory is not the driver's.
    where = str(manifest.path.absolute())
    return EnginePayload(
        manifest.digest, where, manifest.seal, scanner.key, scanner.config, scanner.max_pairs
    )


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


_SCANNERS: dict[str, Scanner] = {}
_GOLDEN: dict[tuple[str, int], GoldenNgrams] = {}


def scanner_of(payload: EnginePayload) -> Scanner:
    """The driver's scanner, in this Python worker: built at most once per process and manifest
    (workers are reused between tasks: a second task builds nothing, and keeps the rewording
    stage's vocabulary and the in-memory tables the first one built)."""
    scanner = _SCANNERS.get(payload.digest)
    if scanner is None or scanner.config != payload.config or scanner.max_pairs != payload.max_pairs:
        _SCANNERS.clear()  # one manifest at a time: a worker never holds two indexes
        _GOLDEN.clear()
        path = Path(payload.manifest_path)
        manifest = store.load(path, seal=payload.seal)
        if manifest.digest != payload.digest:
            raise ManifestError(
                f"{path}: the manifest changed after the driver read it (or this executor sees "
                "another one at that path)",
                hint="run the scan again; do not register or remove sets while a scan runs",
            )
        scanner = Scanner(manifest, payload.config, payload.key, root=Path.cwd(), max_pairs=payload.max_pairs)
        scanner.large = True  # a task's partition is large against the manifest: build the tables
        _SCANNERS[payload.digest] = scanner
    return scanner


def index_of(payload: EnginePayload) -> ManifestIndex:
    """The payload's index (the scanner's)."""
    return scanner_of(payload).index


def golden_of(payload: EnginePayload, n: int) -> GoldenNgrams:
    """The scrub's golden n-grams of the payload's manifest, built once per process."""
    index = index_of(payload)
    golden = _GOLDEN.get((payload.digest, n))
    if golden is None:
        golden = GoldenNgrams.build(index, n)
        _GOLDEN[(payload.digest, n)] = golden
    return golden
