"""``contam-guard init``: create the guard's folder with a commented config and an empty manifest."""

from __future__ import annotations

from pathlib import Path

from contam_guard.atomic import write_text
from contam_guard.config import CONFIG_NAME, DEFAULT_CONFIG_TEXT, GUARD_DIR, MANIFEST_NAME, load_config
from contam_guard.errors import ExitCode, HashKeyError
from contam_guard.keys import key_from_env
from contam_guard.manifest import store
from contam_guard.manifest.model import Manifest
from contam_guard.reporting import console


def run(root: Path, *, keyed: bool, key_env: str) -> int:
    guard = root / GUARD_DIR
    config_path = guard / CONFIG_NAME
    manifest_path = guard / MANIFEST_NAME
    existing = load_config(start=root)
    if existing.source is not None and existing.root.resolve() == root.resolve():
        # The project already has settings here (contam-guard.yaml, .contam-guard/contam-guard.yaml
        # or a [tool.contam-guard] table): keep them, and put the manifest where they say. A new
        # yaml would be found first and silently replace a pyproject table with the defaults.
        manifest_path = existing.manifest_path
        if existing.source.resolve() != config_path.resolve():
            console.info(f"settings: {existing.source} (left as they are)")
    elif not config_path.exists():
        write_text(config_path, DEFAULT_CONFIG_TEXT)
        console.info(f"wrote {config_path}")
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    ignore = manifest_path.parent / ".gitignore"
    if not ignore.exists():
        # The lock file and interrupted writes' temporaries must never be committed.
        write_text(ignore, "*.lock\n.*.tmp\n")
    if manifest_path.exists():
        current = store.load(manifest_path)
        if keyed and current.key_check is None:
            raise HashKeyError(
                f"{manifest_path} already exists and is unkeyed; --keyed cannot change that",
                hint=f"to key it, move it aside (mv {manifest_path} {manifest_path}.old), run "
                "`contam-guard init --keyed` and re-register every set",
            )
        state = "keyed" if current.key_check else "unkeyed"
        console.info(f"{manifest_path} already exists ({state}); left unchanged")
        return ExitCode.CLEAN
    key_check = None
    if keyed:
        key = key_from_env(key_env)
        if key is None:
            raise HashKeyError(
                f"--keyed needs the secret in ${key_env}",
                hint="export it first: export "
                f"{key_env}=$(python -c 'import secrets; print(secrets.token_hex(32))')",
            )
        key_check = key.check
    store.save(manifest_path, Manifest(key_check=key_check))
    console.info(f"wrote {manifest_path} ({'keyed' if keyed else 'unkeyed'}, no sets yet)")
    console.info("next: contam-guard register NAME GOLDEN_FILE... --field question")
    return ExitCode.CLEAN
