"""Atomic file writes: a temporary file in the same folder, fsync, then ``os.replace``.

Readers of the destination see either the old complete file or the new complete file, never a
half-written one, even if the process is killed mid-write.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from contam_guard.errors import ContamGuardError


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """Yield a binary file to write; on success it replaces ``path`` atomically, else vanishes."""
    path = Path(path)
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ContamGuardError(f"{path}: cannot write here ({exc.strerror or exc})") from exc
    tmp = Path(tmp_name)
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would (or the old file's).
        os.chmod(tmp, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            _fault("before-fsync", path)
            os.fsync(handle.fileno())
            _fault("after-fsync", path)
        _fault("before-replace", path)
        os.replace(tmp, path)
        _fault("after-replace", path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ContamGuardError(
            f"{path}: could not write ({exc.strerror or exc}); nothing was changed"
        ) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# --- Fault injection, for the crash tests only (tests/security/test_crash_safety.py,
# tests/scrub/test_scrub_kill.py). CONTAM_GUARD_FAULT="STEP@NAME" kills this process with SIGKILL
# at STEP (before-fsync, after-fsync, before-replace, after-replace) of the write of the file
# named NAME, so a test kills exactly where it means to instead of at a moment it hopes for.
_FAULT = os.environ.get("CONTAM_GUARD_FAULT", "")


def _fault(step: str, path: Path) -> None:
    if _FAULT and f"{step}@{path.name}" == _FAULT:
        os.kill(os.getpid(), signal.SIGKILL)


# --- end of fault injection


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path) as handle:
        handle.write(data)
