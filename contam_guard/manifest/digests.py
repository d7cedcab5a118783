"""Digests of views and sets: what ``register`` seals and ``verify`` recomputes.

Kept apart from hashing text so that ``verify`` (run by a hook on every commit) does not load
the text engine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from contam_guard.manifest.model import View
from contam_guard.text.hashing import digest


def view_digest(field: str, arrays: dict[str, str]) -> str:
    """Digest of a view's field name and base64 arrays (``verify`` recomputes it)."""
    return digest(field.encode(), *(arrays[k].encode() for k in sorted(arrays)))


def golden_set_digest(ids: Sequence[str], id_field: str | None, views: dict[str, View]) -> str:
    """A set's digest: its item ids and each view's digest (``verify`` recomputes it). The
    rewording rules' derived views (issue 15, ``reword.views``) are left out: they are a
    function of the views it covers, and adding them must not make a new version."""
    return digest(
        json.dumps({"ids": list(ids), "id_field": id_field}, sort_keys=True).encode("utf-8"),
        *(f"{name}={view.digest}".encode() for name, view in sorted(views.items()) if "~" not in name),
    )
