"""Build or extend a search index: stream the files' records into new shards and the BM25 index.

Files are walked and read exactly as a scan reads them (``io.walk.data_files``, ``readers``: every
string of every record, or the ``--field`` paths), in batches of about ``BATCH_CHARS``
characters, so memory holds one batch, the word stream of the shard being built (capped at
``shard_words`` words: a larger input makes several shards) and tantivy's writer heap.

A file is already indexed when its resolved path and SHA-256 both match an entry: it is
skipped. A file whose path is indexed with another digest changed: the old entry is retired
(its records stay in their shard, but no search returns them) and the file indexed again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from contam_guard.core.spec.features import words_of
from contam_guard.core.spec.normalise import CURRENT, TextSpec, spec_named
from contam_guard.errors import InputError
from contam_guard.io.paths import display_path
from contam_guard.io.readers import ReadOptions, read_records
from contam_guard.io.walk import data_files
from contam_guard.search import integrity, store
from contam_guard.search.bm25 import Bm25Writer, body
from contam_guard.search.exact import ShardWriter

BATCH_CHARS = 4_000_000
SHARD_WORDS = 16_000_000
"""Words per shard: sorting a shard takes about 24 bytes a word (about 400 MB here)."""


@dataclass
class BuildSummary:
    added: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Already indexed (same path and digest)."""
    replaced: list[str] = field(default_factory=list)
    """Indexed before with other content: the old records are retired."""
    records: int = 0
    words: int = 0
    bytes_read: int = 0
    notices: list[str] = field(default_factory=list)
    generation: Path | None = None


def _digest(path: Path, display: str) -> str:
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError as exc:
        raise InputError(display, f"cannot read ({exc.strerror or exc})") from None


def build(
    root: Path,
    paths: list[Path],
    fields: tuple[str, ...],
    *,
    on_chars: Callable[[int], None] = lambda _: None,
    shard_words: int = SHARD_WORDS,
) -> BuildSummary:
    """Add the files under ``paths`` to the index at ``root`` (created when missing), atomically.

    Nothing changes on any error (the old generation stays live; ``SearchIndexError`` or the
    reader's ``InputError`` propagates). Raises ``SearchIndexError`` when ``fields`` differ from
    the index's: one index holds one selection of text.
    """
    summary = BuildSummary()
    store.clean_leftovers(root)
    current, meta = integrity.open_checked(root) if (root / store.POINTER).exists() else (None, None)
    if meta is not None and meta.fields != list(fields):
        raise store.SearchIndexError(
            f"{root}: this index holds --field {meta.fields or '(every string)'}, "
            f"not {list(fields) or '(every string)'}",
            hint="use the same --field options, or another --index folder",
        )
    if meta is None:
        meta = store.Meta(words_spec=CURRENT.words_name, alnum_spec=CURRENT.alnum_name, fields=list(fields))
    spec = spec_named(meta.words_spec, meta.alnum_spec)
    if spec is None:
        raise store.SearchIndexError(f"{root}: built with an unknown normalisation {meta.words_spec!r}")

    inside = root.resolve()

    def excluded(path: Path) -> str | None:
        return "inside the search index" if path.resolve().is_relative_to(inside) else None

    found = data_files(paths, excluded)
    summary.notices += [f"{display_path(n.path)}: {n.reason}" for n in found.notices]
    known = {(f.path, f.sha256) for f in meta.files if f.live}
    live_by_path = {f.path: n for n, f in enumerate(meta.files) if f.live}
    todo: list[tuple[Path, str, str, str]] = []
    for path in found.files:
        display = display_path(path)
        resolved = os.fspath(path.resolve())
        digest = _digest(path, display)
        if (resolved, digest) in known or any(t[1] == resolved for t in todo):
            summary.skipped.append(display)
            continue
        todo.append((path, resolved, digest, display))
    if not todo:
        return summary

    staged = store.stage(root, current)
    try:
        _add(staged, meta, todo, live_by_path, fields, spec, summary, on_chars, shard_words)
        meta.bm25_sha256 = integrity.folder_digest(staged / "bm25")
        store.write_meta(staged, meta)
        summary.generation = store.publish(root, current, staged)
    except BaseException:
        store.discard(staged, current)
        raise
    return summary


def _add(
    staged: Path,
    meta: store.Meta,
    todo: list[tuple[Path, str, str, str]],
    live_by_path: dict[str, int],
    fields: tuple[str, ...],
    spec: TextSpec,
    summary: BuildSummary,
    on_chars: Callable[[int], None],
    shard_words: int,
) -> None:
    builder = _Builder(staged, meta, spec, summary, on_chars, shard_words)
    try:
        _read(builder, meta, todo, live_by_path, fields, summary)
        builder.close()
    except BaseException:
        builder.shard.abort()
        builder.bm25.abort()  # before the build is removed: its threads write into it
        raise


def _read(
    builder: _Builder,
    meta: store.Meta,
    todo: list[tuple[Path, str, str, str]],
    live_by_path: dict[str, int],
    fields: tuple[str, ...],
    summary: BuildSummary,
) -> None:
    options = ReadOptions(fields=fields)
    for path, resolved, digest, display in todo:
        if resolved in live_by_path:
            old = live_by_path[resolved]
            meta.files[old].live = False
            builder.bm25.retire(old)
            summary.replaced.append(display)
        file_no = len(meta.files)
        shards = [builder.shard_name()]
        records = 0
        for record in read_records(path, display, options):
            builder.add(file_no, record.index, record.line, [(s.path, s.text) for s in record.segments])
            records += 1
            if builder.chars >= BATCH_CHARS:
                builder.flush()
                if builder.full():
                    builder.next_shard()
                    shards.append(builder.shard_name())
        builder.flush()
        size = path.stat().st_size
        meta.files.append(
            store.FileEntry(
                path=resolved, display=display, size=size, sha256=digest, records=records, shards=shards
            )
        )
        summary.added.append(display)
        summary.records += records
        summary.bytes_read += size
        if builder.full():
            builder.next_shard()


class _Builder:
    """The shard being written, the BM25 writer, and the batch of records not yet hashed."""

    def __init__(
        self,
        staged: Path,
        meta: store.Meta,
        spec: TextSpec,
        summary: BuildSummary,
        on_chars: Callable[[int], None],
        shard_words: int,
    ) -> None:
        self.staged, self.meta, self.spec, self.summary = staged, meta, spec, summary
        self.on_chars, self.shard_words = on_chars, shard_words
        self.bm25 = Bm25Writer(staged / "bm25")
        self.shard_no = len(meta.shards)
        self.shard = self._open()
        self.texts: list[str] = []
        self.owners: list[tuple[int, int, int]] = []  # (record in shard, file, segments)
        self.chars = 0

    def _open(self) -> ShardWriter:
        return ShardWriter(self.staged / "shards" / f"s{self.shard_no:06d}")

    def shard_name(self) -> str:
        return self.shard.folder.name

    def add(self, file_no: int, index: int, line: int | None, segments: list[tuple[str, str]]) -> None:
        number = self.shard.add_record(file_no, index, line, segments)
        self.texts += [text for _, text in segments]
        self.owners.append((number, file_no, len(segments)))
        self.chars += sum(len(text) for _, text in segments)

    def flush(self) -> None:
        """Hash the batch into the shard and the BM25 index."""
        if not self.owners:
            return
        words = words_of(self.texts, self.spec)
        self.shard.add_words(words.hashes, np.diff(words.record_words))
        text = body(words.hashes)
        first = 0
        for record, file_no, n_segments in self.owners:
            lo, hi = int(words.record_words[first]), int(words.record_words[first + n_segments])
            self.bm25.add(self.shard_no, record, file_no, text[17 * lo : 17 * hi])
            first += n_segments
        self.summary.words += int(words.hashes.size)
        self.on_chars(self.chars)
        self.texts, self.owners, self.chars = [], [], 0

    def full(self) -> bool:
        return self.shard.words >= self.shard_words

    def _close_shard(self) -> None:
        records, segments, words = self.shard.close()
        if not records:  # nothing was added since the last shard closed
            shutil.rmtree(self.shard.folder)
            return
        if records:
            digest = integrity.folder_digest(self.shard.folder)
            self.meta.shards.append(
                store.ShardEntry(
                    name=self.shard_name(), records=records, segments=segments, words=words, sha256=digest
                )
            )

    def next_shard(self) -> None:
        self.flush()
        self._close_shard()
        self.shard_no = len(self.meta.shards)
        self.shard = self._open()

    def close(self) -> None:
        self.flush()
        self._close_shard()
        self.bm25.commit()
