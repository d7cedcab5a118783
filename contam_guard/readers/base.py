"""The record model every reader yields, and the reader protocol."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from contam_guard.errors import InputError


@dataclass(frozen=True, slots=True)
class Record:
    """One training (or golden) document.

    ``index`` is the 0-based record number within ``source``; ``line`` the 1-based line on
    which the record starts (None for formats without lines, such as Parquet).
    ``raw`` holds the record's exact bytes where the format has them (a JSONL or text line,
    line ending included), so a scrub can copy untouched records byte for byte.
    ``allow`` is set when the record carries the inline marker ``"contam_guard": "allow"``.
    ``fields`` is the record's top-level field names (for messages about missing fields).
    """

    source: str
    index: int
    line: int | None
    text: str
    raw: bytes | None = None
    allow: bool = False
    item_id: str | None = None


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

    ``field``: a dotted path (``a.b``, ``messages[].content``) or None to detect the usual
    shapes. ``id_field``: where to take an item id from (golden sets). ``whole_file``: a
    plain-text file is one document instead of one per line. ``encoding``/``errors``: how to
    decode bytes (strict by default: undecodable bytes are an error with their offset).
    """

    field: str | None = None
    id_field: str | None = None
    whole_file: bool = False
    encoding: str = "utf-8"
    errors: str = "strict"
    window: Window | None = None


class Reader(Protocol):
    def __call__(self, path: Path, display: str, options: ReadOptions) -> Iterator[Record]: ...


class UnsupportedFileError(InputError):
    """The file cannot be read as text at all (e.g. binary data in a ``.txt`` file).

    Callers skip such a file with a notice instead of stopping the run.
    """
