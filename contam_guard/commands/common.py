"""Helpers shared by the subcommands: paths relative to the project, loading the manifest."""

from __future__ import annotations

import os
from pathlib import Path

from contam_guard.config import LoadedConfig
from contam_guard.keys import unlocked
from contam_guard.manifest import store
from contam_guard.manifest.model import Manifest, Spec
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
    """How a golden file is named inside the manifest: relative to the root, never absolute."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


def load_manifest(loaded: LoadedConfig, override: Path | None = None) -> tuple[Path, Manifest]:
    """The manifest, opened with the key when it is keyed and the key is set (a keyed manifest of
    format 2 read without it shows set names, versions, totals and sizes only); a notice when it
    is of format 1 or of an older spec."""
    path = override or loaded.manifest_path
    manifest = unlocked(store.load(path), loaded.config.key_env)
    if store.is_format1(manifest):
        console.notice(FORMAT1_NOTICE.format(path=path))
    if not manifest.spec.is_current(keyed=manifest.key_check is not None):  # keyed branch: issue 12.4
        console.notice(old_spec_notice(path, manifest))
    return path, manifest


FORMAT1_NOTICE = (
    "{path} is a manifest of format 1 (one JSON file, read whole at every start): it is read as it "
    "is; `contam-guard upgrade` converts it to format 2 (a small index and one file per set and "
    "view, memory-mapped: scans start at once), with no golden file needed"
)


def old_spec_notice(path: Path, manifest: Manifest) -> str:
    """One line: the manifest is used with its older spec, and how to move to the current one."""
    keyed = manifest.key_check is not None
    current = Spec.current(keyed=keyed)
    if (manifest.spec.words, manifest.spec.alnum) == (current.words, current.alnum):
        # Only the keyed function is older (issue 12.4): keyed with AES, before SipHash.
        return (
            f"{path} is keyed with AES (made before SipHash-2-4): its keyed scans cannot use the "
            "compiled prefilter and run several times slower; `contam-guard upgrade` (with the key set) "
            "re-keys it with SipHash-2-4"
        )
    return (
        f"{path} uses normalisation spec {manifest.spec.words}/{manifest.spec.alnum} (text is "
        f"compared under it); `contam-guard upgrade` re-hashes it under {current.words}/"
        f"{current.alnum}, which also sees through invisible characters, fullwidth and NFD text, HTML "
        "entities and tags, and Markdown links"
        + (" (and re-keys it with SipHash-2-4)" if keyed and manifest.spec.hash != current.hash else "")
    )
