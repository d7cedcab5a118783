"""``contam-guard init``: create the guard's folder with a commented config and an empty manifest."""

from __future__ import annotations

from pathlib import Path

from contam_guard.core.config import CONFIG_NAME, DEFAULT_CONFIG_TEXT, GUARD_DIR, MANIFEST_NAME, load_config
from contam_guard.errors import ExitCode, HashKeyError
from contam_guard.io.atomic import write_text
from contam_guard.io.keys import key_from_env, secret_from_env
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest, Spec
from contam_guard.io.manifest.sealing import SealKey, new_salt
from contam_guard.report import console

GITIGNORE = "*.lock\n.*.tmp\n"
"""The lock file and interrupted writes' temporaries must never be committed."""
GITATTRIBUTES = """\
# The manifest's binary files (hash tables, ids): no text diff, no line-ending changes, no merge.
# Registering a set rewrites only its own files; put them in Git LFS when they grow large
# (docs/reference/manifest.md).
sets/**/*.bin -diff -merge -text
"""


def run(root: Path, *, keyed: bool, key_env: str) -> int:
    """Write what is missing of the config, the manifest and the guard folder's .gitignore and
    .gitattributes.

    Everything that can refuse (no key for ``--keyed``, an existing unkeyed manifest, a broken
    config) is checked before the first write: a refusal leaves the folder as it was.
    """
    guard = root / GUARD_DIR
    config_path = guard / CONFIG_NAME
    manifest_path = guard / MANIFEST_NAME
    existing = load_config(start=root)
    keep_settings = existing.source is not None and existing.root.resolve() == root.resolve()
    if keep_settings:
        # The project already has settings here (contam-guard.yaml, .contam-guard/contam-guard.yaml
        # or a [tool.contam-guard] table): keep them, and put the manifest where they say. A new
        # yaml would be found first and silently replace a pyproject table with the defaults.
        manifest_path = existing.manifest_path
    current = store.load(manifest_path) if manifest_path.exists() else None
    new: Manifest | None = None
    if current is not None and keyed and current.key_check is None:
        raise HashKeyError(
            f"{manifest_path} already exists and is unkeyed; --keyed cannot change that",
            hint=f"to key it, move it aside (mv {manifest_path} {manifest_path}.old), run "
            "`contam-guard init --keyed` and re-register every set",
        )
    if current is None:
        new = _new_manifest(keyed, key_env)

    if keep_settings:
        if existing.source is not None and existing.source.resolve() != config_path.resolve():
            console.info(f"settings: {existing.source} (left as they are)")
    elif not config_path.exists():
        write_text(config_path, DEFAULT_CONFIG_TEXT)
        console.info(f"wrote {config_path}")
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", GITIGNORE), (".gitattributes", GITATTRIBUTES)):
        if not (manifest_path.parent / name).exists():
            write_text(manifest_path.parent / name, text)
    if new is None:
        assert current is not None
        state = "keyed" if current.key_check else "unkeyed"
        console.info(f"{manifest_path} already exists ({state}); left unchanged")
        return ExitCode.CLEAN
    store.save(manifest_path, new)
    console.info(f"wrote {manifest_path} ({'keyed' if keyed else 'unkeyed'}, no sets yet)")
    console.info("next: contam-guard register NAME GOLDEN_FILE... --field question")
    return ExitCode.CLEAN


def _new_manifest(keyed: bool, key_env: str) -> Manifest:
    """An empty manifest; a keyed one hashes with SipHash-2-4 (spec cg-poly64-v1+siphash24) and
    seals its files under a key derived from the secret and a new random salt."""
    if not keyed:
        return Manifest(spec=Spec.current(keyed=False))
    key = key_from_env(key_env)
    secret = secret_from_env(key_env)
    if key is None or secret is None:
        raise HashKeyError(
            f"--keyed needs the secret in ${key_env}; nothing was written",
            hint="export it first: export "
            f"{key_env}=$(python -c 'import secrets; print(secrets.token_hex(32))')",
        )
    salt = new_salt()
    return Manifest(
        spec=Spec.current(keyed=True), key_check=key.check, salt=salt, seal=SealKey.derive(secret, salt)
    )
