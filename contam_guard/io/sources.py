"""What a scan reads: files and folders as given (folders walked), or what a git range adds.

Every front end (``scan``, ``review``, ``sweep``, ``--engine spark``) takes its files from here,
so each reads exactly the same files, and none reads contam-guard's own folder or a registered
golden file.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from contam_guard.errors import GitError, InputError
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.paths import display_path
from contam_guard.io.readers import ReadOptions

if TYPE_CHECKING:
    # Imported where used: a plain scan needs no git, and every module is start-up time a
    # pre-commit hook pays.
    from contam_guard.io import git


@dataclass(frozen=True)
class Source:
    """One input of a scan: a file, the name reports give it, and (for a git range) the lines
    to read."""

    path: Path
    display: str
    """The name shown in reports (relative to where the user ran the command)."""
    lines: frozenset[int] | None = None
    """When set, only records starting on these 1-based lines are scanned (the lines a git diff
    adds); record numbers and line numbers stay those of the whole file."""


def check_readable(sources: Iterable[Source]) -> None:
    """Fail early, before any work, on a path that does not exist."""
    for source in sources:
        if not source.path.exists() and not source.path.is_symlink():
            raise InputError(source.display, "no such file or directory")


@dataclass(frozen=True)
class Excluded:
    """Files a walk or a diff never scans: the guard's own folder and the golden files."""

    guard_dir: Path
    golden: dict[tuple[int, int], tuple[str, str]]
    """(device, inode) of each registered golden file -> its absolute path (symlinks not
    resolved) and its set."""
    root: Path | None = None
    patterns: tuple[str, ...] = ()
    """``scan.exclude``: fnmatch patterns, of a name (no ``/``) or of the path from ``root``."""

    @classmethod
    def of(cls, root: Path, guard_dir: Path, manifest: Manifest, patterns: Iterable[str] = ()) -> Excluded:
        """For the project at ``root`` with its guard folder, its manifest's golden files and the
        ``scan.exclude`` patterns."""
        golden: dict[tuple[int, int], tuple[str, str]] = {}
        for name, golden_set in manifest.sets.items():
            for golden_file in golden_set.files:
                path = os.path.abspath(root / golden_file.path)
                identity = _identity(path)
                if identity is not None:
                    golden[identity] = (path, name)
        return cls(guard_dir.resolve(), golden, Path(os.path.abspath(root)), tuple(patterns))

    def why(self, path: Path) -> str | None:
        """Why ``path`` is not scanned, or None when it is.

        A golden file is left out only where it was registered, and only that file (by where it
        lies, and by device and inode: another file of its name is scanned). A symlink (or a
        folder link) in the data that leads to it is scanned: a training pipeline reading the
        data folder reads the test set through it, so that is a leak to report, not a file to
        skip."""
        if path.resolve().is_relative_to(self.guard_dir):
            return "contam-guard's own folder"
        identity = _identity(path)
        found = self.golden.get(identity) if identity is not None else None
        if found is not None and found[0] == os.path.abspath(path):
            return f"a golden file of set {found[1]!r}"
        pattern = self.pattern_of(path)
        if pattern is not None:
            return f"excluded by scan.exclude {pattern!r}"
        return None

    def pattern_of(self, path: Path) -> str | None:
        """The first ``scan.exclude`` pattern that names ``path``, or None."""
        if not self.patterns:
            return None
        absolute = Path(os.path.abspath(path))
        relative = None
        if self.root is not None and absolute.is_relative_to(self.root):
            relative = absolute.relative_to(self.root).as_posix()
        for pattern in self.patterns:
            if "/" in pattern.rstrip("/"):
                if relative is not None and fnmatch.fnmatchcase(relative, pattern.strip("/")):
                    return pattern
            elif fnmatch.fnmatchcase(absolute.name, pattern.rstrip("/")):
                return pattern
        return None


def _identity(path: str | Path) -> tuple[int, int] | None:
    """The (device, inode) of the regular file at ``path`` (None: none there)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def expand(paths: list[Path], excluded: Excluded | None, notices: list[str]) -> list[Source]:
    """Files as given; folders walked (sorted, symlinks followed: ``contam_guard.io.walk``) for the
    data files they hold, leaving out the guard's folder and registered golden files (each golden
    file, loop and broken link with a notice)."""
    from contam_guard.io.readers.notes import SHOWN, listing
    from contam_guard.io.walk import data_files

    if excluded is not None and excluded.patterns:  # a file named on the command line too
        for path in paths:
            pattern = None if path.is_dir() else excluded.pattern_of(path)
            if pattern is not None:
                notices.append(f"{display_path(path)}: excluded by scan.exclude {pattern!r}; not scanned")
        paths = [path for path in paths if path.is_dir() or excluded.pattern_of(path) is None]
    found = data_files(paths, excluded.why if excluded is not None else None)
    notices += [f"{display_path(notice.path)}: {notice.reason}" for notice in found.notices]
    notices += [
        listing(kind, [display_path(path) for path in files[:SHOWN]], len(files))
        for kind, files in found.not_text.items()
    ]
    return [Source(path, display_path(path)) for path in found.files]


@contextmanager
def sources(
    paths: list[Path],
    changes: git.Range | None,
    read: ReadOptions,
    excluded: Excluded,
    notices: list[str],
    skip_unreadable: bool = False,
) -> Iterator[list[Source]]:
    """The sources to scan: ``paths`` walked, or what ``changes`` adds under them. A git range's
    new content is exported to temporary files, which live as long as the context; content that
    cannot be exported (a missing LFS object) is an ``InputError``, or with ``skip_unreadable`` a
    notice, as a file that cannot be read is in the scan itself."""
    if changes is None:
        yield expand(paths, excluded, notices)
        return
    with _changed(changes, paths, read, excluded, notices, skip_unreadable) as found:
        yield found


@contextmanager
def _changed(
    rng: git.Range,
    paths: list[Path],
    read: ReadOptions,
    excluded: Excluded,
    notices: list[str],
    skip_unreadable: bool,
) -> Iterator[list[Source]]:
    """Sources for what ``rng`` adds (under ``paths`` when given). A file named in ``paths``
    that the range does not touch is scanned whole, so `pre-commit run --all-files` audits."""
    from contam_guard.io import git

    root = git.repo_root(Path.cwd())
    selection = git.select(root, rng, whole_file=read.whole_file)
    notices += selection.notices
    named_files, folders = _relative(root, paths)
    keep: list[git.Change] = []
    for change in selection.changes:
        if paths and change.path not in named_files and not _under(change.path, folders):
            continue
        why = excluded.why(root / change.path)
        if why is not None:
            notices.append(f"{change.path}: {why}; not scanned")
            continue
        keep.append(change)
    whole = sorted(name for name in named_files if name not in selection.touched)
    whole = [name for name in whole if excluded.why(root / name) is None]
    if not keep and not whole and not selection.same_commit:
        notices.append(f"no data file changed in {rng.describe()}: nothing to scan")

    def unreadable(exc: InputError) -> None:
        notices.append(f"unreadable, not scanned (--skip-unreadable): {exc}")

    with git.exported(root, keep, unreadable if skip_unreadable else None) as files:
        found = [Source(files[c.path], c.path, c.lines) for c in keep if c.path in files]
        found += [Source(root / name, name) for name in whole]
        yield found


def originals(found: list[Source], changes: git.Range | None) -> dict[str, Path]:
    """The files behind ``found`` that a user would call the inputs, by how to name them: each
    source's own path, and for a git range the working-tree file it stands for (its content was
    exported to a temporary file). What an output must never replace."""
    named = {f"the input {source.display}": source.path for source in found}
    if changes is not None and found:
        from contam_guard.io import git

        root = git.repo_root(Path.cwd())
        for source in found:
            named[f"the input {source.display} (changed in {changes.describe()})"] = root / source.display
    return named


def _relative(root: Path, paths: list[Path]) -> tuple[set[str], list[str]]:
    """Named files and folders as POSIX paths relative to the repository root."""
    files: set[str] = set()
    folders: list[str] = []
    for path in paths:
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise GitError(f"{path}: outside the git work tree {root}") from None
        if path.is_dir():
            folders.append("" if rel == "." else rel)
        else:
            files.add(rel)
    return files, folders


def _under(path: str, folders: list[str]) -> bool:
    return any(folder == "" or path.startswith(folder + "/") for folder in folders)
