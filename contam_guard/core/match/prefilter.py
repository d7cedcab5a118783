"""The scan's prefilter: one compiled pass per block of lines that reads, hashes and looks up.

``csrc/native.c`` (``filter_jsonl``) reads a block of JSON Lines (validating each line as strict
JSON and decoding every string of the record, or the strings of the ``--field`` top-level keys)
or of plain-text paragraphs, hashes the words, 5-grams and (for GPT-4's rule) 50-character
windows of each record's documents (``io.readers.documents``: its values as one, each key on its
own) on the fly, and looks every hash up in the manifest's tables. Per record it says, on its
first line, BLANK, CLEAN (no hash in the manifest), HITS (and lists every hit: line, position,
posting) or EXACT (anything it does not handle: invalid JSON, a ``--field`` path that is not a
plain top-level key holding a string, a code point whose lowercase form is not one code point,
one never classified before, bytes that are not UTF-8); a paragraph's later lines are MORE.

A CLEAN line cannot produce a pair: the exact engine computes the same hashes (same code
points, same tables, same arithmetic; the tests compare the two on random text) and none is
in the manifest, so it is only counted. A HITS line is matched from its hits, without a Python
object; its text is read again only for a notable pair's snippet. An EXACT line goes to the
exact path unchanged, so its result, line number and error message are the exact path's.

For the rewording rules the filter also hands out the words of the CLEAN and HITS records
(``BlockWords``: each word's hash, per string and per document its word count and line) and
spells the words the rewording pass's vocabulary lacks, so those rules read the same pass's
words and no line is decoded twice.

With a keyed manifest, the filter passes every 5-gram and window hash through SipHash-2-4
under the key before it looks it up, as the exact path does (``HashKey.apply``, the same C
function). The filter applies only where it computes exactly what the exact path would: UTF-8
read strictly, and no restriction to a diff's lines.
"""

from __future__ import annotations

import codecs
import functools
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.match.index import ManifestIndex, Postings
from contam_guard.core.match.matcher import Hits
from contam_guard.core.spec import native
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.spec.tables import tables_for
from contam_guard.core.thread_pool import Threads
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.readers.blocks import LineBlock, LineParser, read_line_blocks
from contam_guard.io.readers.jsonl import JsonLineParser
from contam_guard.io.readers.plaintext import TextLineParser

_native = native.module()
BLANK: int = _native.LINE_BLANK
CLEAN: int = _native.LINE_CLEAN
HITS: int = _native.LINE_HITS
EXACT: int = _native.LINE_EXACT
MORE: int = _native.LINE_MORE
_HITS_OVERFLOW, _LINES_OVERFLOW = 1, 2
_UNKNOWN_CAPACITY = 4096
_RERUN_UNKNOWN = 32
"""More distinct new code points than this in a block: hash it again once they are classified."""
_FIRST_HIT_CAPACITY = 1 << 16
SPLIT_BYTES = 1 << 20
"""The smallest block the filter cuts in two when it has a thread to spare (a quarter of a full
block: a small file or a file's last block stays whole; a choice, not a measured break-even)."""

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class BlockWords:
    """The words of a block's CLEAN and HITS records, in order: each word's hash (unkeyed, as
    ``core.spec.hashing.hash_words`` makes it); per string of a record's documents, and per document
    (``io.readers.documents``), how many words it holds and the line its record starts on; and the
    words the rewording pass's vocabulary did not hold, each spelled once (normalised)."""

    hashes: NDArray[np.uint64]
    string_words: IntArray
    string_line: IntArray
    doc_words: IntArray
    doc_line: IntArray
    new_words: tuple[str, ...]
    new_hashes: NDArray[np.uint64]
    breaks: NDArray[np.uint8]
    """Per word: 1 when a newline comes before it in its string (the rewording rules' lines)."""
    rows: NDArray[np.int32]
    """Per word: its row in the rewording pass's vocabulary when the filter read it (-1: a new
    word), so that the pass looks each word up once."""

    def __post_init__(self) -> None:
        # Arrays per word must stay aligned when records are taken out: a misaligned one would
        # silently move every later record's lines.
        if not self.breaks.size == self.rows.size == self.hashes.size:
            sizes = f"{self.breaks.size} line marks and {self.rows.size} rows for {self.hashes.size} words"
            raise ValueError(f"BlockWords: {sizes}")

    @classmethod
    def of(cls, arrays: tuple[bytes, ...]) -> BlockWords:
        """From ``filter_jsonl``'s arrays (csrc/native.c, ``WordOut``)."""
        hashes, string_words, string_line, doc_words, doc_line, breaks, rows, spelled, ends, spelled_hash = (
            arrays
        )

        def ints(raw: bytes) -> IntArray:
            return np.frombuffer(raw, dtype=np.int64)

        text = codecs.decode(spelled, "utf-32-le", "surrogatepass")
        bounds = [0, *ints(ends).tolist()]
        return cls(
            np.frombuffer(hashes, dtype=np.uint64),
            ints(string_words),
            ints(string_line),
            ints(doc_words),
            ints(doc_line),
            tuple(text[a:b] for a, b in itertools.pairwise(bounds)),  # each once (spelled_before)
            np.frombuffer(spelled_hash, dtype=np.uint64),
            np.frombuffer(breaks, dtype=np.uint8),
            np.frombuffer(rows, dtype=np.int32),
        )

    def followed_by(self, other: BlockWords, lines: int) -> BlockWords:
        """These words, then ``other``'s, whose lines are numbered after this part's ``lines``: a
        block filtered in two parts as if in one (a word new to both parts spelled once)."""
        again = np.isin(other.new_hashes, self.new_hashes)
        unseen = tuple(word for word, seen in zip(other.new_words, again.tolist(), strict=True) if not seen)
        return BlockWords(
            np.concatenate([self.hashes, other.hashes]),
            np.concatenate([self.string_words, other.string_words]),
            np.concatenate([self.string_line, other.string_line + lines]),
            np.concatenate([self.doc_words, other.doc_words]),
            np.concatenate([self.doc_line, other.doc_line + lines]),
            self.new_words + unseen,
            np.concatenate([self.new_hashes, other.new_hashes[~again]]),
            np.concatenate([self.breaks, other.breaks]),
            np.concatenate([self.rows, other.rows]),
        )

    def before(self, limit: int) -> BlockWords:
        """The words of the records before line ``limit``."""
        docs = int(np.searchsorted(self.doc_line, limit))
        strings = int(np.searchsorted(self.string_line, limit))
        words = int(self.doc_words[:docs].sum())
        return BlockWords(
            self.hashes[:words],
            self.string_words[:strings],
            self.string_line[:strings],
            self.doc_words[:docs],
            self.doc_line[:docs],
            self.new_words,
            self.new_hashes,
            self.breaks[:words],
            self.rows[:words],
        )


@dataclass(frozen=True)
class FilteredBlock:
    """Per line of a block: the offset just past it, its status, its text's code points (for
    CLEAN and HITS lines); and the hits of the HITS lines (``Hits.record`` is the line)."""

    end: IntArray
    status: NDArray[np.uint8]
    chars: IntArray
    grams: Hits
    windows: Hits
    words: BlockWords | None = None
    """The records' words, when the filter was given the rewording pass (``Prefilter``)."""

    def hit_records(self, limit: int | None = None) -> tuple[IntArray, Hits, Hits]:
        """The HITS lines (before line ``limit``) and their gram and window hits, each hit's
        ``record`` renumbered to the line's place among them: a batch for ``match_hits``."""
        limit = self.status.size if limit is None else limit
        lines = np.flatnonzero(self.status[:limit] == HITS)
        record_of_line = np.full(limit, -1, dtype=np.int64)
        record_of_line[lines] = np.arange(lines.size, dtype=np.int64)

        def renumber(hits: Hits) -> Hits:
            keep = hits.record < limit
            return Hits(record_of_line[hits.record[keep]], hits.at[keep], hits.posting[keep])

        return lines, renumber(self.grams), renumber(self.windows)

    def followed_by(self, other: FilteredBlock, cut: int) -> FilteredBlock:
        """This block's lines, then those of ``other``, the block's part from byte ``cut`` on."""
        lines = int(self.end.size)

        def hits(a: Hits, b: Hits) -> Hits:
            return Hits(
                np.concatenate([a.record, b.record + lines]),
                np.concatenate([a.at, b.at]),
                np.concatenate([a.posting, b.posting]),
            )

        words = None
        if self.words is not None and other.words is not None:
            words = self.words.followed_by(other.words, lines)
        return FilteredBlock(
            np.concatenate([self.end, other.end + cut]),
            np.concatenate([self.status, other.status]),
            np.concatenate([self.chars, other.chars]),
            hits(self.grams, other.grams),
            hits(self.windows, other.windows),
            words,
        )


@dataclass(frozen=True)
class LineFormat:
    """How the filter reads a file's lines (``mode``, one of the ``_native.READ_*``): JSONL with
    every string read, JSONL with the strings of the top-level ``keys``, or plain text (each
    paragraph, its last line's ending stripped, a record's text)."""

    mode: int
    keys: tuple[str, ...] = ()

    def parser(self, display: str, options: ReadOptions) -> LineParser:
        """The exact reader of one line, for the lines the filter leaves to it."""
        if self.mode == _native.READ_TEXT:
            return TextLineParser(display, options)
        return JsonLineParser(display, options)

    @property
    def packed_keys(self) -> bytes:
        return b"\0".join(key.encode("utf-8") for key in self.keys)


_MAX_KEYS = 16  # csrc/native.c MAX_KEYS


def line_format(fmt: str | None, options: ReadOptions) -> LineFormat | None:
    """How the filter reads a file of format ``fmt``, or None where only the exact path can:
    the filter reads UTF-8 strictly, plain text by paragraph, JSONL records whole or by
    top-level keys, and never joins records (``--group-by``)."""
    if not native.has_prefilter():  # the numpy kernels have none: every line goes exact
        return None
    encoding = options.encoding.replace("_", "-").lower()
    if encoding not in ("utf-8", "utf8") or options.errors != "strict" or options.group_by is not None:
        return None
    if fmt == "text":
        return None if options.whole_file or options.lines else LineFormat(_native.READ_TEXT)
    if fmt != "jsonl" or options.id_field is not None or options.detect_shape:
        return None
    if not options.fields:
        return LineFormat(_native.READ_ALL)
    plain = all(field.isidentifier() for field in options.fields)
    if not plain or len(options.fields) > _MAX_KEYS or len(set(options.fields)) != len(options.fields):
        return None
    return LineFormat(_native.READ_KEYS, options.fields)


_NO_POSTINGS = Postings.build(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64))


def _line_end_before(block: memoryview, at: int) -> int:
    """Just past the last newline in ``block[:at]`` (0: none), read back from ``at`` 64 KiB at a
    time (lines are short; one may be as long as the block)."""
    high = at
    while high > 0:
        low = max(0, high - (1 << 16))
        found = bytes(block[low:high]).rfind(b"\n")
        if found >= 0:
            return low + found + 1
        high = low
    return 0


class _Outputs:
    """What one call of the filter writes into besides its per-line arrays: the gram and window
    hits, the code points never seen before (kept from one block to the next)."""

    def __init__(self) -> None:
        self.unknown = np.empty(_UNKNOWN_CAPACITY, dtype=np.uint32)
        self.grams = _HitArrays()
        self.windows = _HitArrays()


@dataclass(frozen=True)
class _Call:
    """What one call of the compiled filter said, and its per-line arrays (end, status, chars)."""

    count: int
    unknown: int
    gram_hits: int
    window_hits: int
    overflow: int
    words: tuple[bytes, ...] | None
    lines: tuple[IntArray, NDArray[np.uint8], IntArray]


class _HitArrays:
    """Output arrays for one kind of hit, grown (doubled) when a block overflows them."""

    def __init__(self) -> None:
        self.grow(_FIRST_HIT_CAPACITY)

    def grow(self, capacity: int) -> None:
        self.line = np.empty(capacity, dtype=np.int64)
        self.at = np.empty(capacity, dtype=np.int64)
        self.posting = np.empty(capacity, dtype=np.int64)

    def hits(self, count: int) -> Hits:
        return Hits(
            record=self.line[:count].copy(), at=self.at[:count].copy(), posting=self.posting[:count].copy()
        )


_UNKEYED = np.zeros(0, dtype=np.uint64)


class Prefilter:
    def __init__(
        self,
        index: ManifestIndex,
        *,
        windows: bool,
        key: HashKey | None = None,
        words: object = None,
        threads: Threads | None = None,
    ) -> None:
        """A filter over ``index``'s hashes (keyed with ``key``, when the manifest is keyed);
        ``words``: the compiled rewording pass (``core.reword.stage.CompiledStage.kernel``), for
        blocks that hand out their records' words (``FilteredBlock.words``), or None;
        ``threads``: with 2 or more, a large block of JSON Lines is filtered in two parts at once
        (default 1)."""
        self.key = key
        self._words = words
        """The manifest's key: the lines the filter leaves to the exact path are hashed with it."""
        self._key = _UNKEYED if key is None else key.kernel_key
        self._grams = index.grams
        # Without windows the C loop never reads their table: an empty one stands in.
        self._windows = index.windows if windows else _NO_POSTINGS
        self.windows = windows
        # The manifest's spec's tables. The C loop copies alnum code points unmapped, so with
        # windows it takes the classes in which a code point whose alnum character is another
        # code point (spec v2: fullwidth "Ａ" gives "A") is SPECIAL: its line goes exact.
        self._tables = tables_for(index.spec)
        self._classes = self._tables.cls_raw_alnum if windows else self._tables.cls
        self._parts = (_Outputs(), _Outputs())
        self._line_bytes = 64
        """Per-line arrays get a slot per this many bytes of a block (fewer: run it again)."""
        self.threads = Threads() if threads is None else threads

    def blocks(
        self, path: Path, display: str, options: ReadOptions, lines: LineFormat
    ) -> Iterator[LineBlock[FilteredBlock]]:
        """The file's blocks of lines, each filtered (``io.readers.blocks.read_line_blocks``)."""
        parser = lines.parser(display, options)
        return read_line_blocks(path, display, options, parser, functools.partial(self.filter, lines=lines))

    def filter(self, block: bytes | memoryview, lines: LineFormat) -> FilteredBlock:
        """The status of every line of ``block`` (whole lines; the last may lack its newline),
        read as ``lines`` says. With threads, a large block of JSON Lines is cut at a line's end
        near its middle and its two parts filtered at once (the compiled pass runs without the
        GIL and only reads the tables and the vocabulary), then joined: the same result."""
        cut = self._cut(block, lines)
        parts = [block] if cut == 0 else [block[:cut], block[cut:]]
        while True:
            calls = [functools.partial(self._call, part, lines, out) for part, out in zip(parts, self._parts)]
            elsewhere = self.threads.pool().submit(calls[1]) if len(calls) == 2 else None
            done = [calls[0]()] + ([] if elsewhere is None else [elsewhere.result()])
            # What the calls found is acted on only now that none runs: classifying new code
            # points changes the tables they read.
            unknown = [out.unknown[: d.unknown] for d, out in zip(done, self._parts) if d.unknown]
            # Code points never seen before: classify them, so later blocks hash their lines. The
            # lines holding them went to the exact path, which is correct but slower; when there
            # are many (a new alphabet), hash this block again instead.
            if unknown and self._tables.ensure(np.concatenate(unknown)) > _RERUN_UNKNOWN:
                continue
            overflow = done[0].overflow | (done[1].overflow if len(done) == 2 else 0)
            if overflow & _LINES_OVERFLOW:  # lines shorter than assumed
                self._line_bytes = max(1, self._line_bytes // 8)
            elif overflow & _HITS_OVERFLOW:
                for out in self._parts:
                    for arrays in (out.grams, out.windows):
                        arrays.grow(2 * arrays.line.size)
            else:
                found = [self._result(d, out) for d, out in zip(done, self._parts)]
                return found[0] if cut == 0 else found[0].followed_by(found[1], cut)

    def _cut(self, block: bytes | memoryview, lines: LineFormat) -> int:
        """Where to cut ``block`` in two (0: filter it whole): JSON Lines only (a plain-text
        paragraph may hold many lines), a large block, and only with a thread to spare."""
        if self.threads.count < 2 or lines.mode == _native.READ_TEXT or len(block) < SPLIT_BYTES:
            return 0
        return _line_end_before(memoryview(block), len(block) // 2)

    def _call(self, block: bytes | memoryview, lines: LineFormat, out: _Outputs) -> _Call:
        """One call of the compiled filter over ``block``, written into ``out``."""
        end, status, chars = self._line_arrays(len(block))
        tables = self._tables
        g, w = self._grams, self._windows
        gh, wh = out.grams, out.windows
        said = _native.filter_jsonl(
            block,
            lines.packed_keys,
            self._classes,
            tables.lower,
            tables.is_alnum,
            g.hashes,
            g.slots,
            g.chain,
            g.bits,
            gh.line,
            gh.at,
            gh.posting,
            w.hashes,
            w.slots,
            w.chain,
            w.bits,
            wh.line,
            wh.at,
            wh.posting,
            end,
            status,
            chars,
            out.unknown,
            self._key,
            self.windows,
            lines.mode,
            self._words,
        )
        count, unknown, gram_hits, window_hits, overflow, words = said
        return _Call(count, unknown, gram_hits, window_hits, overflow, words, (end, status, chars))

    @staticmethod
    def _result(done: _Call, out: _Outputs) -> FilteredBlock:
        end, status, chars = done.lines
        return FilteredBlock(
            end=end[: done.count],
            status=status[: done.count],
            chars=chars[: done.count],
            grams=out.grams.hits(done.gram_hits),
            windows=out.windows.hits(done.window_hits),
            words=None if done.words is None else BlockWords.of(done.words),
        )

    def _line_arrays(self, size: int) -> tuple[IntArray, NDArray[np.uint8], IntArray]:
        capacity = size // self._line_bytes + 64
        return (
            np.empty(capacity, dtype=np.int64),
            np.empty(capacity, dtype=np.uint8),
            np.empty(capacity, dtype=np.int64),
        )
