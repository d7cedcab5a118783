"""The index on disk: generations behind one pointer file, so every change is atomic.

::

    DIR/CURRENT              the live generation and its meta.json's SHA-256, written atomically
    DIR/gen-000003/meta.json format, spec, fields, files (path, digest, shard), shards (digest)
    DIR/gen-000003/shards/s000000/*.npy, texts.bin   one shard per build step (``exact``)
    DIR/gen-000003/bm25/     the tantivy index (``bm25``)

A change (``contam-guard index`` adding files) builds the next generation in a hidden temporary
folder: the live generation's files are hard-linked into it (shards and tantivy segments are
never changed once written, so linking is safe and costs no copy), the new shard and segments
are added, and the folder is renamed to its generation name; then CURRENT is replaced
atomically and the old generation removed. A failure or a kill at any point leaves CURRENT
naming the old, complete generation; leftovers are removed by the next build. A new index is
built the same way in a hidden folder beside DIR and renamed to DIR. Every file of a generation
is covered by a digest checked when the index is opened (``integrity``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from contam_guard.errors import ContamGuardError
from contam_guard.io.atomic import write_text

FORMAT = "contam-guard-search-index"
FORMAT_VERSION = 2
"""2: digests of meta.json (in CURRENT), of each shard and of the BM25 files."""
POINTER = "CURRENT"
_GENERATION = re.compile(r"gen-(\d{6})")
_REBUILD = "rebuild it: remove {root} and run contam-guard index FILES --index {root}"


class SearchIndexError(ContamGuardError):
    """The search index is missing, corrupt, or of another format (exit 2)."""


class FileEntry(BaseModel):
    """One indexed input file. ``live`` is False once the file changed and was indexed again:
    its old records stay in their shard but no search returns them."""

    model_config = ConfigDict(extra="forbid")
    path: str
    """Resolved path: what "already indexed" is decided by, with ``sha256``."""
    display: str
    """The file as the user named it, relative to where ``index`` ran: what hits show."""
    size: int
    sha256: str
    records: int
    shards: list[str]
    live: bool = True


class ShardEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    records: int
    segments: int
    words: int
    sha256: str
    """``integrity.folder_digest`` of the shard's folder."""


class Meta(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    words_spec: str
    alnum_spec: str
    fields: list[str]
    files: list[FileEntry] = []
    shards: list[ShardEntry] = []
    bm25_sha256: str = ""
    """``integrity.folder_digest`` of the BM25 folder."""


def open_generation(root: Path) -> tuple[Path, Meta]:
    """The live generation of the index at ``root`` and its ``meta.json``, whose SHA-256 must be
    the one ``CURRENT`` records (``SearchIndexError`` otherwise)."""
    generation = generation_dir(root)
    expected = _pointer(root / POINTER)[1]
    if expected is None:
        raise SearchIndexError(
            f"{root}: a search index of an older contam-guard (it records no digests of its files), "
            "or a damaged one",
            hint=_REBUILD.format(root=root),
        )
    path = generation / "meta.json"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SearchIndexError(f"{path}: corrupt search index (meta.json is missing)") from None
    except OSError as exc:
        raise SearchIndexError(f"{path}: cannot read the search index ({exc.strerror or exc})") from None
    if expected is not None and hashlib.sha256(data).hexdigest() != expected:
        raise SearchIndexError(
            f"{path}: damaged search index (its SHA-256 is not the one {root / POINTER} records)",
            hint=_REBUILD.format(root=root),
        )
    return generation, _parse_meta(path, data)


def _pointer(pointer: Path) -> tuple[str, str | None]:
    """CURRENT's generation name and meta.json digest (None when it records none)."""
    parts = pointer.read_text(encoding="utf-8", errors="replace").split()
    return (parts[0] if parts else "", parts[1] if len(parts) > 1 else None)


def generation_dir(root: Path) -> Path:
    """The live generation of the index at ``root``; ``SearchIndexError`` when there is none."""
    if not root.exists():
        raise SearchIndexError(
            f"{root}: no search index here", hint=f"build one with: contam-guard index FILES --index {root}"
        )
    if not root.is_dir():
        raise SearchIndexError(f"{root}: not a search index (a file, not a folder)")
    pointer = root / POINTER
    try:
        pointer.read_text(encoding="utf-8")
        name = _pointer(pointer)[0]
    except FileNotFoundError:
        raise SearchIndexError(
            f"{root}: not a search index (no {POINTER} file)",
            hint=f"build one with: contam-guard index FILES --index {root}",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SearchIndexError(f"{pointer}: cannot read the index pointer ({exc})") from exc
    if not _GENERATION.fullmatch(name) or not (root / name).is_dir():
        raise SearchIndexError(
            f"{pointer}: corrupt search index (it names {name[:40]!r}, which is not a generation here)",
            hint="rebuild it: remove the folder and run contam-guard index again",
        )
    return root / name


def _parse_meta(path: Path, data: bytes) -> Meta:
    """``meta.json`` checked; ``SearchIndexError`` naming it otherwise."""
    try:
        meta = Meta.model_validate_json(data)
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        raise SearchIndexError(f"{path}: corrupt search index ({first})") from None
    if meta.format != FORMAT or meta.format_version != FORMAT_VERSION:
        raise SearchIndexError(
            f"{path}: not a search index of this contam-guard "
            f"({meta.format} version {meta.format_version}; this one reads {FORMAT} {FORMAT_VERSION})"
        )
    return meta


def write_meta(generation: Path, meta: Meta) -> None:
    write_text(generation / "meta.json", meta.model_dump_json(indent=1) + "\n")


def next_name(current: Path | None) -> str:
    match = _GENERATION.fullmatch(current.name) if current is not None else None
    return f"gen-{int(match.group(1)) + 1 if match else 1:06d}"


def stage(root: Path, current: Path | None) -> Path:
    """The folder to build the next generation in: hidden, inside ``root`` (or, for a new
    index, inside a hidden folder beside it), holding hard links to the live generation's files."""
    clean_leftovers(root)
    if current is None:
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise SearchIndexError(
                f"{root}: not a search index, and not an empty folder: nothing was written",
                hint="name a new folder for the index",
            )
        top = root.parent / f".{root.name}.build-{os.getpid()}"
        top.mkdir(parents=True)
        generation = top / next_name(None)
        generation.mkdir()
        return generation
    staged = root / f".build-{os.getpid()}"
    shutil.copytree(current, staged, copy_function=os.link)
    os.unlink(staged / "meta.json")  # rewritten, never through the link to the live one
    return staged


def publish(root: Path, current: Path | None, staged: Path) -> Path:
    """Make ``staged`` the live generation atomically; returns its final path."""
    digest = hashlib.sha256((staged / "meta.json").read_bytes()).hexdigest()
    if current is None:
        top = staged.parent
        write_text(top / POINTER, f"{staged.name} {digest}\n")
        top.rename(root)  # rename(2) replaces an empty folder the user made for the index
        return root / staged.name
    final = root / next_name(current)
    staged.rename(final)
    write_text(root / POINTER, f"{final.name} {digest}\n")
    shutil.rmtree(current, ignore_errors=True)
    return final


def discard(staged: Path, current: Path | None) -> None:
    """Remove a build that failed (the live generation is untouched)."""
    shutil.rmtree(staged.parent if current is None else staged, ignore_errors=True)


def clean_leftovers(root: Path) -> None:
    """Remove what an interrupted build left: hidden build folders, and generations that
    CURRENT does not name."""
    for leftover in [*root.parent.glob(f".{root.name}.build-*"), *root.glob(".build-*")]:
        shutil.rmtree(leftover, ignore_errors=True)
    for temporary in root.glob(f".{POINTER}.*.tmp"):  # an atomic write killed by SIGKILL
        temporary.unlink(missing_ok=True)
    pointer = root / POINTER
    if pointer.is_file():
        live = _pointer(pointer)[0]
        for generation in root.glob("gen-*"):
            if generation.name != live and _GENERATION.fullmatch(generation.name):
                shutil.rmtree(generation, ignore_errors=True)
