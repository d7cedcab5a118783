"""Atomic file writes: a temporary file in the same folder, fsync, then ``os.replace``.

Readers of the destination see either the old complete file or the new complete file, never a
half-written one, even if the process is killed mid-write. An interrupted write removes its
temporary file: on an exception, and on Ctrl-C or SIGTERM once ``raise_on_signals`` has made
them an exception (``cli.main`` does; only SIGKILL can leave a ``.*.tmp`` behind).

A destination that is a symbolic link is written through: its target is replaced (atomically,
in the target's folder) and the link stays, as a plain ``open(path, "w")`` would do. A
destination that exists but is not writable is refused, as ``open`` would refuse it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import BinaryIO

from contam_guard.errors import ContamGuardError

_DEFERRED = frozenset({signal.SIGINT, signal.SIGTERM})


class Interrupted(BaseException):
    """SIGINT (Ctrl-C) or SIGTERM, raised as an exception so that every cleanup runs.

    A ``BaseException`` like ``KeyboardInterrupt``, so ``except Exception`` does not swallow it;
    but not a ``KeyboardInterrupt``, which typer turns into a silent exit 130 before
    ``cli.main`` could say what happened.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class _Hold:
    """While held, a signal is noted instead of raised (see ``signals_held``)."""

    depth = 0
    pending: int | None = None
    owner = 0
    """The process that installed the handlers (a forked worker inherits them)."""


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    if os.getpid() != _Hold.owner:
        # A worker forked a moment ago, before its pool's initializer took the handlers back:
        # Ctrl-C is the parent's to handle; SIGTERM ends the worker as it would by default.
        if signum == signal.SIGTERM:
            os._exit(128 + signum)
        return
    if _Hold.depth:
        _Hold.pending = signum
        return
    # A second signal during the cleanup ends the process at once (press Ctrl-C twice to force).
    for number in _DEFERRED:
        signal.signal(number, signal.SIG_DFL)
    raise Interrupted(signum)


@contextlib.contextmanager
def raise_on_signals() -> Iterator[None]:
    """Within the block SIGINT and SIGTERM raise ``Interrupted`` (in the main thread; elsewhere
    Python cannot set handlers and nothing changes); the previous handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _Hold.owner = os.getpid()
    previous = {number: signal.signal(number, _raise_interrupted) for number in _DEFERRED}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while a temporary file is created and its name recorded, so that
    the exception they raise always finds the name to clean up; one arriving meanwhile is raised
    at the end. (Python runs signal handlers in the main thread whichever thread the kernel
    picked, so masking signals in this thread would not do: numpy's threads would take them.)"""
    _Hold.depth += 1
    try:
        yield
    finally:
        _Hold.depth -= 1
        if not _Hold.depth and _Hold.pending is not None:
            signum, _Hold.pending = _Hold.pending, None
            _raise_interrupted(signum, None)


def destination(path: Path) -> Path:
    """Where writing ``path`` lands: the target of a symbolic link, else ``path`` itself."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """Yield a binary file to write; on success it replaces ``path`` atomically, else vanishes."""
    path = destination(Path(path))
    folder = path.parent
    if _read_only(path):
        # os.replace would replace a read-only file regardless (only the folder's mode counts):
        # a locked git-annex or a protected DVC object must not be changed behind its owner.
        raise ContamGuardError(
            f"{path}: the file is read-only; nothing was changed",
            hint="make it writable first (git annex unlock, dvc unprotect, chmod u+w), "
            "or write the result to another file",
        )
    tmp: Path | None = None
    try:
        with signals_held():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
            except OSError as exc:
                raise ContamGuardError(f"{path}: cannot write here ({exc.strerror or exc})") from exc
            tmp = Path(tmp_name)
        # mkstemp creates 0600; give the file the mode a plain open() would (or the old file's).
        os.chmod(tmp, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            fault_point("before-fsync", path)
            os.fsync(handle.fileno())
            fault_point("after-fsync", path)
        fault_point("before-replace", path)
        os.replace(tmp, path)
        fault_point("after-replace", path)
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise ContamGuardError(
            f"{path}: could not write ({exc.strerror or exc}); nothing was changed"
        ) from exc
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise


def _read_only(path: Path) -> bool:
    """An existing file we may not write, or that nobody may (no write bit: root ignores modes,
    but a file made read-only for everyone is protected on purpose)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not os.access(path, os.W_OK) or not mode & 0o222


# --- Fault injection, for the crash tests only (tests/security/test_crash_safety.py,
# tests/scrub/test_scrub_kill.py; scrub's commit of its output and log calls it too).
# CONTAM_GUARD_FAULT="STEP@NAME" kills this process with SIGKILL at STEP (before-fsync,
# after-fsync, before-replace, after-replace) of the write of the file named NAME, so a test
# kills exactly where it means to instead of at a moment it hopes for.
_FAULT = os.environ.get("CONTAM_GUARD_FAULT", "")


def fault_point(step: str, path: Path) -> None:
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
    """Write ``text`` (UTF-8) to ``path`` atomically.

    A file name that is not UTF-8 reaches reports as surrogate escapes (``\\udcff``); they are
    written as that backslash text, so a report never fails on the name of what it reports.
    """
    write_bytes(path, text.encode("utf-8", "backslashreplace"))


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path) as handle:
        handle.write(data)
