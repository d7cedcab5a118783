"""The index's canonical text, its digest and MAC, and what sealed files are bound to.

The index is sorted JSON with a two-space indent and a trailing newline; its ``digest`` is over
everything else in it, and a keyed manifest's ``mac`` (``sealing.SealKey.index_mac``) over
everything but ``digest`` and ``mac``. Keys that are absent by default (a set's ``templates``,
the ``mac`` of an unkeyed index) are left out, so that an index written before they existed
keeps its bytes and its digest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from contam_guard.core.spec.hashing import digest
from contam_guard.io.manifest.names import stem_of
from contam_guard.io.manifest.schema import Index

AAD = b"contam-guard manifest 2\0"


def _body(index: Index, exclude: set[str] | None = None) -> dict[str, Any]:
    body = index.model_dump(mode="json", exclude=exclude)
    if body.get("mac", 0) is None:
        del body["mac"]
    for entry in body["sets"].values():
        if entry.get("templates", 0) is None:
            del entry["templates"]
    return body


def _compact(body: dict[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")


def index_digest(index: Index) -> str:
    return digest(_compact(_body(index, {"digest"})))


def mac_body(index: Index) -> bytes:
    """What a keyed index's MAC is computed over: everything but its digest and MAC."""
    return _compact(_body(index, {"digest", "mac"}))


def dumps_index(index: Index) -> str:
    """The index's canonical text: sorted keys, two-space indent, trailing newline."""
    sealed = index.model_copy(update={"digest": index_digest(index)})
    return json.dumps(_body(sealed), sort_keys=True, indent=2) + "\n"


def ids_digest(ids: Sequence[str]) -> str:
    return digest(json.dumps(list(ids)).encode("utf-8"))


def aad(rel: str, expected: str) -> bytes:
    """What a sealed file is bound to: its stem (its name does not count the digest of what it
    seals) and the content digest it holds."""
    return AAD + stem_of(rel).encode("utf-8") + b"\0" + expected.encode("ascii")


def meta_aad(name: str, set_digest: str) -> bytes:
    return AAD + b"meta\0" + name.encode("utf-8") + b"\0" + set_digest.encode("ascii")
