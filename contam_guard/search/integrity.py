"""Digests that tie a search index together, checked every time it is opened.

A flipped bit in a shard (a suffix array, a word id, a record's file number) or in the BM25
segments changes what a search answers without any error; the arrays' mutual checks
(``exact.Shard``) catch only some of it. So, when a generation is published:

- ``CURRENT`` names the generation and the SHA-256 of its ``meta.json``;
- ``meta.json`` records the SHA-256 of every shard's files (``ShardEntry.sha256``) and of the
  BM25 folder's (``Meta.bm25_sha256``).

Opening the index (``search``, ``serve``, ``scan --index``, and ``index`` before it adds to it)
reads every file once and compares: any difference is a ``SearchIndexError`` (exit 2) naming the
damaged part and the command that rebuilds it. tantivy's lock files are left out: tantivy
creates and removes them as it opens and closes an index.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from contam_guard.search.store import Meta, SearchIndexError, open_generation

CHUNK = 1 << 20


def folder_digest(folder: Path) -> str:
    """SHA-256 over the relative name, size and bytes of every file under ``folder`` (sorted)."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not _is_lock(p))
    for path in files:
        name = path.relative_to(folder).as_posix().encode("utf-8", "surrogateescape")
        digest.update(b"%d:%s:%d:" % (len(name), name, path.stat().st_size))
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


def _is_lock(path: Path) -> bool:
    return path.name.startswith(".tantivy-") and path.name.endswith(".lock")


def rebuild_hint(root: Path) -> str:
    return f"rebuild it: remove {root} and run contam-guard index FILES --index {root}"


def open_checked(root: Path) -> tuple[Path, Meta]:
    """The live generation of the index at ``root`` and its meta, every digest checked."""
    generation, meta = open_generation(root)
    check(root, generation, meta)
    return generation, meta


def check(root: Path, generation: Path, meta: Meta) -> None:
    """Every shard's and the BM25 folder's files against the digests ``meta`` records."""
    try:
        for shard in meta.shards:
            folder = generation / "shards" / shard.name
            if folder_digest(folder) != shard.sha256:
                raise SearchIndexError(
                    f"{folder}: damaged search index shard (its files differ from the SHA-256 "
                    "recorded when it was built)",
                    hint=rebuild_hint(root),
                )
        bm25 = generation / "bm25"
        if folder_digest(bm25) != meta.bm25_sha256:
            raise SearchIndexError(
                f"{bm25}: damaged search index (the BM25 files differ from the SHA-256 recorded "
                "when they were written)",
                hint=rebuild_hint(root),
            )
    except OSError as exc:
        raise SearchIndexError(
            f"{generation}: cannot read the search index ({exc.strerror or exc})", hint=rebuild_hint(root)
        ) from None
