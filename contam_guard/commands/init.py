"""``contam-guard init``: create the guard's folder with a commented config and an empty manifest."""

from __future__ import annotations

from pathlib import Path

from contam_guard.atomic import write_text
from contam_guard.config import CONFIG_NAME, DEFAULT_CONFIG_TEXT, GUARD_DIR, MANIFEST_NAME
from contam_guard.errors import ExitCode, HashKeyError
from contam_guard.keys import key_from_env
from contam_guard.manifest import store
from contam_guard.manifest.model import Manifest
from contam_guard.reporting import console


def run(root: Path, *, keyed: bool, key_env: str) -> int:
    guard = root / GUARD_DIR
    config_path = guard / CONFIG_NAME
    manifest_path = guard / MANIFEST_NAME
    guard.mkdir(parents=True, exist_ok=True)
    if not config_path.exists():
        write_text(config_path, DEFAULT_CONFIG_TEXT)
        console.info(f"wrote {config_path}")
    if manifest_path.exists():
        console.info(f"{manifest_path} already exists; left unchanged")
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
