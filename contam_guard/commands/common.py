"""Helpers shared by the subcommands: paths relative to the project, loading the manifest."""

from __future__ import annotations

import os
from pathlib import Path

from contam_guard.config import LoadedConfig
from contam_guard.core.opening import old_spec_notice
from contam_guard.keys import unlocked
from contam_guard.manifest import store
from contam_guard.manifest.model import Manifest
from contam_guard.reporting import console


def display_path(path: Path, base: Path | None = None) -> str:
    """``path`` relative to ``base`` (default: cwd) in POSIX style when inside it."""
    # abspath, not resolve: a symlink is named as the user named it, not by its target.
    folder = Path(os.path.abspath(base or Path.cwd()))
    try:
        return Path(os.path.abspath(path)).relative_to(folder).as_posix()
    except ValueError:
        return os.fspath(path)


def manifest_display(path: Path, root: Path) -> str:
    """How a golden file is named inside the manifest: relative to the root (POSIX style), with
    ``..`` when it lies outside it; never absolute. Not by its bare name: scans leave the golden
    files out, and a bare name would leave out the repository's own file of that name."""
    resolved, base = path.resolve(), root.resolve()
    try:
        return resolved.relative_to(base).as_posix()
    except ValueError:
        pass
    try:
        return Path(os.path.relpath(resolved, base)).as_posix()
    except ValueError:  # on another drive (Windows): no relative path leads there
        return path.name


def load_manifest(loaded: LoadedConfig, override: Path | None = None) -> tuple[Path, Manifest]:
    """The manifest, opened with the key when it is keyed and the key is set (a keyed manifest
    read without it shows set names, versions, totals and sizes only); a notice when it is of an
    older spec."""
    path = override or loaded.manifest_path
    manifest = unlocked(store.load(path), loaded.config.key_env)
    if not manifest.spec.is_current(keyed=manifest.key_check is not None):
        console.notice(old_spec_notice(path, manifest))
    return path, manifest
