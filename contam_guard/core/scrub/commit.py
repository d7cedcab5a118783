"""Scrub's outputs and its log, committed together or not at all.

A log that lists removals is only true when the scrubbed output is in place, and a scrubbed
output must never be left without its log. So every file of a scrub is first written in full to a
temporary file beside its destination and fsynced (a full disk, ``ulimit -f`` or any other write
error shows here, while nothing has been replaced: every temporary file is removed and the error
says nothing changed). Only then are they renamed into place, the log first, with SIGINT and
SIGTERM held: only a SIGKILL or a power cut between two renames can separate them, and then the
log is there and the input is either the old one or the scrubbed one.

A destination that exists keeps its owner, group and mode: the temporary file gets them before it
replaces the old file (``--in-place`` by root on another user's data must not hand the file to
root). When they cannot be kept (another user's file, replaced by a user who may not give files
away) ``check_keepable`` refuses beforehand, naming the owner.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from contam_guard.errors import ContamGuardError
from contam_guard.io.atomic import destination, fault_point, signals_held


@dataclass(frozen=True)
class _Staged:
    destination: Path
    temporary: Path


def _existing(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def check_keepable(path: Path, display: str) -> None:
    """Refuse (``ContamGuardError``, exit 2) to replace ``path`` when its owner or group could
    not be kept: the replacement would silently belong to whoever ran the scrub."""
    info = _existing(destination(path))
    if info is None or os.geteuid() == 0:  # root can give a file to anyone
        return
    groups = {os.getegid(), *os.getgroups()}
    if info.st_uid != os.geteuid() or info.st_gid not in groups:
        raise ContamGuardError(
            f"{display}: owned by user {info.st_uid}, group {info.st_gid}; replacing it would give "
            f"it to you (user {os.geteuid()}), which scrub does not do; nothing was changed",
            hint="run scrub as the file's owner, or write the result elsewhere with --output",
        )


def _refuse_read_only(path: Path, info: os.stat_result | None) -> None:
    # As ``io.atomic.atomic_writer``: os.replace would replace a read-only file regardless (only the
    # folder's mode counts); a locked git-annex or protected DVC object must stay as it is.
    if info is not None and (not os.access(path, os.W_OK) or not info.st_mode & 0o222):
        raise ContamGuardError(
            f"{path}: the file is read-only; nothing was changed",
            hint="make it writable first (git annex unlock, dvc unprotect, chmod u+w), "
            "or write the result to another file",
        )


def _keep(fd: int, info: os.stat_result | None) -> None:
    """Give the temporary file the old file's owner and mode (or a new file's usual mode)."""
    if info is None:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        return
    if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
        os.fchown(fd, info.st_uid, info.st_gid)
    os.fchmod(fd, stat.S_IMODE(info.st_mode))  # after fchown, which may clear set-id bits


@dataclass
class Together:
    """Files written now and renamed into place together (``together``)."""

    staged: list[_Staged] = field(default_factory=list)

    @contextmanager
    def file(self, path: Path) -> Iterator[BinaryIO]:
        """A file to write in full; it replaces ``path`` (through a symbolic link: its target)
        when every file of the scrub has been written."""
        target = destination(Path(path))
        info = _existing(target)
        _refuse_read_only(target, info)
        with signals_held():  # the name is recorded before a signal can leave it behind
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            except OSError as exc:
                raise ContamGuardError(f"{target}: cannot write here ({exc.strerror or exc})") from exc
            self.staged.append(_Staged(target, Path(name)))
        try:
            with os.fdopen(fd, "wb") as handle:
                yield handle
                handle.flush()
                fault_point("before-fsync", target)
                os.fsync(handle.fileno())
                fault_point("after-fsync", target)
                _keep(handle.fileno(), info)
        except OSError as exc:  # a full disk, `ulimit -f`, an I/O error: nothing is renamed
            raise ContamGuardError(
                f"{target}: could not write ({exc.strerror or exc}); nothing was changed: "
                "no output and no log was written",
                hint="free some space (or raise `ulimit -f`) and run scrub again",
            ) from exc

    def commit(self) -> None:
        done: list[Path] = []
        with signals_held():
            for staged in self.staged:
                fault_point("before-replace", staged.destination)
                try:
                    os.replace(staged.temporary, staged.destination)
                except OSError as exc:  # every file is written in full: only a rename can fail
                    replaced = ", ".join(map(str, done)) or "nothing"
                    raise ContamGuardError(
                        f"{staged.destination}: could not put the scrubbed file in place "
                        f"({exc.strerror or exc}); replaced before it: {replaced}",
                    ) from exc
                done.append(staged.destination)
                fault_point("after-replace", staged.destination)
        self.staged.clear()

    def discard(self) -> None:
        for staged in self.staged:
            staged.temporary.unlink(missing_ok=True)
        self.staged.clear()


@contextmanager
def together() -> Iterator[Together]:
    """Stage files in the block (``Together.file``); at its end rename them all into place, in
    the order they were staged. Any error, or an interruption, removes every temporary file and
    replaces nothing."""
    files = Together()
    try:
        yield files
        files.commit()
    except BaseException:
        files.discard()
        raise


__all__ = ["Together", "check_keepable", "together"]
