"""``contam-guard remove``, ``sets`` and ``verify``: look after the manifest.

None of these hashes text, so none imports the text engine: ``verify`` runs in a pre-commit
hook on every commit and must start fast.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from contam_guard.commands.common import load_manifest
from contam_guard.config import LoadedConfig, Rules
from contam_guard.engine.index import ManifestIndex
from contam_guard.errors import ExitCode, ManifestError
from contam_guard.keys import key_for
from contam_guard.manifest import store
from contam_guard.manifest.digests import golden_set_digest, view_digest
from contam_guard.manifest.model import Manifest
from contam_guard.reporting import console
from contam_guard.rules import RULES


def remove(loaded: LoadedConfig, name: str, manifest_path: Path | None = None) -> int:
    path = manifest_path or loaded.manifest_path
    with store.locked(path):
        path, manifest = load_manifest(loaded, path)
        if name not in manifest.sets:
            known = ", ".join(sorted(manifest.sets)) or "none"
            raise ManifestError(f"{path}: no set named {name!r} (registered: {known})")
        sets = {k: v for k, v in manifest.sets.items() if k != name}
        store.save(path, manifest.model_copy(update={"sets": sets}))
    console.info(f"removed {name}")
    return ExitCode.CLEAN


def too_short(manifest: Manifest, rules: Rules) -> dict[tuple[str, str], dict[str, int]]:
    """How many items of each view each rule cannot see (too few words or characters)."""
    index = ManifestIndex.from_manifest(manifest)
    out = {}
    for target in index.targets:
        span = slice(target.first_item, target.first_item + target.items)
        out[(target.set_name, target.view)] = {
            name: int(np.sum(~rule.sees(index, rules.of(name))[span])) for name, rule in RULES.items()
        }
    return out


def sets(loaded: LoadedConfig, manifest_path: Path | None = None) -> int:
    _, manifest = load_manifest(loaded, manifest_path)
    console.sets_table(manifest, too_short(manifest, loaded.config.rules))
    return ExitCode.CLEAN


def verify(loaded: LoadedConfig, manifest_path: Path | None = None) -> int:
    """Load with every check (array sizes included), check the digests of views and sets, and
    for a keyed manifest that the key in the environment is the one it was built with."""
    path, manifest = load_manifest(loaded, manifest_path)
    hint = store.RESTORE_HINT.format(path=path)
    for name, golden in manifest.sets.items():
        for view_name, view in golden.views.items():
            arrays = {k: getattr(view, k) for k in ("words", "alnum_chars", "grams", "windows")}
            if view_digest(view.field, arrays) != view.digest:
                raise ManifestError(
                    f"{path}: set {name!r} view {view_name!r}: the hashes do not match the view's digest",
                    hint=hint,
                )
        if golden_set_digest(golden.ids, golden.id_field, golden.views) != golden.digest:
            raise ManifestError(
                f"{path}: set {name!r}: the ids and views do not match the set's digest", hint=hint
            )
        if not golden.history or golden.history[-1].digest != golden.digest:
            raise ManifestError(
                f"{path}: set {name!r}: the version history does not end at the current version", hint=hint
            )
    # A keyed manifest is only usable with its key: without this check the verify hook passes
    # while every scan fails (wrong key) or cannot run (no key).
    key_for(manifest, loaded.config.key_env)
    keyed = f"keyed, ${loaded.config.key_env} matches" if manifest.key_check else "unkeyed"
    console.info(f"{path}: OK (schema {manifest.schema_version}, {len(manifest.sets)} set(s), {keyed})")
    return ExitCode.CLEAN
