"""A set's own record of what the index says of it, kept in the header of its ids file.

The index (``manifest.json``) is small JSON that anyone can edit and re-digest; a set's binary
files are written with it, by the same ``register``. So the ids file of each set repeats every
field of the set's index entry that decides what a scan finds (spec, rules, N, template
settings, views and their fields and digests, id field, golden files, version, history), and
every command compares the two when it loads the manifest: an edit of one side alone (a view
removed, N raised, a rule dropped, the spec changed, the digests recomputed) is an error, never
a weaker scan. Only the file listing (``data``: sizes and digests) is not repeated, as a file
cannot hold its own digest; ``data`` is checked against the files themselves.

A set whose ids file has no record was written before records existed: the checks that need
none run instead (``disk.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from contam_guard.io.manifest.digests import golden_set_digest
from contam_guard.io.manifest.model import Spec, all_rules, is_derived
from contam_guard.io.manifest.schema import SetEntry, SetMeta

KEY = "set"
"""The key of the record in an ids file's header."""


def set_record(name: str, spec: Spec, entry: SetEntry, meta: SetMeta) -> dict[str, Any]:
    """The record of set ``name`` (as JSON values: it is compared with a parsed header)."""
    record = {
        "name": name,
        "spec": list(spec.core()),
        "version": entry.version,
        "digest": entry.digest,
        "items": entry.items,
        "history": [h.model_dump(mode="json") for h in entry.history],
        "id_field": meta.id_field,
        "files": [f.model_dump(mode="json") for f in meta.files],
        "rules": sorted(meta.rules),
        "n": meta.n,
        "templates": meta.templates.model_dump(mode="json") if meta.templates is not None else None,
        "views": {
            view: {"field": e.field, "digest": e.digest, "tables": e.tables} for view, e in meta.views.items()
        },
    }
    parsed: dict[str, Any] = json.loads(json.dumps(record))
    return parsed


def differences(recorded: object, expected: dict[str, Any]) -> list[str]:
    """The fields on which a set file's record and the index disagree (sorted; none: agree)."""
    if not isinstance(recorded, dict):
        return ["the record itself"]
    keys = sorted(set(recorded) | set(expected))
    return [key for key in keys if recorded.get(key) != expected.get(key)]


def set_digest(
    ids: Sequence[str], id_field: str | None, views: Mapping[str, str], rules: Sequence[str]
) -> str:
    """A set's digest from its ids, id field, views (name -> view digest) and rules: the rules
    count only when not every rule, and the rewording rules' derived views not at all (they are a
    function of the views it covers; adding them makes no new version)."""
    chosen = None if tuple(sorted(rules)) == all_rules() else tuple(rules)
    registered = [(name, digest) for name, digest in views.items() if not is_derived(name)]
    return golden_set_digest(ids, id_field, registered, chosen)
