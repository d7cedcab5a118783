"""What a commit adds: the staged changes (``--staged``) or a commit range (``--diff``).

Only git's plumbing-stable, NUL-separated output is parsed (``git diff --raw -z``), and only the
hunk headers of ``git diff -U0`` (``@@ -a,b +c,d @@``): with no context lines, the new lines
``c .. c+d-1`` of each hunk are exactly the added ones. New content is read from git's object
store by blob id, never from the working tree, so unstaged edits do not leak into a staged scan.

Deleted files are ignored. Renames and copies are not detected (``--no-renames``): a file that
appears at a path is added content there, whatever it was called before (``git mv
golden/test.jsonl data/extra.jsonl`` adds a test set to the training data), so it is scanned
whole, like every added file. A binary or compressed file, any format without lines, and a Git
LFS file (whose lines in git are the pointer's) are scanned whole when they changed; an LFS
pointer is exported as its object's content (``contam_guard.io.lfs``).

A submodule added, moved or moved to another commit adds the files of its own history in
between: they are selected the same way in the submodule's repository (every file of a new or
moved submodule, the changes between the two commits of an updated one), named by their path in
the superproject. That needs the submodule checked out with the new commit; when it is not, the
selection stops (``GitError``, exit 2) naming the submodule and how to scan it, never a silent
pass.
git runs without a shell, with fixed arguments; revisions from the user are checked first.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from contam_guard.errors import GitError, InputError
from contam_guard.io import lfs
from contam_guard.io.readers import detect_format
from contam_guard.io.readers.compression import COMPRESSED_SUFFIXES

LINE_FORMATS = frozenset({"jsonl", "text"})
"""Formats whose records are lines: only the added lines of these are scanned."""
_REGULAR_MODES = frozenset({"100644", "100755"})
_GITLINK = "160000"
"""The mode of a submodule's entry: its "blob" id is a commit of the submodule."""
_MAX_DEPTH = 16
"""Submodules within submodules followed at most this deep."""
_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
SHALLOW_HINT = (
    "the clone is shallow: fetch the history, e.g. `git fetch --unshallow`, or in GitHub Actions "
    "`actions/checkout` with `fetch-depth: 0`"
)


@dataclass(frozen=True)
class Range:
    """What to compare: the index against HEAD (``staged``), or ``base`` against ``head``."""

    staged: bool = False
    base: str = "HEAD"
    head: str = "HEAD"
    merge_base: bool = False
    """``BASE...HEAD``: compare HEAD with the merge base of BASE and HEAD."""

    @classmethod
    def parse(cls, spec: str) -> Range:
        """``BASE``, ``BASE..HEAD`` or ``BASE...HEAD`` (from their merge base)."""
        spec = spec.strip()
        for dots, merge_base in (("...", True), ("..", False)):
            if dots in spec:
                base, head = spec.split(dots, 1)
                return cls(base=base or "HEAD", head=head or "HEAD", merge_base=merge_base)
        return cls(base=spec)

    def describe(self) -> str:
        if self.staged:
            return "the staged changes"
        return f"{self.base}{'...' if self.merge_base else '..'}{self.head}"


@dataclass(frozen=True)
class Change:
    """A changed data file: its path in the repository (POSIX) and what of it to scan."""

    path: str
    blob: str
    """The new content's blob id."""
    lines: frozenset[int] | None
    """Added 1-based line numbers, or None: scan the whole file."""
    submodule: Path | None = None
    """For a file of a submodule: the submodule's work tree, where its blob is read from."""


@dataclass
class Selection:
    """The changed data files of a range, and notes for the user."""

    root: Path
    changes: list[Change] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    """Every path the range touches (added, changed or deleted), data file or not."""
    same_commit: bool = False
    """BASE and HEAD are one commit: there is nothing to compare."""


def run_git(root: Path, args: Sequence[str]) -> bytes:
    """Run ``git ARGS`` in ``root``; its stdout, or ``GitError`` with git's own message."""
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    except FileNotFoundError:
        raise GitError(
            "git is not installed (or not on PATH)", hint="install git, or scan files by path"
        ) from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else f'exit {proc.returncode}'}")
    return proc.stdout


def repo_root(start: Path) -> Path:
    """The top folder of the git work tree holding ``start``."""
    try:
        out = run_git(start, ["rev-parse", "--show-toplevel"])
    except GitError as exc:
        raise GitError(
            f"{start.resolve()}: not inside a git work tree ({exc.message})",
            hint="--staged and --diff read git; run them in a clone, or scan files by path",
        ) from None
    return Path(os.fsdecode(out.strip()))


def _is_shallow(root: Path) -> bool:
    return run_git(root, ["rev-parse", "--is-shallow-repository"]).strip() == b"true"


def resolve(root: Path, rev: str, role: str) -> str:
    """The commit id of ``rev``; a missing one is an error that says how to get it."""
    if not rev or rev.startswith("-"):
        raise GitError(f"{role} {rev!r} is not a revision")
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if proc.returncode == 0:
        return proc.stdout.decode("ascii").strip()
    if _is_shallow(root):
        raise GitError(f"{role} {rev!r} is not in this shallow clone", hint=SHALLOW_HINT)
    raise GitError(
        f"{role} {rev!r} is not a commit in this repository",
        hint="fetch it first (e.g. `git fetch origin BRANCH`), or check the name",
    )


def _merge_base(root: Path, a: str, b: str) -> str:
    proc = subprocess.run(["git", "merge-base", a, b], cwd=root, capture_output=True, check=False)
    if proc.returncode != 0:
        hint = SHALLOW_HINT if _is_shallow(root) else "the two commits share no history"
        raise GitError(f"no merge base between {a[:12]} and {b[:12]}", hint=hint)
    return proc.stdout.decode("ascii").strip()


def endpoints(root: Path, rng: Range) -> list[str]:
    """The revision arguments for ``git diff`` (resolved commit ids)."""
    if rng.staged:
        return ["--cached"]
    head = resolve(root, rng.head, "HEAD")
    base = resolve(root, rng.base, "BASE")
    return [_merge_base(root, base, head) if rng.merge_base else base, head]


def select(root: Path, rng: Range, *, whole_file: bool = False) -> Selection:
    """The data files ``rng`` adds or changes, with the added lines of line-based files (and
    those of the submodules it adds or changes)."""
    selection = Selection(root)
    ends = endpoints(root, rng)
    if not rng.staged and ends[0] == ends[1]:
        selection.notices.append(f"BASE and HEAD are the same commit ({ends[0][:12]}): nothing to scan")
        selection.same_commit = True
        return selection
    _collect(_Where(root, "", rng.describe(), whole_file), ends, selection)
    return selection


@dataclass(frozen=True)
class _Where:
    """The repository being diffed (the superproject, or a submodule's work tree)."""

    repo: Path
    prefix: str
    """Its path in the superproject, with a trailing slash ("" for the superproject)."""
    what: str
    """The range, in the user's words."""
    whole_file: bool
    depth: int = 0


def _collect(where: _Where, ends: list[str], selection: Selection) -> None:
    raw = run_git(
        where.repo, ["diff", "--raw", "-z", "--no-abbrev", "--no-renames", "--no-ext-diff", *ends, "--"]
    )
    for entry in _parse_raw(raw):
        path = where.prefix + entry.path
        selection.touched.add(path)
        if entry.status == "D":
            continue
        if entry.mode == _GITLINK:
            _submodule(where, entry, selection)
            continue
        if detect_format(PurePosixPath(path)) is None:
            continue
        if entry.status == "U":
            raise GitError(f"{path}: unmerged (a merge conflict); resolve it before scanning")
        if entry.mode not in _REGULAR_MODES:
            selection.notices.append(f"{path}: not a regular file in git (mode {entry.mode}); not scanned")
            continue
        lines = None
        if (
            entry.status == "M"
            and _line_based(path, where.whole_file)
            and not any(lfs.blob_is_pointer(where.repo, blob) for blob in (entry.old_blob, entry.blob))
        ):
            lines = _added_lines(where.repo, ends, entry.path)
        selection.changes.append(Change(path, entry.blob, lines, where.repo if where.prefix else None))


def _submodule(where: _Where, entry: _RawEntry, selection: Selection) -> None:
    """Select what the submodule at ``entry`` adds: every file of a new (or moved, or once not a
    submodule) one, the changes between its two commits for an updated one."""
    path = where.prefix + entry.path
    work_tree = where.repo / entry.path
    if where.depth >= _MAX_DEPTH:
        raise GitError(f"{path}: submodules nested more than {_MAX_DEPTH} deep; not followed")
    if not _has_commit(work_tree, entry.blob):
        raise GitError(
            f"{path}: a submodule that {where.what} adds or moves to commit {entry.blob[:12]}, which is "
            "not checked out here: its files were not scanned",
            hint=f"check it out (`git submodule update --init --recursive -- {path}`) and run the "
            f"scan again, or scan its files whole once checked out: `contam-guard scan {path}`",
        )
    updated = entry.status == "M" and entry.old_mode == _GITLINK and _has_commit(work_tree, entry.old_blob)
    old = entry.old_blob if updated else _empty_tree(work_tree)
    inner = _Where(work_tree, path + "/", where.what, where.whole_file, where.depth + 1)
    _collect(inner, [old, entry.blob], selection)


def _has_commit(work_tree: Path, commit: str) -> bool:
    """Whether ``work_tree`` is a checked-out git repository of its own holding ``commit``."""
    if set(commit) == {"0"} or not (work_tree / ".git").exists():
        return False
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=work_tree, capture_output=True, check=False
    )
    if top.returncode != 0 or Path(os.fsdecode(top.stdout.strip())).resolve() != work_tree.resolve():
        return False  # an empty folder: git would answer for the superproject
    found = subprocess.run(
        ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=work_tree, capture_output=True, check=False
    )
    return found.returncode == 0


def _empty_tree(repo: Path) -> str:
    """The id of the empty tree in ``repo``'s hash (SHA-1 or SHA-256)."""
    return run_git(repo, ["hash-object", "-t", "tree", os.devnull]).decode("ascii").strip()


@dataclass(frozen=True)
class _RawEntry:
    status: str
    path: str
    old_blob: str
    blob: str
    mode: str
    old_mode: str


def _parse_raw(raw: bytes) -> Iterator[_RawEntry]:
    """The entries of ``git diff --raw -z --no-renames`` (one path each)."""
    parts = raw.split(b"\0")
    i = 0
    while i < len(parts) and parts[i]:
        meta = parts[i].decode("ascii").lstrip(":").split()
        old_mode, new_mode, old_blob, new_blob, status = meta
        if status[0] in "RC":  # not asked for; kept readable should a config force them
            path = os.fsdecode(parts[i + 2])
            yield _RawEntry("A", path, "0" * len(new_blob), new_blob, new_mode, "000000")
            i += 3
            continue
        yield _RawEntry(status, os.fsdecode(parts[i + 1]), old_blob, new_blob, new_mode, old_mode)
        i += 2


def _line_based(path: str, whole_file: bool) -> bool:
    if whole_file or path.lower().endswith(COMPRESSED_SUFFIXES):
        return False
    return detect_format(PurePosixPath(path)) in LINE_FORMATS


def _added_lines(root: Path, ends: list[str], path: str) -> frozenset[int] | None:
    """The added line numbers of ``path``; None (scan it whole) when git sees it as binary."""
    patch = run_git(
        root,
        ["diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", *ends, "--", path],
    )
    if b"\nBinary files " in patch or patch.startswith(b"Binary files "):
        return None
    lines: set[int] = set()
    for match in _HUNK.finditer(patch):
        start, count = int(match.group(1)), int(match.group(2) or b"1")
        lines.update(range(start, start + count))
    return frozenset(lines)


@contextmanager
def exported(
    root: Path, changes: Sequence[Change], unreadable: Callable[[InputError], None] | None = None
) -> Iterator[dict[str, Path]]:
    """Write each change's new content to a temporary file (keeping its name, so its format is
    detected as usual; a Git LFS pointer becomes a link to its object, or an ``InputError`` with
    the fix); yield ``{repo path: temporary file}``; delete them afterwards.

    With ``unreadable`` (``--skip-unreadable``), a change whose content cannot be had (an LFS
    object this clone does not have) is handed to it and left out instead of raising."""
    with tempfile.TemporaryDirectory(prefix="contam-guard-") as tmp:
        files: dict[str, Path] = {}
        for number, change in enumerate(changes):
            target = Path(tmp) / str(number) / PurePosixPath(change.path).name
            target.parent.mkdir()
            repo = change.submodule or root
            with target.open("wb") as handle:
                proc = subprocess.run(
                    ["git", "cat-file", "blob", change.blob],
                    cwd=repo,
                    stdout=handle,
                    stderr=subprocess.PIPE,
                    check=False,
                )
            if proc.returncode != 0:
                problem = proc.stderr.decode("utf-8", "replace").strip()
                raise GitError(f"{change.path}: cannot read its content from git ({problem})")
            try:
                lfs.resolve_export(repo, target, change.path)
            except InputError as exc:
                if unreadable is None:
                    raise
                unreadable(exc)
                continue
            files[change.path] = target
        yield files


__all__ = [
    "Change",
    "Range",
    "Selection",
    "endpoints",
    "exported",
    "repo_root",
    "resolve",
    "run_git",
    "select",
]
