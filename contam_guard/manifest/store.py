"""Reading and writing the manifest: deterministic bytes, atomic writes, every check on load."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contam_guard.atomic import write_text
from contam_guard.errors import ManifestError
from contam_guard.manifest import upgrade
from contam_guard.manifest.model import MANIFEST_FORMAT, SCHEMA_VERSION, Manifest, Spec
from contam_guard.safe_read import decode_utf8, read_regular
from contam_guard.text.hashing import HASH_SPECS, SIPHASH_SPEC, digest
from contam_guard.text.normalise import SPECS

KNOWN_SPECS = [
    Spec(words=s.words_name, alnum=s.alnum_name, hash=h) for s in reversed(SPECS) for h in HASH_SPECS
]

RESTORE_HINT = "restore it from version control (git checkout -- {path}) or re-register the sets"
MAX_MANIFEST_BYTES = 1 << 30
"""A manifest of every common benchmark is a few tens of MB; a file beyond this is not one."""


def content_digest(manifest: Manifest) -> str:
    """Digest over the manifest's content, excluding the digest field itself."""
    body = manifest.model_dump(mode="json", exclude={"digest"})
    return digest(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def dumps(manifest: Manifest) -> str:
    """The manifest's canonical text: sorted keys, two-space indent, trailing newline."""
    sealed = manifest.model_copy(update={"digest": content_digest(manifest)})
    return json.dumps(sealed.model_dump(mode="json"), sort_keys=True, indent=2) + "\n"


def save(path: Path, manifest: Manifest) -> None:
    """Write ``manifest`` to ``path`` atomically; unchanged content leaves the file untouched."""
    text = dumps(manifest)
    try:
        current = read_regular(path, what="manifest", limit=MAX_MANIFEST_BYTES, error=ManifestError)
    except (FileNotFoundError, ManifestError):
        current = None
    if current == text.encode("utf-8"):
        return
    write_text(path, text)


def load(path: Path, *, spec: Spec | None = None) -> Manifest:
    """Load and check a manifest: format, schema version, integrity digest, hashing spec."""
    return parse(path, read(path), spec=spec)


def read(path: Path) -> str:
    """The manifest file's text: a regular file (a FIFO or a device is an error, never a hang),
    bounded, UTF-8."""
    try:
        data = read_regular(path, what="manifest", limit=MAX_MANIFEST_BYTES, error=ManifestError)
    except FileNotFoundError:
        raise ManifestError(
            f"{path}: no manifest here", hint="run `contam-guard init`, then `contam-guard register`"
        ) from None
    return decode_utf8(data, path, "manifest", ManifestError)


def parse(path: Path, raw_text: str, *, spec: Spec | None = None) -> Manifest:
    """Check and build the manifest from its text (``path`` names it in errors)."""
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
    raw = _check_schema(path, raw)
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ManifestError(
            f"{path}: the manifest is malformed at {where}: {first['msg']}",
            hint=RESTORE_HINT.format(path=path),
        ) from None
    if manifest.digest != content_digest(manifest):
        raise ManifestError(
            f"{path}: integrity check failed: the content does not match its digest "
            "(edited by hand, or damaged)",
            hint=RESTORE_HINT.format(path=path),
        )
    # Every spec this contam-guard knows is read (text is hashed under the manifest's own);
    # ``spec`` asks for exactly one.
    if not manifest.spec.known() or (spec is not None and manifest.spec.core() != spec.core()):
        wanted = spec.core() if spec is not None else " or ".join(str(s.core()) for s in KNOWN_SPECS)
        raise ManifestError(
            f"{path}: built with normalisation/hash spec {manifest.spec.core()}, but this "
            f"contam-guard uses {wanted}; the hashes cannot be compared",
            hint=upgrade.REBUILD_HINT.format(path=path) + "; or install the contam-guard that built it",
        )
    if manifest.spec.hash == SIPHASH_SPEC and manifest.key_check is None:
        # Keyed hashes with no key to check: every scan would miss silently.
        raise ManifestError(
            f"{path}: the manifest's hashes are keyed ({SIPHASH_SPEC}) but it records no key_check",
            hint=RESTORE_HINT.format(path=path),
        )
    check_arrays(path, manifest)
    return manifest


def check_arrays(path: Path, manifest: Manifest) -> None:
    """Every array decodes and has the size its counts give (else scanning it would crash)."""
    hint = RESTORE_HINT.format(path=path)
    for name, golden in manifest.sets.items():
        if sum(f.items for f in golden.files) != golden.items:
            raise ManifestError(
                f"{path}: set {name!r}: the files' item counts do not add up to its items", hint=hint
            )
        for view_name, view in golden.views.items():
            label = f"{path}: set {name!r} view {view_name!r}"
            try:
                counts_ok = (
                    view.word_counts.size == golden.items
                    and view.alnum_counts.size == golden.items
                    and int(view.gram_counts.sum()) == view.gram_hashes.size
                    and int(view.window_counts.sum()) == view.window_hashes.size
                )
                # A negative count hides from the sums above (an item with no 5-grams counts 0
                # either way) and would index arrays backwards in the engine.
                negative = bool((view.word_counts < 0).any() or (view.alnum_counts < 0).any())
            except ValueError as exc:
                raise ManifestError(f"{label}: an array is not valid base64 ({exc})", hint=hint) from None
            if not counts_ok:
                raise ManifestError(f"{label}: array sizes do not match the item counts", hint=hint)
            if negative:
                raise ManifestError(f"{label}: a word or character count is negative", hint=hint)


def _check_schema(path: Path, raw: dict[str, Any]) -> dict[str, Any]:
    version = raw.get("schema_version")
    if not isinstance(version, int):
        raise ManifestError(f"{path}: the manifest has no integer schema_version")
    if version > SCHEMA_VERSION:
        raise ManifestError(
            f"{path}: written by a newer contam-guard (manifest schema {version}; this "
            f"version reads up to {SCHEMA_VERSION})",
            hint='upgrade contam-guard (README.md, "Install"), or use the one that wrote it',
        )
    if version < SCHEMA_VERSION:
        return upgrade.to_current(path, raw, version)
    return raw


# The lock is the operating system's, so it goes with its holder however that ends (a killed
# process leaves no stale lock): flock on POSIX, a byte-range lock of the C runtime on Windows
# (README, "Platforms": the tests run on Linux only).
if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        """Closing the file releases a flock."""


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the manifest for a read-modify-write; fail fast if taken."""
    lock_path = path.with_name(path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _lock(fd):
            raise ManifestError(
                f"{path}: another contam-guard is changing this manifest right now",
                hint="wait for it to finish, then run this command again",
            )
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)
