"""The cheap checks every command runs on a loaded manifest (``verify`` adds the expensive ones).

What a scan trusts must be what ``verify`` accepts: an index edited by hand (a view or rule
removed, N raised, the spec changed, its digest recomputed) is refused by every command, not
only by ``verify``. These checks read the index, the first page of each set file (the headers)
and, for a keyed manifest, its MAC and each set's ids file (sealed, so opened whole: a set's
smallest file).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Sequence
from pathlib import Path

from contam_guard.errors import ManifestError
from contam_guard.io.manifest import binfile, checks, record
from contam_guard.io.manifest.disk_files import ChangedError, Files
from contam_guard.io.manifest.index_text import mac_body
from contam_guard.io.manifest.model import Spec, all_rules, is_derived, uses_windows
from contam_guard.io.manifest.schema import Index, SetEntry, SetMeta
from contam_guard.io.manifest.sealing import SealKey

MAC_HINT = (
    "run `contam-guard upgrade` with the key set: it adds the MAC (and pads the sealed files); "
    "if the manifest was edited, restore it from version control first"
)


def check_headers(files: Files, entry: SetEntry) -> None:
    """Each file's header names the content the index expects (cheap: the first page); a file
    that does not is ``ChangedError`` (replaced while read, or damaged: ``store.load`` tells)."""
    meta = entry.meta()
    expected = {entry.ids: meta.ids_digest}
    for view in meta.views.values():
        expected[view.file] = view.digest
        if view.windows is not None:
            expected[view.windows] = view.digest
    for rel, want in expected.items():
        if binfile.header_of(files.raw(rel), files.display(rel)).get("digest") != want:
            raise ChangedError(rel)


def check_mac(path: Path, index: Index, seal: SealKey, *, missing_ok: bool) -> None:
    """A keyed index's MAC under ``seal``; ``missing_ok``: an index written before indexes had
    one is read (by ``upgrade``, which adds it)."""
    if index.mac is None:
        if missing_ok:
            return
        raise ManifestError(
            f"{path}: this keyed manifest's index carries no MAC (written by an earlier "
            "contam-guard, or the MAC was removed): an edit of it could not be detected",
            hint=MAC_HINT,
        )
    if not hmac.compare_digest(index.mac, seal.index_mac(mac_body(index))):
        raise ManifestError(
            f"{path}: the index's MAC does not match: it was changed without the key (or damaged)",
            hint=checks.RESTORE_HINT.format(path=path),
        )


def check_set(
    files: Files,
    name: str,
    entry: SetEntry,
    meta: SetMeta,
    spec: Spec,
    ids_file: Callable[[], bytes | memoryview],
    ids: Callable[[], Sequence[str]],
) -> None:
    """The set's entry against itself (files, rules, history) and against its own record in its
    ids file (``ids_file``: the file's container bytes); a set written before records existed
    against its digest instead (``ids``: its item ids)."""
    label = f"{files.path}: set {name!r}"
    hint = checks.RESTORE_HINT.format(path=files.path)
    if sum(f.items for f in meta.files) != entry.items:
        raise ManifestError(f"{label}: the files' item counts do not add up to its items", hint=hint)
    unknown = sorted(set(meta.rules) - set(all_rules()))
    if unknown:
        raise ManifestError(
            f"{label}: registered for rules this contam-guard does not know: {unknown}", hint=hint
        )
    windows = uses_windows(meta.rules)
    for view_name, view in meta.views.items():
        rels = [view.file, view.windows] if view.windows is not None else [view.file]
        # a derived view's window table is there when it holds window hashes (disk_write.windowed)
        wrong = not is_derived(view_name) and (view.windows is not None) != windows
        if any(rel not in entry.data for rel in rels) or wrong:
            raise ManifestError(f"{label}: its views' files do not match its rules and files", hint=hint)
    display = files.display(entry.ids)
    recorded = binfile.header_of(ids_file(), display).get(record.KEY)
    if recorded is not None:
        wrong_fields = record.differences(recorded, record.set_record(name, spec, entry, meta))
        if wrong_fields:
            raise ManifestError(
                f"{label}: the index and the set's own record in {display} disagree on "
                f"{', '.join(wrong_fields)} (one of them was changed without the other)",
                hint=hint,
            )
    last = entry.history[-1] if entry.history else None
    if last is None or (last.version, last.digest) != (entry.version, entry.digest):
        raise ManifestError(f"{label}: the version history does not end at the current version", hint=hint)
    if recorded is None:  # written before records: the digest covers the ids, views and rules
        views = {view: e.digest for view, e in meta.views.items()}
        if record.set_digest(ids(), meta.id_field, views, tuple(meta.rules)) != entry.digest:
            raise ManifestError(f"{label}: the ids and views do not match the set's digest", hint=hint)
