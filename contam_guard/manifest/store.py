"""Reading and writing the manifest: deterministic bytes, atomic writes, every check on load.

A manifest is read in either format (``disk.py``: format 2, an index and binary files;
``format1.py``: one JSON file, read until ``contam-guard upgrade`` converts it) and always
written in format 2. The same golden files always give the same bytes.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from contam_guard.errors import ManifestError
from contam_guard.manifest import checks, disk
from contam_guard.manifest.model import FORMAT1_SCHEMA, Manifest, Spec
from contam_guard.manifest.sealing import SealKey
from contam_guard.safe_read import decode_utf8, read_regular

KNOWN_SPECS = checks.KNOWN_SPECS
RESTORE_HINT = checks.RESTORE_HINT
MAX_MANIFEST_BYTES = 1 << 30
"""A format-1 manifest of every common benchmark is a few hundred MB; a file beyond this is not one."""
_READ_TRIES = 3


def load(path: str | os.PathLike[str], *, spec: Spec | None = None, seal: SealKey | None = None) -> Manifest:
    """Load and check a manifest: format, schema version, integrity digest, hashing spec, and
    (format 2) that its files are there, of the size the index says. A keyed manifest of format
    2 is read sealed unless ``seal`` opens it (``Manifest.unlock`` opens it later). ``path`` may
    be a string (the Python API, README "Run it on Spark")."""
    path = Path(path)
    for _ in range(_READ_TRIES):
        try:
            return parse(path, read(path), spec=spec, seal=seal)
        except disk.ChangedError:
            continue  # a file was replaced while it was read: read the index again
    raise ManifestError(
        f"{path}: its files do not hold what its index names (changed while being read, or "
        "restored only in part)",
        hint=RESTORE_HINT.format(path=path),
    )


def read(path: Path) -> str:
    """The manifest file's text: a regular file (a FIFO or a device is an error, never a hang),
    bounded, UTF-8."""
    try:
        data = read_regular(path, what="manifest", limit=MAX_MANIFEST_BYTES, error=ManifestError)
    except FileNotFoundError:
        raise ManifestError(
            f"{path}: no manifest here", hint="run `contam-guard init`, then `contam-guard register`"
        ) from None
    return decode_utf8(data, path, "manifest", ManifestError)


def parse(path: Path, raw_text: str, *, spec: Spec | None = None, seal: SealKey | None = None) -> Manifest:
    """Check and build the manifest from its index's text (``path`` names it in errors)."""
    raw = checks.parse_json(path, raw_text)
    if raw["schema_version"] == FORMAT1_SCHEMA:
        from contam_guard.manifest import format1  # noqa: PLC0415 (read until `upgrade`)

        return format1.from_raw(path, raw, spec)
    return disk.from_index(path, raw, spec, seal)


def save(path: Path, manifest: Manifest) -> None:
    """Write ``manifest`` in format 2: only what changed (its files, then its index); unchanged
    content leaves every file untouched."""
    from contam_guard.manifest import disk_write  # noqa: PLC0415 (a scan writes no manifest)

    disk_write.write(path, manifest)


def is_format1(manifest: Manifest) -> bool:
    return manifest.schema_version == FORMAT1_SCHEMA


# The lock is the operating system's, so it goes with its holder however that ends (a killed
# process leaves no stale lock): flock on POSIX, a byte-range lock of the C runtime on Windows
# (README, "Platforms": the tests run on Linux only).
if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        """Closing the file releases a flock."""


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the manifest (its index and its files) for a read-modify-write;
    fail fast if taken."""
    lock_path = path.with_name(path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _lock(fd):
            raise ManifestError(
                f"{path}: another contam-guard is changing this manifest right now",
                hint="wait for it to finish, then run this command again",
            )
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
