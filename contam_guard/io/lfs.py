"""Git LFS: recognise a pointer file, and read the object it stands for instead of its text.

A Git LFS pointer (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md) is a small text file,
under 1024 bytes, that stands in git for a large file:

    version https://git-lfs.github.com/spec/v1
    oid sha256:4d7a2146...
    size 12345

The index, every commit, and a clone made without the LFS objects (``actions/checkout`` without
``lfs: true``, ``GIT_LFS_SKIP_SMUDGE=1``) hold only this text. Read as data it is three harmless
lines, so a leak in the real file would pass: every file contam-guard reads goes through
``content_of`` (``io.readers.opener.open_binary``, the Parquet reader) and every blob a diff scan
exports through ``resolve_export``, and a pointer becomes the object's content or an error.

Where the object is: git-lfs keeps objects at ``LocalMediaDir/oid[0:2]/oid[2:4]/oid``, and
``git lfs env`` names that folder (it follows git's ``lfs.storage`` setting and linked
worktrees). The object is read in place, under the file's own name (a symlink in a temporary
folder), so the format and compression are still known from the name. ``git lfs smudge`` is not
used: without the object it downloads (network access from a commit hook), and with
``GIT_LFS_SKIP_SMUDGE`` it prints the pointer even when the object is present (git-lfs 3.3).
Objects are written by git-lfs only after it has checked their hash; the size is checked against
the pointer here.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from contam_guard.errors import InputError

MAX_POINTER_BYTES = 1024
"""The spec: a pointer file is smaller than this."""
_VERSION_LINES = (b"version https://git-lfs.github.com/spec/", b"version https://hawser.github.com/spec/")
_OID = re.compile(r"sha256:([0-9a-f]{64})")
PULL_HINT = (
    "fetch the LFS objects: `git lfs pull` in the clone; in GitHub Actions, check out with "
    "`actions/checkout` and `lfs: true`"
)
INSTALL_HINT = (
    "install git-lfs (e.g. `apt-get install git-lfs`, then `git lfs install`) and run `git lfs pull`; "
    "in GitHub Actions, check out with `actions/checkout` and `lfs: true`"
)


@dataclass(frozen=True)
class Pointer:
    """What a pointer file says: the object's SHA-256 and its size in bytes."""

    oid: str
    size: int

    def describe(self) -> str:
        return f"object sha256:{self.oid[:12]}, {self.size:,} bytes"


def parse_pointer(data: bytes, display: str) -> Pointer | None:
    """The pointer ``data`` holds, or None when it is not one (it must start with the spec's
    version line). A file that starts like a pointer but has no valid ``oid``/``size`` is an
    ``InputError``: it is neither data nor a pointer git-lfs would accept."""
    if len(data) >= MAX_POINTER_BYTES or not data.startswith(_VERSION_LINES):
        return None
    fields: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        fields.setdefault(key, value.strip())
    oid = _OID.fullmatch(fields.get("oid", ""))
    size = fields.get("size", "")
    if oid is None or not size.isdigit():
        raise InputError(
            display,
            "starts like a Git LFS pointer but has no valid `oid sha256:...` and `size` lines",
            hint="restore the file from git (`git checkout -- FILE`), or `git lfs pull`",
        )
    return Pointer(oid.group(1), int(size))


def read_pointer(path: Path, display: str) -> Pointer | None:
    """The pointer the regular file ``path`` is, or None (not a pointer, not a regular file, or
    unreadable: the reader that opens it reports that)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size >= MAX_POINTER_BYTES:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_POINTER_BYTES)
    except OSError:
        return None
    return parse_pointer(data, display)


def pointer_error(display: str, pointer: Pointer, why: str, hint: str = PULL_HINT) -> InputError:
    return InputError(
        display, f"is a Git LFS pointer ({pointer.describe()}), not the file's content: {why}", hint=hint
    )


def _git(cwd: Path, args: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)


def _repo_root(path: Path, display: str, pointer: Pointer) -> Path:
    folder = Path(os.path.realpath(path)).parent
    try:
        proc = _git(folder, ["rev-parse", "--show-toplevel"])
    except FileNotFoundError:
        raise pointer_error(display, pointer, "git is not installed", INSTALL_HINT) from None
    if proc.returncode != 0:
        raise pointer_error(
            display,
            pointer,
            "it is not inside a git repository, so its object cannot be found",
            "scan the real file: check it out where the LFS objects are (`git lfs pull`)",
        )
    return Path(os.fsdecode(proc.stdout.strip()))


def _media_dir(root: Path, display: str, pointer: Pointer) -> Path:
    """Where git-lfs keeps the objects of the repository at ``root``."""
    try:
        proc = _git(root, ["lfs", "env"])
    except FileNotFoundError:
        raise pointer_error(display, pointer, "git is not installed", INSTALL_HINT) from None
    if proc.returncode != 0:
        raise pointer_error(display, pointer, "git-lfs is not installed", INSTALL_HINT)
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(b"=")
        if key.strip() == b"LocalMediaDir" and value.strip():
            return root / os.fsdecode(value.strip())  # absolute in a repository: root is ignored
    raise pointer_error(display, pointer, "`git lfs env` does not name its object folder", INSTALL_HINT)


def object_path(root: Path, pointer: Pointer, display: str) -> Path:
    """The local object ``pointer`` stands for in the repository at ``root``; an ``InputError``
    with the fix when git-lfs is missing or this clone does not have the object."""
    media = _media_dir(root, display, pointer)
    found = media / pointer.oid[:2] / pointer.oid[2:4] / pointer.oid
    try:
        size = os.stat(found).st_size
    except OSError:
        raise pointer_error(display, pointer, "this clone does not have the object") from None
    if size != pointer.size:
        raise pointer_error(
            display,
            pointer,
            f"the local object has {size:,} bytes (corrupt or partly downloaded)",
            "`git lfs fsck` checks the objects; `git lfs pull` fetches them again",
        )
    return found


@contextmanager
def _named(content: Path | None, name: str) -> Iterator[Path]:
    """``content`` (None: empty) under the file name ``name``, in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="contam-guard-lfs-") as tmp:
        link = Path(tmp) / name
        if content is None:
            link.touch()
        else:
            link.symlink_to(content)
        yield link


def pointer_in(handle: BinaryIO, path: Path, size: int, display: str) -> Pointer | None:
    """The pointer the regular file ``path``, open as ``handle`` with ``size`` bytes, is, or None.

    Read with ``pread`` on the open file: its position is left where it is and the file is not
    opened again (a second open could read other bytes, if the file changed meanwhile). A file
    object without a descriptor is read by path."""
    if size >= MAX_POINTER_BYTES:
        return None
    try:
        data = os.pread(handle.fileno(), MAX_POINTER_BYTES, 0)
    except (AttributeError, OSError, ValueError):
        return read_pointer(path, display)
    return parse_pointer(data, display)


@contextmanager
def content_of(path: Path, display: str) -> Iterator[Path]:
    """``path`` itself, or, when it is a Git LFS pointer, a path with the same file name whose
    content is the object's (an ``InputError`` naming the file and the fix when it cannot be)."""
    pointer = read_pointer(path, display)
    if pointer is None:
        yield path
        return
    with object_of(path, display, pointer) as named:
        yield named


@contextmanager
def object_of(path: Path, display: str, pointer: Pointer) -> Iterator[Path]:
    """A path with ``path``'s file name whose content is the object of ``pointer`` (``path``'s)."""
    found = None if pointer.size == 0 else object_path(_repo_root(path, display, pointer), pointer, display)
    with _named(found, path.name) as named:
        yield named


def resolve_export(root: Path, exported: Path, display: str) -> None:
    """Replace ``exported`` (a blob written to a temporary file) by a link to its LFS object when
    the blob is a pointer, so a diff scan reads the content the commit adds."""
    pointer = read_pointer(exported, display)
    if pointer is None:
        return
    exported.unlink()
    if pointer.size == 0:
        exported.touch()
    else:
        exported.symlink_to(object_path(root, pointer, display))


def blob_is_pointer(root: Path, blob: str) -> bool:
    """Whether git's blob ``blob`` is an LFS pointer (read only when it is small enough)."""
    if set(blob) == {"0"}:  # the null id: no blob on this side
        return False
    size = _git(root, ["cat-file", "-s", blob])
    if size.returncode != 0 or int(size.stdout.strip() or b"0") >= MAX_POINTER_BYTES:
        return False
    data = _git(root, ["cat-file", "blob", blob])
    try:
        return data.returncode == 0 and parse_pointer(data.stdout, blob) is not None
    except InputError:
        return True  # malformed: not lines to diff either; the export reports it


__all__ = [
    "MAX_POINTER_BYTES",
    "Pointer",
    "blob_is_pointer",
    "content_of",
    "object_of",
    "object_path",
    "parse_pointer",
    "pointer_in",
    "read_pointer",
    "resolve_export",
]
