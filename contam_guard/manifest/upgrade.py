"""Upgrades of older manifest schemas to the current one, one function per version step.

Schema 1 is the first; a manifest that says it is older than that was not written by any
released contam-guard. When schema 2 arrives, add ``1: _from_1`` to ``UPGRADES``: a function
from a schema-1 dict to a schema-2 dict, so that ``to_current`` can chain the steps.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from contam_guard.errors import ManifestError
from contam_guard.manifest.model import SCHEMA_VERSION

REBUILD_HINT = (
    "`contam-guard register` cannot add to it: move it aside (mv {path} {path}.old), run "
    "`contam-guard init` (with --keyed if it was keyed), then re-register every set "
    "(contam-guard register NAME FILE...)"
)
"""The fix for a manifest this contam-guard cannot extend (an older schema, another spec)."""

UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def to_current(path: Path, raw: dict[str, Any], version: int) -> dict[str, Any]:
    """Upgrade ``raw`` step by step from ``version`` to the current schema (in memory only)."""
    while version < SCHEMA_VERSION:
        step = UPGRADES.get(version)
        if step is None:
            raise ManifestError(
                f"{path}: manifest schema {version} is older than any this contam-guard can read",
                hint=REBUILD_HINT.format(path=path),
            )
        raw = step(raw)
        version += 1
    return raw
