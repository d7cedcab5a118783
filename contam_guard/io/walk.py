"""Which files a list of paths names: files as given, folders walked.

A folder is walked depth first, each folder's entries in name order, so the result is the sorted
list of the paths found (the order of ``sorted(folder.rglob("*"))``) and the same on every run.
Every file is a candidate, whatever its name: one whose name says nothing is read if its bytes
are text (or an archive, a table...), and left out, listed by kind, if they are data that cannot
hold text (an image, audio, model weights: ``io.readers.sniff``). A folder written by ``datasets``'
``save_to_disk`` is one input (``io.readers.dataset_folder``), not walked into; version control's
own folders (``.git``, ...) are not walked, with a notice.

Symlinks are followed, to folders too: a training pipeline that reads the folder reads what they
point to. So that a walk ends, each folder (by device and inode) is walked once: a link back to a
folder that contains it (a loop), or to a folder walked already, gives a notice naming the link
and is not followed again. A broken link, and anything that is not a file (a FIFO, a socket),
gives a notice; an unlistable folder is an ``InputError``: never a silent gap.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from contam_guard.errors import InputError
from contam_guard.io.readers import SNIFF, detect_format
from contam_guard.io.readers.compression import compression_of
from contam_guard.io.readers.dataset_folder import is_dataset_dict_file, is_dataset_folder
from contam_guard.io.readers.sniff import HEAD_BYTES, sniff

VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
"""Version control's own folders: its objects and history, not the data checked out beside them."""

Excluded = Callable[[Path], "str | None"]
"""Why a path is not to be scanned (a reason for the notice), or None. A folder it excludes is
not entered, without a notice (contam-guard's own folder)."""


@dataclass(frozen=True)
class Notice:
    """Something the walk did not read, and why (for the run's notices)."""

    path: Path
    reason: str


@dataclass
class Walk:
    """The data files found, in order, and the notices of what was left out."""

    files: list[Path] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    not_text: dict[str, list[Path]] = field(default_factory=dict)
    """Files left out because they cannot hold text, by kind (``image/png``: [...])."""


def data_files(paths: Sequence[Path], excluded: Excluded | None = None) -> Walk:
    """The data files ``paths`` name: each path that is not a folder as given (in the order given;
    the reader reports a missing one), each folder's data files (by ``detect_format``) walked in
    sorted order, leaving out what ``excluded`` names (each excluded file with a notice)."""
    walk = Walk()
    walked: dict[tuple[int, int], Path] = {}
    for path in paths:
        if path.is_dir() and not is_dataset_folder(path):
            _walk(path, excluded, walk, walked, ())
        else:
            walk.files.append(path)
    return walk


def _key(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _walk(
    folder: Path,
    excluded: Excluded | None,
    walk: Walk,
    walked: dict[tuple[int, int], Path],
    above: tuple[tuple[int, int], ...],
) -> None:
    """Walk ``folder`` (not walked before); ``above`` holds the folders it lies in."""
    if excluded is not None and excluded(folder) is not None:
        return
    try:
        key = _key(os.stat(folder))
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as exc:
        raise InputError(os.fspath(folder), f"cannot list the folder: {exc.strerror or exc}") from exc
    walked[key] = folder
    for entry in entries:
        path = folder / entry.name
        try:
            info = os.stat(path)  # follows symlinks
        except OSError as exc:
            broken = entry.is_symlink() and not os.path.lexists(os.path.realpath(path))
            problem = "a broken symlink (its target does not exist)" if broken else exc.strerror or str(exc)
            walk.notices.append(Notice(path, f"{problem}; not read"))
            continue
        why = excluded(path) if excluded is not None else None
        if stat.S_ISDIR(info.st_mode):
            if entry.name in VCS_FOLDERS:
                walk.notices.append(Notice(path, "version control's own folder; not read"))
            elif why is None and is_dataset_folder(path):
                walk.files.append(path)  # a datasets folder: one dataset, read by the readers
            else:
                _enter(path, _key(info), excluded, walk, walked, (*above, key))
        elif not stat.S_ISREG(info.st_mode):
            walk.notices.append(Notice(path, "not a regular file (a FIFO, socket or device); not read"))
        elif why is not None:
            walk.notices.append(Notice(path, f"{why}; not scanned"))
        elif is_dataset_dict_file(path):
            continue  # a DatasetDict's list of its splits, which are read as datasets
        else:
            kind = _not_text(path)
            if kind is None:
                walk.files.append(path)
            else:
                walk.not_text.setdefault(kind, []).append(path)


def _not_text(path: Path) -> str | None:
    """What a file whose name says nothing is, when its bytes cannot hold text (else None: the
    readers read it, or say why they cannot)."""
    if detect_format(path) != SNIFF or compression_of(path) != "plain":
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return None  # the reader says what is wrong with it
    return sniff(head, path.name).kind


def _enter(
    path: Path,
    key: tuple[int, int],
    excluded: Excluded | None,
    walk: Walk,
    walked: dict[tuple[int, int], Path],
    above: tuple[tuple[int, int], ...],
) -> None:
    if key in above:
        walk.notices.append(
            Notice(path, f"a symlink loop (it leads back to {walked[key]}, which holds it); not followed")
        )
    elif key in walked:
        walk.notices.append(Notice(path, f"the same folder as {walked[key]}, walked already; not again"))
    else:
        _walk(path, excluded, walk, walked, above)


__all__ = ["Excluded", "Notice", "Walk", "data_files"]
