"""Shards: the word stream of a part of the corpus, its suffix array, and its records.

A shard holds, for every segment (one string of a record) in order, its word ids followed by
a 0 (so no phrase spans two segments: a query never holds a 0), and the suffix array of that
stream, built by ``pydivsufsort`` (libdivsufsort; integer alphabets through its generic path).
Word ids are the ranks of the words' 64-bit hashes in the shard's sorted vocabulary
(``vocab.npy``), so the stream is 4 bytes a word. A phrase's occurrences are one range of the
suffix array, found by two binary searches (libdivsufsort's own ``sa_search`` compares bytes,
not integer words); every array is memory-mapped, so a query reads a few pages.

The records' texts are kept (``texts.bin``, UTF-8, one entry a segment) for snippets.
A shard is written once and never changed (``store`` hard-links it into later generations).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pydivsufsort
from numpy.typing import NDArray

from contam_guard.core.spec.features import IntArray
from contam_guard.core.spec.hashing import HashArray
from contam_guard.search.store import SearchIndexError

SEPARATOR = 0
_ARRAYS = ("tokens", "vocab", "sa", "seg_tok", "seg_rec", "seg_text", "seg_field",
           "rec_file", "rec_index", "rec_line", "rec_seg")  # fmt: skip


def nonzero(hashes: HashArray) -> HashArray:
    """Word hashes with 0 (the separator) moved to 1, at build and query time alike."""
    return np.where(hashes == 0, np.uint64(1), hashes)


class ShardWriter:
    """Collects segments for one shard and writes it (``close``). Memory: 8 bytes a word while
    collecting, about 24 a word while sorting; the build caps the words of a shard."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True)
        self.folder = folder
        self._texts: BinaryIO = open(folder / "texts.bin", "wb")  # noqa: SIM115 (closed in close)
        self._text_bytes = 0
        self._streams: list[HashArray] = []
        self.words = 0
        self._lists: dict[str, list[int]] = {
            name: [] for name in ("seg_len", "seg_rec", "seg_text", "seg_field", *_ARRAYS[7:])
        }
        self._fields: dict[str, int] = {}
        self.records = 0

    def add_record(self, file_no: int, index: int, line: int | None, segments: list[tuple[str, str]]) -> int:
        """Start a record (its segments' words follow through ``add_words``); returns its number."""
        lists = self._lists
        lists["rec_file"].append(file_no)
        lists["rec_index"].append(index)
        lists["rec_line"].append(-1 if line is None else line)
        lists["rec_seg"].append(len(lists["seg_rec"]))
        for path, text in segments:
            data = text.encode("utf-8", "surrogatepass")
            self._texts.write(data)
            lists["seg_text"].append(self._text_bytes)
            self._text_bytes += len(data)
            lists["seg_rec"].append(self.records)
            lists["seg_field"].append(self._fields.setdefault(path, len(self._fields)))
        self.records += 1
        return self.records - 1

    def add_words(self, hashes: HashArray, counts: IntArray) -> None:
        """The words of consecutive segments (``counts`` words each), in the order they were added."""
        stream = np.zeros(hashes.size + counts.size, dtype=np.uint64)
        owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        stream[np.arange(hashes.size, dtype=np.int64) + owner] = nonzero(hashes)
        self._streams.append(stream)
        self._lists["seg_len"].extend((counts + 1).tolist())
        self.words += int(hashes.size)

    def abort(self) -> None:
        """Close the shard's file without writing the shard (a failed build)."""
        self._texts.close()

    def close(self) -> tuple[int, int, int]:
        """Sort and write the shard; returns (records, segments, words)."""
        self._texts.close()
        lists = self._lists
        stream = np.concatenate(self._streams) if self._streams else np.zeros(0, dtype=np.uint64)
        self._streams = []
        # np.unique without return_inverse sorts in place (quicksort); its inverse would take a
        # stable argsort, several times slower. The ranks come from a binary search instead.
        vocab = np.unique(stream)
        tokens = np.searchsorted(vocab, stream).astype(np.uint32)  # rank 0 is the separator (hash 0)
        del stream
        sa = pydivsufsort.divsufsort(tokens) if tokens.size else np.zeros(0, dtype=np.int64)
        seg_tok = np.zeros(len(lists["seg_len"]) + 1, dtype=np.int64)
        np.cumsum(np.asarray(lists["seg_len"], dtype=np.int64), out=seg_tok[1:])
        arrays: dict[str, NDArray[np.generic]] = {
            "tokens": tokens,
            "vocab": vocab,
            "sa": sa,
            "seg_tok": seg_tok,
            "seg_rec": np.asarray(lists["seg_rec"], dtype=np.int64),
            "seg_text": np.asarray([*lists["seg_text"], self._text_bytes], dtype=np.int64),
            "seg_field": np.asarray(lists["seg_field"], dtype=np.int32),
            "rec_file": np.asarray(lists["rec_file"], dtype=np.int64),
            "rec_index": np.asarray(lists["rec_index"], dtype=np.int64),
            "rec_line": np.asarray(lists["rec_line"], dtype=np.int64),
            "rec_seg": np.asarray([*lists["rec_seg"], len(lists["seg_rec"])], dtype=np.int64),
        }
        for name, array in arrays.items():
            np.save(self.folder / f"{name}.npy", array)
        (self.folder / "fields.json").write_text(json.dumps(list(self._fields)), encoding="utf-8")
        for path in [*self.folder.iterdir(), self.folder]:  # on disk before CURRENT names them
            descriptor = os.open(path, os.O_RDONLY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
        return self.records, len(lists["seg_rec"]), self.words


@dataclass(frozen=True)
class Occurrences:
    """Where a phrase occurs in one shard: word positions, with their segment and record."""

    positions: IntArray
    segments: IntArray
    records: IntArray


class Shard:
    """A written shard, memory-mapped. Every array is checked against the others on open."""

    def __init__(self, folder: Path, records: int, segments: int) -> None:
        self.folder = folder
        try:
            a = {name: np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _ARRAYS}
            self.fields: list[str] = json.loads((folder / "fields.json").read_text(encoding="utf-8"))
            size = (folder / "texts.bin").stat().st_size
        except (OSError, ValueError, EOFError) as exc:
            raise SearchIndexError(f"{folder}: corrupt search index shard ({exc})") from None
        self.tokens, self.vocab, self.sa = a["tokens"], a["vocab"], a["sa"]
        self.seg_tok, self.seg_rec, self.seg_text, self.seg_field = (
            a["seg_tok"], a["seg_rec"], a["seg_text"], a["seg_field"])  # fmt: skip
        self.rec_file, self.rec_index, self.rec_line, self.rec_seg = (
            a["rec_file"], a["rec_index"], a["rec_line"], a["rec_seg"])  # fmt: skip
        consistent = (
            self.tokens.size == self.sa.size
            and self.seg_tok.size == segments + 1 == self.seg_text.size
            and self.seg_rec.size == segments == self.seg_field.size
            and self.rec_file.size == records == self.rec_index.size == self.rec_line.size
            and self.rec_seg.size == records + 1
            and (self.seg_tok.size == 0 or int(self.seg_tok[-1]) == self.tokens.size)
            and (self.seg_text.size == 0 or int(self.seg_text[-1]) == size)
        )
        if not consistent:
            raise SearchIndexError(f"{folder}: corrupt search index shard (its arrays do not agree)")
        self._text = np.memmap(folder / "texts.bin", dtype=np.uint8, mode="r") if size else None

    def ids(self, hashes: HashArray) -> list[int] | None:
        """The shard's ids of the query's words, or None when one of them is not in the shard."""
        hashes = nonzero(hashes)
        found = np.searchsorted(self.vocab, hashes)
        found = np.minimum(found, max(self.vocab.size - 1, 0))
        if self.vocab.size == 0 or not np.array_equal(self.vocab[found], hashes):
            return None
        return [int(x) for x in found]

    def find(self, hashes: HashArray) -> Occurrences:
        """Every occurrence of the phrase (in suffix-array order)."""
        query = self.ids(hashes)
        if query is None:
            empty = np.zeros(0, dtype=np.int64)
            return Occurrences(empty, empty, empty)
        lo = self._bound(query, upper=False)
        hi = self._bound(query, upper=True)
        positions = np.asarray(self.sa[lo:hi], dtype=np.int64)
        segments = np.searchsorted(self.seg_tok, positions, side="right") - 1
        return Occurrences(positions, segments, np.asarray(self.seg_rec[segments], dtype=np.int64))

    def _bound(self, query: list[int], *, upper: bool) -> int:
        """First suffix-array slot whose suffix's first len(query) ids are >= (upper: >) query."""
        k = len(query)
        lo, hi = 0, int(self.sa.size)
        while lo < hi:
            mid = (lo + hi) // 2
            start = int(self.sa[mid])
            prefix = self.tokens[start : start + k].tolist()
            if prefix < query or (upper and prefix == query):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def text(self, segment: int) -> str:
        """The text of a segment."""
        if self._text is None:
            return ""
        start, end = int(self.seg_text[segment]), int(self.seg_text[segment + 1])
        return bytes(self._text[start:end]).decode("utf-8", "surrogatepass")
