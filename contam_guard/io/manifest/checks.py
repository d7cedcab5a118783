"""The checks of a manifest's index before its sets are read: its JSON, its schema version, its spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contam_guard.core.spec.hashing import HASH_SPECS, SIPHASH_SPEC
from contam_guard.core.spec.normalise import SPECS
from contam_guard.errors import ManifestError
from contam_guard.io.manifest.model import MANIFEST_FORMAT, SCHEMA_VERSION, Spec

KNOWN_SPECS = [
    Spec(words=s.words_name, alnum=s.alnum_name, hash=h) for s in reversed(SPECS) for h in HASH_SPECS
]
RESTORE_HINT = "restore it from version control (git checkout -- {path}) or re-register the sets"
REBUILD_HINT = (
    "`contam-guard register` cannot add to it: move it aside (mv {path} {path}.old), run "
    "`contam-guard init` (with --keyed if it was keyed), then re-register every set "
    "(contam-guard register NAME FILE...)"
)
"""The fix for a manifest this contam-guard cannot extend (an older schema, another spec)."""


def parse_json(path: Path, raw_text: str) -> dict[str, Any]:
    """The manifest's JSON object, with its format and an integer schema version."""
    try:
        raw: Any = json.loads(raw_text)
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"{path}:{exc.lineno}: the manifest is not valid JSON ({exc.msg}); it may be truncated",
            hint=RESTORE_HINT.format(path=path),
        ) from None
    except RecursionError:  # the decoder recurses once per nested array or object
        raise ManifestError(
            f"{path}: the manifest is nested too deeply to be one", hint=RESTORE_HINT.format(path=path)
        ) from None
    except ValueError as exc:  # an integer beyond Python's digit limit (4,300 digits)
        raise ManifestError(
            f"{path}: the manifest holds a value no manifest has ({exc})", hint=RESTORE_HINT.format(path=path)
        ) from None
    if not isinstance(raw, dict) or raw.get("format") != MANIFEST_FORMAT:
        raise ManifestError(f'{path}: not a contam-guard manifest (no "format": "{MANIFEST_FORMAT}")')
    version = raw.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ManifestError(f"{path}: the manifest has no integer schema_version")
    if version > SCHEMA_VERSION:
        raise ManifestError(
            f"{path}: written by a newer contam-guard (manifest schema {version}; this "
            f"version reads up to {SCHEMA_VERSION})",
            hint='upgrade contam-guard (README.md, "Install"), or use the one that wrote it',
        )
    if version < SCHEMA_VERSION:
        raise ManifestError(
            f"{path}: manifest schema {version} is older than any this contam-guard reads (it "
            f"reads schema {SCHEMA_VERSION})",
            hint=REBUILD_HINT.format(path=path),
        )
    return raw


def malformed(path: Path, error: ValidationError) -> ManifestError:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return ManifestError(
        f"{path}: the manifest is malformed at {where}: {first['msg']}", hint=RESTORE_HINT.format(path=path)
    )


def integrity_failed(path: Path) -> ManifestError:
    return ManifestError(
        f"{path}: integrity check failed: the content does not match its digest (edited by hand, or damaged)",
        hint=RESTORE_HINT.format(path=path),
    )


def check_spec(path: Path, found: Spec, key_check: str | None, wanted: Spec | None) -> None:
    """Every spec this contam-guard knows is read (text is hashed under the manifest's own);
    ``wanted`` asks for exactly one. Keyed hashes need a key check (else every scan would miss)."""
    if not found.known() or (wanted is not None and found.core() != wanted.core()):
        names = wanted.core() if wanted is not None else " or ".join(str(s.core()) for s in KNOWN_SPECS)
        raise ManifestError(
            f"{path}: built with normalisation/hash spec {found.core()}, but this "
            f"contam-guard uses {names}; the hashes cannot be compared",
            hint=REBUILD_HINT.format(path=path) + "; or install the contam-guard that built it",
        )
    if found.hash == SIPHASH_SPEC and key_check is None:
        raise ManifestError(
            f"{path}: the manifest's hashes are keyed ({SIPHASH_SPEC}) but it records no key_check",
            hint=RESTORE_HINT.format(path=path),
        )
    if found.hash != SIPHASH_SPEC and key_check is not None:
        # A key_check with unkeyed hashes: every scan would hash with a key the hashes never saw.
        raise ManifestError(
            f"{path}: the manifest records a key_check but its hashes are not keyed ({found.hash})",
            hint=RESTORE_HINT.format(path=path),
        )
