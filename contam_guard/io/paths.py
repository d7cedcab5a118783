"""How contam-guard names a path to a person: relative to the project or the working folder."""

from __future__ import annotations

import os
from pathlib import Path


def display_path(path: Path, base: Path | None = None) -> str:
    """``path`` relative to ``base`` (default: cwd) in POSIX style when inside it."""
    # abspath, not resolve: a symlink is named as the user named it, not by its target.
    folder = Path(os.path.abspath(base or Path.cwd()))
    try:
        return Path(os.path.abspath(path)).relative_to(folder).as_posix()
    except ValueError:  # outside: as given, its ``a/../`` folded (a manifest's path joined to its root)
        return os.path.normpath(path)


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
