"""Plain text as documents: a paragraph (non-blank lines up to a blank line) is one record.

Prose is wrapped: an editor, ``textwrap``, a Markdown paragraph or a quoted ``> `` block puts a
test question on several lines, and a guard that reads one line per record never sees a run of
13 words. So a plain-text file is read by paragraph; the line breaks inside one are whitespace
(word boundaries), so a run crosses them. A line is blank when it is whitespace only
(``bytes.isspace``, as before).

A paragraph is also cut after the line at which it reaches ``PARAGRAPH_BYTES`` (16 KiB, about
2,500 words: longer than prose paragraphs are): a file with no blank line at all (a corpus of
one document per line, a log) is then read in records of about that size rather than as one
record the size of the file. A run that crosses such a cut is read as two (at most one cut per
``PARAGRAPH_BYTES`` of text without a blank line). The size also bounds what one uncommon code
point costs: a record holding one the compiled kernels leave to the reference path
(``core/spec/located.py``) goes through that path whole (at 1 MiB, GSM8K's questions one per line
without a blank line took 28 s to scan instead of 2).

The rule depends only on the bytes from the start of a record, so every reader applies it the
same way: the line-by-line reader (``paragraph_lines``), the compiled prefilter (``csrc/native.c``
``text_record_end``), blocks of whole records (``text_block_end``) and the scrub's passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from contam_guard.core.spec.constants import PARAGRAPH_BYTES as PARAGRAPH_BYTES  # noqa: PLC0414 (importable from here too)

_BLANK_LINE = re.compile(rb"^[ \t\r\x0b\x0c]*\n", re.MULTILINE)
"""A whitespace-only line with its newline (``bytes.isspace``'s whitespace)."""
_LOOK_BACK = 1 << 16


@dataclass(frozen=True, slots=True)
class Paragraph:
    """The raw bytes of one record's lines (endings included), its first line (0-based among
    the lines read) and the byte offset where it starts."""

    raw: bytes
    first_line: int
    offset: int


class Counted:
    """The lines of ``stream``, counting in ``read`` how many have been taken (the line an error
    of the stream is reported at)."""

    def __init__(self, stream: Iterable[bytes]) -> None:
        self.stream = stream
        self.read = 0

    def __iter__(self) -> Iterator[bytes]:
        for raw in self.stream:
            self.read += 1
            yield raw


def paragraph_lines(lines: Iterable[bytes]) -> Iterator[Paragraph | None]:
    """The records of a stream of lines: a ``Paragraph`` as each completes, and None for each
    blank line (so a caller can count lines). Lines still pending when ``lines`` raises are
    yielded first: the whole lines read before a failure are read."""
    pending: list[bytes] = []
    size = first = offset = line = at = 0
    try:
        for raw in lines:
            if raw.isspace():
                if pending:
                    yield Paragraph(b"".join(pending), first, offset)
                    pending, size = [], 0
                yield None
            else:
                if not pending:
                    first, offset = line, at
                pending.append(raw)
                size += len(raw)
                if size >= PARAGRAPH_BYTES:
                    yield Paragraph(b"".join(pending), first, offset)
                    pending, size = [], 0
            line += 1
            at += len(raw)
    except Exception:
        if pending:
            yield Paragraph(b"".join(pending), first, offset)
        raise
    if pending:
        yield Paragraph(b"".join(pending), first, offset)


def first_blank_end(data: bytes) -> int | None:
    """Where the first blank line of ``data`` (whole lines from a line start) ends, if any."""
    found = _BLANK_LINE.search(data)
    return None if found is None else found.end()


def text_block_end(data: bytes | bytearray, filled: int) -> int:
    """Where a block of whole records ends in ``data[:filled]`` (whole lines that start at a
    record's start): just past the last blank line, or past the last record cut at
    ``PARAGRAPH_BYTES`` after it; 0 when no record is known to be complete yet (the caller reads
    on). The end of the input ends a record too: the caller takes everything there."""
    cut = 0
    # The last blank line: in the last 64 KiB first (prose has one every few lines).
    for start in dict.fromkeys((max(filled - _LOOK_BACK, 0), 0)):
        found = None
        for match in _BLANK_LINE.finditer(data, start, filled):
            found = match
        if found is not None:
            cut = found.end()
            break
    while cut + PARAGRAPH_BYTES <= filled:  # the records after it that reached PARAGRAPH_BYTES
        newline = data.find(b"\n", cut + PARAGRAPH_BYTES - 1, filled)
        if newline < 0:
            break
        cut = newline + 1
    return cut


_BLANK_RUN = re.compile(rb"(?:^[ \t\r\x0b\x0c]*(?:\n|\Z))+", re.MULTILINE)
"""A run of whitespace-only lines."""


def count_records(data: bytes | bytearray | memoryview) -> int:
    """The records in ``data``: whole lines of plain text that start at a record's start and end
    at one's end (a block of ``text_block_end``, the parallel planner's windows)."""
    count = start = 0
    for blank in _BLANK_RUN.finditer(data):
        count += _records_between(data, start, blank.start())
        start = blank.end()
    return count + _records_between(data, start, len(data))


def _records_between(data: bytes | bytearray | memoryview, start: int, end: int) -> int:
    """The records of the non-blank lines ``data[start:end]``: one paragraph, cut at
    ``PARAGRAPH_BYTES``."""
    if start >= end:
        return 0
    count = 1
    while end - start > PARAGRAPH_BYTES:  # rare: copy only such a paragraph
        newline = bytes(data[start + PARAGRAPH_BYTES - 1 : end]).find(b"\n")
        if newline < 0 or start + PARAGRAPH_BYTES + newline >= end:
            break
        start += PARAGRAPH_BYTES + newline
        count += 1
    return count
