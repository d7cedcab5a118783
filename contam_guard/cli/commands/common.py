"""Helpers shared by the subcommands: paths relative to the project, loading the manifest."""

from __future__ import annotations

from pathlib import Path

from contam_guard.core.config import LoadedConfig
from contam_guard.core.opening import old_spec_notice
from contam_guard.io.keys import unlocked
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.paths import display_path as display_path  # noqa: PLC0414 (the commands import it from here)
from contam_guard.report import console


def load_manifest(loaded: LoadedConfig, override: Path | None = None) -> tuple[Path, Manifest]:
    """The manifest, opened with the key when it is keyed and the key is set (a keyed manifest
    read without it shows set names, versions, totals and sizes only); a notice when it is of an
    older spec."""
    path = override or loaded.manifest_path
    manifest = unlocked(store.load(path), loaded.config.key_env)
    if not manifest.spec.is_current(keyed=manifest.key_check is not None):
        console.notice(old_spec_notice(path, manifest))
    return path, manifest
