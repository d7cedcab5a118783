"""BM25 ranking with tantivy: one document per training record, its terms the record's words.

tantivy (the Rust search library behind Quickwit, with Python bindings) keeps an on-disk,
memory-mapped index of immutable segments: documents are added in a bounded writer heap,
deleted by query, and searched with BM25 without loading the index. Its terms here are the
hex of the rules' word hashes (``core.spec.features.words_of``), split on spaces by tantivy's whitespace
tokenizer, so ranking uses exactly the words an exact search and the rules see.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tantivy

from contam_guard.core.spec.hashing import HashArray
from contam_guard.search.store import SearchIndexError

WRITER_HEAP = 64_000_000
"""Bytes tantivy's writer buffers before it writes a segment (bounds the build's memory)."""


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    builder.add_unsigned_field("shard", stored=True, indexed=False)
    builder.add_unsigned_field("rec", stored=True, indexed=False)
    builder.add_unsigned_field("file", stored=False, indexed=True)
    return builder.build()


def terms(hashes: HashArray) -> list[str]:
    """The BM25 terms of some words: the hex of each word's hash."""
    return body(hashes).split()


def body(hashes: HashArray) -> str:
    """The terms of ``hashes`` as one text, each followed by a space: word i is the 16
    characters at 17 * i (so a record's words are one slice of its batch's text)."""
    digits = np.ascontiguousarray(hashes, dtype=">u8").tobytes().hex().encode("ascii")
    hexes = np.frombuffer(digits, dtype=np.uint8)
    spaced = np.full((hashes.size, 17), ord(" "), dtype=np.uint8)
    spaced[:, :16] = hexes.reshape(-1, 16)
    return spaced.tobytes().decode("ascii")


class Bm25Writer:
    """Adds records to (or retires files from) the tantivy index in ``folder``."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(exist_ok=True)
        schema = _schema()
        self._index = tantivy.Index(schema, path=str(folder), reuse=True)
        self._schema = self._index.schema
        self._writer = self._index.writer(heap_size=WRITER_HEAP, num_threads=1)

    def add(self, shard: int, record: int, file_no: int, text: str) -> None:
        """One record; ``text``: its words' terms (``body``)."""
        doc = tantivy.Document()
        doc.add_text("body", text)
        doc.add_unsigned("shard", shard)
        doc.add_unsigned("rec", record)
        doc.add_unsigned("file", file_no)
        self._writer.add_document(doc)

    def retire(self, file_no: int) -> None:
        """No search returns the records of file ``file_no`` any more."""
        self._writer.delete_documents_by_query(tantivy.Query.term_query(self._schema, "file", file_no))

    def commit(self) -> None:
        self._writer.commit()
        self._writer.wait_merging_threads()

    def abort(self) -> None:
        """Drop what was added since the last commit and stop the writer (its threads write the
        segment's files as documents arrive): a failed build is then removed with nothing left
        writing into it, and the folder's lock is free. A writer already committed is left."""
        with contextlib.suppress(RuntimeError):  # consumed by commit: nothing is running
            self._writer.rollback()
            self._writer.wait_merging_threads()


@dataclass(frozen=True)
class Ranked:
    score: float
    shard: int
    record: int


class Bm25Searcher:
    def __init__(self, folder: Path) -> None:
        try:
            self._index = tantivy.Index.open(str(folder))
            self._searcher = self._index.searcher()
        except (ValueError, OSError) as exc:
            raise SearchIndexError(f"{folder}: corrupt search index (BM25 part: {exc})") from None

    def search(self, hashes: HashArray, limit: int) -> list[Ranked]:
        """The ``limit`` best records for the query's words, best first."""
        tv = tantivy
        schema = self._index.schema
        unique = sorted(set(terms(hashes)))
        clauses = [(tv.Occur.Should, tv.Query.term_query(schema, "body", t)) for t in unique]
        try:
            found = self._searcher.search(tv.Query.boolean_query(clauses), limit)
            out = []
            for score, address in found.hits:
                doc = self._searcher.doc(address)
                out.append(Ranked(float(score), int(doc["shard"][0]), int(doc["rec"][0])))
        except (ValueError, OSError) as exc:
            raise SearchIndexError(f"corrupt search index (BM25 part: {exc})") from None
        return out

    @property
    def documents(self) -> int:
        return int(self._searcher.num_docs)
