"""The record model every reader yields, and the reader protocol."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeAlias

from contam_guard.errors import InputError
from contam_guard.io.readers.member import MAX_MEMBER_BYTES, Member

Input: TypeAlias = Path | Member
"""What a reader reads: a file on disk, or a file inside another (an archive member, the
content of a compressed file) read once as a stream."""


class StreamError(InputError):
    """Reading failed mid-stream (corrupt or truncated compression, I/O error)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One string of a record.

    ``path`` names where the string sits in the record (``completion``, ``messages[2].content``,
    ``meta{key}`` for a key of the object ``meta``); it is ``""`` for plain text. A record's
    value strings are read together as one document, in order (``io.readers.documents``): a shared
    run may cross from one into the next; each key is read on its own.
    ``line``: the file line the string's record starts on, when that is not its record's (the
    records of a ``--group-by`` document); None otherwise.
    """

    path: str
    text: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """One training (or golden) document: its strings, each a ``Segment``.

    ``index`` is the 0-based record number within ``source``; ``line`` the 1-based line on
    which the record starts (None for formats without lines, such as Parquet).
    ``raw`` holds the record's exact bytes where the format has them (a JSONL or text line,
    line ending included), so a scrub can copy untouched records byte for byte.
    ``allow`` is set when the record carries the inline marker ``"contam_guard": "allow"``.
    ``text_lines``: the record is lines of a plain-text file (a paragraph), so each newline in
    its text starts the next line of the file: a finding names the line its run starts on.
    ``group``: the value of the ``--group-by`` field (consecutive records with the same value
    are one document); None without ``--group-by``.
    """

    source: str
    index: int
    line: int | None
    segments: tuple[Segment, ...]
    raw: bytes | None = None
    allow: bool = False
    item_id: str | None = None
    text_lines: bool = False
    group: str | None = None

    @property
    def chars(self) -> int:
        """Characters of text in the record (every segment)."""
        return sum(len(segment.text) for segment in self.segments)

    def size(self) -> int:
        """What a batch of records counts (``chars``)."""
        return self.chars

    def joined(self) -> str:
        """The segments joined by newlines: a golden item's text for one view."""
        return "\n".join(segment.text for segment in self.segments)

    @property
    def last_line(self) -> int | None:
        """The last file line the record covers (its first where the format has no lines)."""
        if self.line is None or self.raw is None:
            return self.line
        return self.line + self.raw.count(b"\n", 0, max(len(self.raw) - 1, 0))

    def touches(self, lines: frozenset[int]) -> bool:
        """Whether the record covers one of ``lines`` (a diff's added lines): a paragraph or a
        ``--group-by`` document touched by one added line is scanned whole."""
        if self.line is None:
            return False
        firsts = {self.line, *(s.line for s in self.segments if s.line is not None)}
        if not firsts.isdisjoint(lines):
            return True
        last = self.last_line
        return last is not None and last > self.line and not lines.isdisjoint(range(self.line, last + 1))


@dataclass(frozen=True, slots=True)
class Window:
    """A slice of an uncompressed line-based file, for reading it in parallel.

    Only the lines that start in ``[start, end)`` are read (both are line starts, found by the
    planner); line and record numbers continue from ``first_line`` and ``first_record`` so that
    every message and result names the same line as a whole-file read would.
    """

    start: int
    end: int
    first_line: int
    first_record: int


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How to take text out of a file.

    ``fields``: the paths to read (``text``, ``a.b``, ``messages[].content``; a CSV or Parquet
    column name); empty: every string of the record, at any depth, each its own segment.
    ``detect_shape``: with no ``fields``, take the one text of the usual shapes instead
    (``text``, chat ``messages``, Alpaca, ...): golden sets registered without ``--field``.
    ``id_field``: where to take an item id from (golden sets). A plain-text file is read as
    documents: a paragraph (lines up to a blank line) is one record (``io.readers.paragraphs``);
    ``whole_file``: the whole file is one; ``lines``: each line is one (golden sets: one item per
    line). ``group_by``: a field whose value, the same in consecutive records, makes them one
    document (a sentence-per-record corpus). ``encoding``/``errors``: how to decode bytes
    (strict by default: undecodable bytes are an error with their offset). ``names``: read a
    table's header cells and column names as text too, as JSON keys are (training data); a
    golden set's items are its rows only.
    """

    fields: tuple[str, ...] = ()
    detect_shape: bool = False
    id_field: str | None = None
    whole_file: bool = False
    lines: bool = False
    group_by: str | None = None
    encoding: str = "utf-8"
    errors: str = "strict"
    window: Window | None = None
    names: bool = True
    max_member_bytes: int = MAX_MEMBER_BYTES
    """The most bytes one archive member may inflate to (``io.readers.member``)."""

    @property
    def reads_names(self) -> bool:
        """Whether header cells and column names are read: ``names``, and not a golden set's
        read (``detect_shape`` or an ``id_field``: items are rows)."""
        return self.names and not self.detect_shape and self.id_field is None


class Reader(Protocol):
    def __call__(self, path: Input, display: str, options: ReadOptions) -> Iterator[Record]: ...


class UnsupportedFileError(InputError):
    """The file cannot be read as text at all (e.g. binary data in a ``.txt`` file).

    Callers skip such a file with a notice instead of stopping the run.
    """
