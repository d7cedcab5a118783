"""Reading and writing the manifest: deterministic bytes, atomic writes, every check on load.

A manifest is an index (``manifest.json``) and one binary file per set and view beside it
(``disk.py`` reads them, ``disk_write.py`` writes them). The same golden files always give the
same bytes. A write is committed like a database commits: new files under new names, the index
replaced last, the old files removed after; so a reader, or a writer killed at any point, sees
the old manifest or the new one, whole.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

from contam_guard.errors import ManifestError
from contam_guard.io.manifest import checks, disk
from contam_guard.io.manifest.model import Manifest, Spec
from contam_guard.io.manifest.sealing import SealKey
from contam_guard.io.safe_read import decode_utf8, read_regular

KNOWN_SPECS = checks.KNOWN_SPECS
RESTORE_HINT = checks.RESTORE_HINT
MAX_MANIFEST_BYTES = 1 << 30
"""An index lists files and digests (a few KB per set): a file beyond this is not one."""
_READ_TRIES = 5


def load(
    path: str | os.PathLike[str],
    *,
    spec: Spec | None = None,
    seal: SealKey | None = None,
    without_mac: bool = False,
) -> Manifest:
    """Load and check a manifest: format, schema version, integrity digest, hashing spec, that
    its files are there, of the size the index says, and the cheap checks of every set
    (``consistency.py``). A keyed manifest is read sealed unless ``seal`` opens it
    (``Manifest.unlock`` opens it later; ``without_mac``: even when its index has no MAC yet).
    ``path`` may be a string (the Python API, docs/how-to/engines.md).

    A file missing or not the one the index names, while the index changed meanwhile, was
    replaced by a writer between the two reads: the index is read again (a writer removes old
    files only after the new index is in place, so the next read finds every file)."""
    path = Path(path)
    text = read(path)
    _stop_after_index()
    for _ in range(_READ_TRIES):
        try:
            return parse(path, text, spec=spec, seal=seal, without_mac=without_mac)
        except disk.ChangedError as changed:
            again = read(path)
            if again == text:  # nothing was committed meanwhile: the files are damaged
                if changed.error is not None:
                    raise changed.error from None
                break
            text = again
    raise ManifestError(
        f"{path}: its files do not hold what its index names (changed while being read, or "
        "restored only in part)",
        hint=RESTORE_HINT.format(path=path),
    )


# --- Fault injection, for the concurrency tests only (tests/security/test_round2_manifest.py).
# CONTAM_GUARD_MANIFEST_STOP_AFTER_INDEX=1 stops this process (SIGSTOP) once it has read the
# index and before it opens the files the index names, so that a test can run a writer to the
# end in between and then continue it (SIGCONT): the race a reader meets, made certain.
def _stop_after_index() -> None:
    if os.environ.pop("CONTAM_GUARD_MANIFEST_STOP_AFTER_INDEX", None) == "1":  # once, not in workers
        os.kill(os.getpid(), signal.SIGSTOP)


# --- end of fault injection


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


def parse(
    path: Path,
    raw_text: str,
    *,
    spec: Spec | None = None,
    seal: SealKey | None = None,
    without_mac: bool = False,
) -> Manifest:
    """Check and build the manifest from its index's text (``path`` names it in errors)."""
    return disk.from_index(path, checks.parse_json(path, raw_text), spec, seal, without_mac=without_mac)


def save(path: Path, manifest: Manifest) -> bool:
    """Write ``manifest``: only what changed (new files, then its index, then the old files
    removed); unchanged content leaves every file untouched (False)."""
    from contam_guard.io.manifest import disk_write  # noqa: PLC0415 (a scan writes no manifest)

    return disk_write.write(path, manifest)


# The lock is the operating system's, so it goes with its holder however that ends (a killed
# process leaves no stale lock): flock on POSIX, a byte-range lock of the C runtime on Windows
# (docs/explanation/choices.md, "Platforms": the tests run on Linux only).
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
