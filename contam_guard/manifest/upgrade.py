"""Converting a manifest of format 1 (one JSON file) to format 2 (an index and binary files).

Nothing is hashed again: format 1 holds every array, and format 2 stores the same ones (sorted
into tables), so every digest, version and history entry stays as it was and no golden file is
needed. A keyed manifest gets a new random salt for its seal, and its files are sealed.
"""

from __future__ import annotations

from contam_guard.manifest.model import SCHEMA_VERSION, Manifest
from contam_guard.manifest.sealing import SealKey, new_salt


def to_format2(manifest: Manifest, secret: str | None) -> Manifest:
    """``manifest`` (read from format 1) as it will be written in format 2; ``secret`` (the
    key's secret) seals a keyed one."""
    if manifest.key_check is None:
        return manifest.model_copy(update={"schema_version": SCHEMA_VERSION, "path": None})
    if secret is None:
        raise ValueError("a keyed manifest is converted with its secret")
    salt = new_salt()
    return manifest.model_copy(
        update={
            "schema_version": SCHEMA_VERSION,
            "path": None,
            "salt": salt,
            "seal": SealKey.derive(secret, salt),
        }
    )
