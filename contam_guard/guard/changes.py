"""A ``--diff``/``--staged`` scan also checks the change for the guard weakened in it.

A pull request that removes a registered set, raises a threshold, disables a rule or allowlists
dozens of findings at once would otherwise scan clean: the guard checks the data against the
guard's files as the change leaves them. So the manifest, the config and the allowlist are read
as they were before the range (BASE, or HEAD for ``--staged``) and as it leaves them (HEAD, or
the index), each with the real loaders (a keyed manifest is opened with its key when the key is
set), and compared (``guard_compare``). What weakens the guard is a finding of its own: it fails
the scan (exit 1) and lists every change, so that a reviewer looks at them; teams also protect
these files with CODEOWNERS.

To accept such a change deliberately, after review: scan again with ``--accept-guard-change
DIGEST`` (the Action's ``accept-guard-change`` input), DIGEST being the one the report prints.
It names exactly the listed changes: any further weakening changes the digest and fails again.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from contam_guard.core.allowlist import Allowlist
from contam_guard.core.config import CONFIG_NAME, GUARD_DIR, MANIFEST_NAME, Config, LoadedConfig, load_config
from contam_guard.core.weakenings import ACCEPT_OPTION as ACCEPT_OPTION  # noqa: PLC0414 (importable from here too)
from contam_guard.core.weakenings import GuardChanges, Weakening, digest_of
from contam_guard.errors import ContamGuardError
from contam_guard.guard.compare import allowlist_changes, config_changes, manifest_changes
from contam_guard.io import git
from contam_guard.io.keys import unlocked
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest

_T = TypeVar("_T")


@dataclass(frozen=True)
class _Side:
    """One end of the range: a commit, the index (``rev`` None), or nothing (no commit yet)."""

    root: Path
    rev: str | None
    exists: bool = True

    def spec(self, path: str) -> str:
        return f"{self.rev}:{path}" if self.rev is not None else f":{path}"

    def read(self, path: str) -> bytes | None:
        """The content of ``path`` on this side, or None when it has no such file."""
        if not self.exists:
            return None
        done = subprocess.run(
            ["git", "cat-file", "blob", self.spec(path)], cwd=self.root, capture_output=True, check=False
        )
        return done.stdout if done.returncode == 0 else None

    def files(self, folder: str) -> list[str]:
        if not self.exists:
            return []
        if self.rev is None:
            raw = git.run_git(self.root, ["ls-files", "-z", "--", folder])
        else:
            raw = git.run_git(self.root, ["ls-tree", "-r", "-z", "--name-only", self.rev, "--", folder])
        return [os.fsdecode(name) for name in raw.split(b"\0") if name]

    def describe(self) -> str:
        return "the index" if self.rev is None else self.rev[:12]


def _sides(root: Path, rng: git.Range) -> tuple[_Side, _Side]:
    if rng.staged:
        current = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            cwd=root,
            capture_output=True,
            check=False,
        )
        old = _Side(root, current.stdout.decode("ascii").strip(), exists=current.returncode == 0)
        return old, _Side(root, None)
    base, head = git.endpoints(root, rng)
    return _Side(root, base), _Side(root, head)


def compare(
    loaded: LoadedConfig, rng: git.Range, manifest_path: Path, accepted: Collection[str] = ()
) -> GuardChanges | None:
    """The changes of ``rng`` that weaken the guard (None when it touches none of its files)."""
    root = git.repo_root(Path.cwd())
    old, new = _sides(root, rng)
    if not old.exists or (old.rev is not None and old.rev == new.rev):
        return None  # the first commit adds the guard; nothing was there to weaken
    where = _Paths.of(root, loaded, manifest_path)
    touched = _touched(root, old, new)
    if not any(where.covers(path) for path in touched) or old.read(where.manifest) is None:
        return None  # the guard's files are untouched, or the range adds the guard
    with tempfile.TemporaryDirectory(prefix="contam-guard-guard-") as tmp:
        found: list[Weakening] = []
        sides = ((old, Path(tmp) / "old"), (new, Path(tmp) / "new"))
        read = [
            _readable(found, where.config or "the config", side, _config, side, where, folder)
            for side, folder in sides
        ]
        (old_config, old_file), (new_config, new_file) = (r or (Config(), None) for r in read)
        configs = (old_config, new_config)
        if all(read):
            label = new_file or old_file or "the config"
            found += [Weakening(label, change) for change in config_changes(*configs)]
        found += _manifest(old, new, where, configs, Path(tmp))
        listed = where.allowlist(new_config)
        lists = [
            _readable(found, listed, side, _allowlist, side, where, config, folder)
            for (side, folder), config in zip(sides, configs)
        ]
        if lists[0] is not None and lists[1] is not None:
            found += [Weakening(listed, change) for change in allowlist_changes(lists[0], lists[1])]
    if not found:
        return None
    digest = digest_of(found)
    return GuardChanges(tuple(found), digest, digest in accepted, rng.describe())


def _readable(
    found: list[Weakening], file: str, side: _Side, read: Callable[..., _T], *args: Any
) -> _T | None:
    """``read(*args)``; a file that cannot be read on ``side`` is a change to look at by hand
    (added to ``found``), never a reason to skip the comparison silently."""
    try:
        return read(*args)
    except ContamGuardError as exc:
        problem = str(exc).splitlines()[0]
        found.append(Weakening(file, f"cannot be read at {side.describe()} to compare ({problem})"))
        return None


def _touched(root: Path, old: _Side, new: _Side) -> list[str]:
    ends = ["--cached", str(old.rev)] if new.rev is None else [str(old.rev), str(new.rev)]
    raw = git.run_git(root, ["diff", "--name-only", "-z", "--no-renames", *ends, "--"])
    return [os.fsdecode(name) for name in raw.split(b"\0") if name]


@dataclass(frozen=True)
class _Paths:
    """Where the guard's files are, as paths in the repository."""

    project: str
    """The project root (where the config's relative paths start), "" at the repository's top."""
    config: str | None
    """The config file in use, when there is one."""
    manifest: str

    @classmethod
    def of(cls, root: Path, loaded: LoadedConfig, manifest_path: Path) -> _Paths:
        project = _relative(root, loaded.root) or ""
        config = _relative(root, loaded.source) if loaded.source is not None else None
        manifest = _relative(root, manifest_path) or _join(project, GUARD_DIR, MANIFEST_NAME)
        return cls(project, config, manifest)

    def configs(self) -> list[str]:
        """Where a config may be, in the order it is looked for."""
        found = [self.config] if self.config is not None else []
        found += [_join(self.project, CONFIG_NAME), _join(self.project, GUARD_DIR, CONFIG_NAME)]
        return [*found, _join(self.project, "pyproject.toml")]

    def allowlist(self, config: Config) -> str:
        return _join(self.project, config.guard_dir, config.allowlist.file)

    def covers(self, path: str) -> bool:
        folders = [str(PurePosixPath(self.manifest).parent), _join(self.project, GUARD_DIR)]
        return path in self.configs() or any(path.startswith(folder + "/") for folder in folders)


def _relative(root: Path, path: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def _join(*parts: str) -> str:
    return str(PurePosixPath(*[p for p in parts if p and p != "."]))


def _config(side: _Side, where: _Paths, tmp: Path) -> tuple[Config, str | None]:
    """The config on ``side`` and its path: the first of the usual places holding one (the
    defaults and None if none does)."""
    for path in where.configs():
        data = side.read(path)
        if data is None:
            continue
        copy = tmp / PurePosixPath(path).name
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(data)
        if copy.name == "pyproject.toml" and b"contam-guard" not in data:
            continue
        return load_config(copy).config, path
    return Config(), None


def _allowlist(side: _Side, where: _Paths, config: Config, tmp: Path) -> Allowlist:
    data = side.read(where.allowlist(config))
    copy = tmp / "allowlist.yaml"
    copy.parent.mkdir(parents=True, exist_ok=True)
    if data is None:
        return Allowlist(copy, {})
    copy.write_bytes(data)
    return Allowlist.load(copy)


def _manifest(
    old: _Side, new: _Side, where: _Paths, configs: tuple[Config, Config], tmp: Path
) -> list[Weakening]:
    """The manifest's changes; a manifest that cannot be read on either side is one to look at."""
    loaded_sides: list[tuple[Manifest, dict[str, Any]] | None] = []
    for side, config, name in zip((old, new), configs, ("old", "new")):
        problems: list[Weakening] = []
        read = _readable(
            problems, where.manifest, side, _load_manifest, side, where.manifest, tmp / name, config.key_env
        )
        if problems:
            return problems
        loaded_sides.append(read)
    before, after = loaded_sides
    if before is None:
        return []
    changes = manifest_changes(
        before[0], after[0] if after else None, (before[1], after[1] if after else {}), configs
    )
    return [Weakening(where.manifest, change) for change in changes]


def _load_manifest(
    side: _Side, index: str, tmp: Path, key_env: str
) -> tuple[Manifest, dict[str, Any]] | None:
    """The manifest on ``side`` (its index and every file beside it), loaded as a scan loads it."""
    text = side.read(index)
    if text is None:
        return None
    folder = PurePosixPath(index).parent
    for path in side.files(str(folder)):
        data = side.read(path)
        if data is not None:
            copy = tmp / PurePosixPath(path).relative_to(folder)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(data)
    copy = tmp / PurePosixPath(index).name
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(text)
    try:
        raw = json.loads(text)
    except ValueError:
        raw = {}
    return unlocked(store.load(copy), key_env), raw if isinstance(raw, dict) else {}


__all__ = ["ACCEPT_OPTION", "GuardChanges", "Weakening", "compare", "digest_of"]
