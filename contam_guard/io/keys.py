"""The secret for keyed hashing: read from an environment variable, checked against the manifest.

The same secret also seals a keyed manifest (``io.manifest.sealing``): the key for
that is derived from it with the manifest's own salt, independently of the hashing keys.
"""

from __future__ import annotations

import os

from contam_guard.core.spec.hashing import HashKey
from contam_guard.errors import HashKeyError
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.manifest.sealing import SealKey


def secret_from_env(variable: str) -> str | None:
    """The secret in ``$variable`` (None when unset or empty); ``HashKeyError`` when unusable."""
    secret = os.environ.get(variable)
    if not secret:
        return None
    try:
        secret.encode("utf-8")
    except UnicodeEncodeError:
        # os.environ holds undecodable bytes as surrogates; the same secret must give the same
        # key on every machine, so only text that is UTF-8 everywhere is accepted.
        raise HashKeyError(
            f"${variable} holds bytes that are not UTF-8 text",
            hint="use a hex secret: python -c 'import secrets; print(secrets.token_hex(32))'",
        ) from None
    if len(secret) < HashKey.MIN_SECRET_CHARS:
        raise HashKeyError(
            f"${variable} is too short ({len(secret)} characters; at least "
            f"{HashKey.MIN_SECRET_CHARS} are needed so the key cannot be guessed)",
            hint="generate one with: python -c 'import secrets; print(secrets.token_hex(32))'",
        )
    return secret


def key_from_env(variable: str) -> HashKey | None:
    """The key in ``$variable`` (None when unset or empty); ``HashKeyError`` when it is unusable."""
    secret = secret_from_env(variable)
    return None if secret is None else HashKey(secret)


def key_for(manifest: Manifest, variable: str) -> HashKey | None:
    """The key the manifest needs: None for an unkeyed manifest, else the one in ``$variable``,
    checked against the manifest's ``key_check``."""
    if manifest.key_check is None:
        return None
    key = key_from_env(variable)
    where = f"{manifest.path}: " if manifest.path is not None else ""
    if key is None:
        raise HashKeyError(
            f"{where}this manifest is keyed, and ${variable} is not set: its hashes cannot be matched",
            hint=f"export {variable}=<the secret used at registration> (in CI: a repository secret)",
        )
    if key.check != manifest.key_check:
        raise HashKeyError(
            f"{where}${variable} does not match the key this manifest was built with",
            hint="use the secret the sets were registered with; to change the key, move the manifest "
            "aside, run `contam-guard init --keyed` with the new key and re-register every set",
        )
    return key


def seal_for(manifest: Manifest, variable: str) -> SealKey | None:
    """The key that opens a keyed manifest (``key_for`` checks the secret first);
    None for a manifest with nothing sealed."""
    if manifest.salt is None:
        return None
    key_for(manifest, variable)
    secret = secret_from_env(variable)
    assert secret is not None  # key_for raised otherwise
    return SealKey.derive(secret, manifest.salt)


def unlocked(manifest: Manifest, variable: str) -> Manifest:
    """``manifest`` opened with the key in ``$variable`` when it is sealed and the variable is
    set (a wrong key is ``HashKeyError``); as it is otherwise (reading its sets then says the
    key is missing)."""
    if not manifest.sealed:
        return manifest
    if not os.environ.get(variable):
        where = f"{manifest.path}: " if manifest.path is not None else ""
        manifest.explain_sealed(
            lambda: HashKeyError(
                f"{where}this manifest is keyed, and ${variable} is not set: its sets are sealed",
                hint=f"export {variable}=<the secret used at registration> (in CI: a repository secret)",
            )
        )
        return manifest
    return manifest.unlock(seal_for(manifest, variable))
