"""Open an index and answer queries: exact phrase counts with hits, or BM25 ranking."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from contam_guard.core.spec.features import words_of
from contam_guard.core.spec.hashing import HashArray
from contam_guard.core.spec.normalise import TextSpec, spec_named
from contam_guard.errors import ConfigError
from contam_guard.search import integrity, store
from contam_guard.search.bm25 import Bm25Searcher
from contam_guard.search.exact import Shard
from contam_guard.search.snippets import Snippet, snippet

EXACT, BM25 = "exact", "bm25"
MAX_HITS = 10_000
"""The most hits one search returns: tantivy aborts the process on a limit past 2**32, and no
reader pages through more (counts are complete whatever the limit)."""


@dataclass(frozen=True)
class Hit:
    """One hit: where (file, 0-based record in it, the record's 1-based line or None, field,
    character offset of the match in that field) and what (score, snippet)."""

    file: str
    record: int
    line: int | None
    field: str
    offset: int
    score: float
    snippet: Snippet

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "record": self.record,
            "line": self.line,
            "field": self.field,
            "offset": self.offset,
            "score": self.score,
            "snippet": self.snippet.marked_text(),
        }


@dataclass(frozen=True)
class Result:
    query: str
    mode: str
    count: int
    """Exact: occurrences of the phrase. BM25: the hits returned."""
    documents: int
    """Exact: records holding the phrase. BM25: the hits returned."""
    hits: list[Hit]

    def as_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "count": self.count,
            "documents": self.documents,
            "hits": [hit.as_json() for hit in self.hits],
        }


class SearchIndex:
    """A read-only view of the live generation of the index at ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.generation, self.meta = integrity.open_checked(root)
        spec = spec_named(self.meta.words_spec, self.meta.alnum_spec)
        if spec is None:
            raise store.SearchIndexError(f"{root}: unknown normalisation {self.meta.words_spec!r}")
        self.spec: TextSpec = spec
        self.shards = [
            Shard(self.generation / "shards" / s.name, s.records, s.segments) for s in self.meta.shards
        ]
        live = np.asarray([f.live for f in self.meta.files] + [False], dtype=np.bool_)
        for shard in self.shards:
            if shard.rec_file.size and int(np.max(shard.rec_file)) >= len(self.meta.files):
                raise store.SearchIndexError(f"{shard.folder}: corrupt search index shard (unknown file)")
        self._live = [live[np.asarray(s.rec_file)] for s in self.shards]
        self.bm25 = Bm25Searcher(self.generation / "bm25")

    def _words(self, query: str) -> HashArray:
        hashes = words_of([query], self.spec).hashes
        if hashes.size == 0:
            raise ConfigError(f"the query {query[:80]!r} has no words once normalised (punctuation only?)")
        return hashes

    def exact(self, query: str, limit: int = 10, *, redact: bool = False) -> Result:
        """Occurrences of the normalised phrase, the records holding it, and the first ``limit``
        hits in index order (file, then position)."""
        hashes = self._words(query)
        count = documents = 0
        hits: list[Hit] = []
        for number, shard in enumerate(self.shards):
            found = shard.find(hashes)
            keep = self._live[number][found.records]
            positions, segments, records = found.positions[keep], found.segments[keep], found.records[keep]
            count += int(positions.size)
            documents += int(np.unique(records).size)
            for slot in np.argsort(positions, kind="stable")[: max(0, limit - len(hits))].tolist():
                segment = int(segments[slot])
                first = int(positions[slot] - shard.seg_tok[segment])
                text = shard.text(segment)
                window = snippet(text, self.spec, phrase=(first, first + int(hashes.size)), redact=redact)
                hits.append(self._hit(shard, int(records[slot]), segment, window, 1.0))
        return Result(query, EXACT, count, documents, hits)

    def ranked(self, query: str, limit: int = 10, *, redact: bool = False) -> Result:
        """The ``limit`` records BM25 ranks best for the query's words."""
        hashes = self._words(query)
        hits: list[Hit] = []
        for ranked in self.bm25.search(hashes, limit):
            if not 0 <= ranked.shard < len(self.shards):
                raise store.SearchIndexError(f"{self.generation}: corrupt search index (unknown shard)")
            shard = self.shards[ranked.shard]
            first, last = int(shard.rec_seg[ranked.record]), int(shard.rec_seg[ranked.record + 1])
            best: tuple[int, int, Snippet] | None = None
            for segment in range(first, last):
                window = snippet(shard.text(segment), self.spec, terms=hashes, redact=redact)
                marked = sum(len(t.split()) for t, m in window.parts if m)
                if best is None or marked > best[0]:
                    best = (marked, segment, window)
            if best is None:
                continue
            hits.append(self._hit(shard, ranked.record, best[1], best[2], ranked.score))
        return Result(query, BM25, len(hits), len(hits), hits)

    def search(self, query: str, *, exact: bool, limit: int = 10, redact: bool = False) -> Result:
        if not 1 <= limit <= MAX_HITS:
            raise ConfigError(f"--limit {limit}: give a number of hits from 1 to {MAX_HITS:,}")
        if exact:
            return self.exact(query, limit, redact=redact)
        return self.ranked(query, limit, redact=redact)

    def records_holding(self, text: str) -> int:
        """How many live training records hold ``text``'s normalised words as a phrase."""
        hashes = words_of([text], self.spec).hashes
        if hashes.size == 0:
            return 0
        total = 0
        for number, shard in enumerate(self.shards):
            found = shard.find(hashes)
            total += int(np.unique(found.records[self._live[number][found.records]]).size)
        return total

    def records_per_span(self, runs: dict[str, str]) -> dict[str, int]:
        """For ``scan --index``: each shared run (by its key) -> live records holding it; a run
        of no words (a pair found by its character windows alone) has no entry."""
        return {key: self.records_holding(text) for key, text in runs.items() if self.spec.words(text)}

    def _hit(self, shard: Shard, record: int, segment: int, window: Snippet, score: float) -> Hit:
        file = self.meta.files[int(shard.rec_file[record])]
        line = int(shard.rec_line[record])
        return Hit(
            file=file.display,
            record=int(shard.rec_index[record]),
            line=None if line < 0 else line,
            field=shard.fields[int(shard.seg_field[segment])],
            offset=window.offset,
            score=round(score, 4),
            snippet=window,
        )
