"""``contam-guard register``: hash a golden set into the manifest."""

from __future__ import annotations

from pathlib import Path

from contam_guard.commands.common import load_manifest, manifest_display
from contam_guard.config import LoadedConfig
from contam_guard.errors import ContamGuardError, ExitCode, InputError
from contam_guard.keys import key_for
from contam_guard.manifest import store
from contam_guard.manifest.build import GoldenSource, build_set
from contam_guard.reporting import console


def register(
    loaded: LoadedConfig,
    name: str,
    files: list[Path],
    fields: list[str],
    id_field: str | None,
    manifest_path: Path | None = None,
) -> int:
    path = manifest_path or loaded.manifest_path
    if not name.strip() or name != name.strip():
        raise ContamGuardError(f"set name {name!r}: a name is needed, without leading or trailing spaces")
    for file in files:
        if not file.exists():
            raise InputError(str(file), "no such file")
    with store.locked(path):
        path, manifest = load_manifest(loaded, path)
        key = key_for(manifest, loaded.config.key_env)
        sources = [GoldenSource(f, manifest_display(f, loaded.root)) for f in files]
        previous = manifest.sets.get(name)
        golden = build_set(sources, fields or [None], id_field, key, previous, manifest.spec.text())
        updated = manifest.model_copy(update={"sets": {**manifest.sets, name: golden}})
        store.save(path, updated)
    if previous is not None and previous.digest == golden.digest:
        console.info(f"{name}: unchanged (version {golden.version}, {golden.items} items)")
    else:
        console.info(
            f"{name}: registered version {golden.version}, {golden.items} items, views: "
            + ", ".join(sorted(golden.views))
        )
    return ExitCode.CLEAN
