"""Reading a line-based file (JSONL, plain text) in blocks of whole records, for the prefilter.

``read_line_blocks`` reads blocks of about ``BLOCK_BYTES`` of whole records and hands each to a
line filter (the scan's prefilter), which says of every line whether it is blank, whether it
continues the record above (a plain-text paragraph's later lines), and whatever else the caller
needs; the caller turns only the records it must into a ``Record``, with the format's own
parser (``jsonl.JsonLineParser``, ``plaintext.TextLineParser``), so records, line numbers and
errors are the ones the line-by-line readers give. A JSONL record is a line; a plain-text
record is a paragraph (``io.readers.paragraphs``), so a block ends at a paragraph's end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec import native
from contam_guard.errors import InputError
from contam_guard.io.readers.base import Input, ReadOptions, Record, StreamError
from contam_guard.io.readers.opener import Source, open_binary
from contam_guard.io.readers.paragraphs import Counted, paragraph_lines, text_block_end

if TYPE_CHECKING:
    from contam_guard.io.readers.opener import InputStream

BLOCK_BYTES = 4 << 20


def _blank() -> int:
    """The status a line filter gives a blank line (the kernels define it; read when first needed,
    so that importing the readers does not load the kernels)."""
    blank: int = native.module().LINE_BLANK
    return blank


def _more() -> int:
    """The status a line filter gives a line that continues the record above."""
    more: int = native.module().LINE_MORE
    return more


BlockEnd = Callable[[bytearray, int], int]
"""Where a block of whole records ends in ``buffer[:filled]`` (0: no record complete yet)."""


def last_line_end(buffer: bytearray, filled: int) -> int:
    return buffer.rfind(b"\n", 0, filled) + 1


class LineParser(Protocol):
    """One format's reading of one record (a line, or a plain-text paragraph's lines) and of the
    file's first bytes, if it sniffs them. ``paragraphs``: its records are paragraphs."""

    head_size: int
    paragraphs: bool

    def check_head(self, head: bytes) -> None: ...

    def parse(self, raw: bytes, *, line: int, offset: int, index: int) -> Record: ...


class LineStatuses(Protocol):
    """What a line filter says of a block: per line, the offset just past it and a status
    (0 for a blank line, which is not a record)."""

    @property
    def end(self) -> NDArray[np.int64]: ...

    @property
    def status(self) -> NDArray[np.uint8]: ...


Filtered = TypeVar("Filtered", bound=LineStatuses)


@dataclass(frozen=True)
class LineBlock(Generic[Filtered]):
    """A block of whole lines, what the line filter said of it, and where it lies in the file."""

    data: memoryview
    """Valid until the next block is read (``line_blocks``)."""
    lines: Filtered
    first_line: int
    first_offset: int
    first_record: int
    parser: LineParser

    @cached_property
    def _records_before(self) -> NDArray[np.int64]:
        record = starts_record(self.lines.status)
        counts: NDArray[np.int64] = np.cumsum(record) - record
        return counts

    def record(self, k: int) -> Record:
        """The record starting on line ``k`` of the block read exactly (with the lines that
        continue it): the reader's record, or its error."""
        start = int(self.lines.end[k - 1]) if k else 0
        last, status, more = k, self.lines.status, _more()
        while last + 1 < status.size and status[last + 1] == more:
            last += 1
        return self.parser.parse(
            bytes(self.data[start : int(self.lines.end[last])]),
            line=self.first_line + k,
            offset=self.first_offset + start,
            index=self.first_record + int(self._records_before[k]),
        )


def starts_record(status: NDArray[np.uint8]) -> NDArray[np.bool_]:
    """The lines a record starts on: neither blank nor the continuation of the one above."""
    starts: NDArray[np.bool_] = (status != _blank()) & (status != _more())
    return starts


@contextmanager
def _open(path: Input, display: str, options: ReadOptions, parser: LineParser) -> Iterator[Source]:
    """The file opened as ``options`` say, its head checked by ``parser``."""
    with open_binary(
        path,
        display,
        head_size=parser.head_size,
        window=options.window,
        encoding=options.encoding,
        errors=options.errors,
    ) as src:
        parser.check_head(src.head)
        yield src


def parsed_lines(path: Input, display: str, options: ReadOptions, parser: LineParser) -> Iterator[Record]:
    """Every record of a file through ``parser``, one at a time (``.gz``/``.zst`` allowed): each
    non-blank line, or with ``parser.paragraphs`` each paragraph (``io.readers.paragraphs``).

    ``raw`` is the record's exact bytes with its ending; ``line`` the physical line it starts on;
    ``index`` counts records. Errors name the line (and byte offset for bad bytes).
    """
    if parser.paragraphs:
        yield from _parsed_paragraphs(path, display, options, parser)
        return
    with _open(path, display, options, parser) as src:
        offset = src.first_offset + src.bom_length  # file offset of the current line
        line = src.first_line - 1
        index = src.first_record
        try:
            for raw in src.stream:
                line += 1
                if not raw.isspace():
                    yield parser.parse(raw, line=line, offset=offset, index=index)
                    index += 1
                offset += len(raw)
        except StreamError as exc:
            # Raised while fetching the next line: that line is where reading stopped.
            raise InputError(display, exc.problem, line=line + 1, hint=exc.hint) from exc


def parsed_block(
    block: bytes, parser: LineParser, first_line: int, first_record: int, first_offset: int
) -> Iterator[Record]:
    """Every non-blank line of ``block`` (whole lines) through ``parser``, numbered from
    ``first_line`` and ``first_record`` (where the block lies in its input)."""
    data = bytes(block)
    start, line, index = 0, first_line, first_record
    while start < len(data):
        end = data.find(b"\n", start)  # lines end at \n only, as the line readers split them
        end = len(data) if end < 0 else end + 1
        raw = data[start:end]
        if not raw.isspace():
            yield parser.parse(raw, line=line, offset=first_offset + start, index=index)
            index += 1
        start, line = end, line + 1


def _parsed_paragraphs(
    path: Input, display: str, options: ReadOptions, parser: LineParser
) -> Iterator[Record]:
    with _open(path, display, options, parser) as src:
        offset = src.first_offset + src.bom_length
        index = src.first_record
        counted = Counted(src.stream)
        try:
            for paragraph in paragraph_lines(counted):
                if paragraph is not None:
                    line = src.first_line + paragraph.first_line
                    yield parser.parse(
                        paragraph.raw, line=line, offset=offset + paragraph.offset, index=index
                    )
                    index += 1
        except StreamError as exc:
            raise InputError(display, exc.problem, line=src.first_line + counted.read, hint=exc.hint) from exc


def read_line_blocks(
    path: Input,
    display: str,
    options: ReadOptions,
    parser: LineParser,
    line_filter: Callable[[memoryview], Filtered],
    *,
    block_bytes: int | None = None,
) -> Iterator[LineBlock[Filtered]]:
    """Read a file in blocks of whole lines, each with what ``line_filter`` says of it.

    The caller reads the lines it needs with ``LineBlock.record``: numbering and errors are the
    line-by-line reader's. A read failure (corrupt compression) comes after the blocks of whole
    lines read before it, naming the line where reading stopped, as that reader does.
    """
    with _open(path, display, options, parser) as src:
        offset = src.first_offset + src.bom_length  # file offset of the block
        line = src.first_line  # the block's first line
        index = src.first_record
        block_end = text_block_end if parser.paragraphs else last_line_end
        try:
            for data in line_blocks(src.stream, block_bytes or BLOCK_BYTES, block_end):
                lines = line_filter(data)
                yield LineBlock(data, lines, line, offset, index, parser)
                line += int(lines.end.size)
                offset += len(data)
                index += int(np.count_nonzero(starts_record(lines.status)))
        except StreamError as exc:
            raise InputError(display, exc.problem, line=line, hint=exc.hint) from exc


def line_blocks(
    stream: InputStream, block_bytes: int, block_end: BlockEnd = last_line_end
) -> Iterator[memoryview]:
    """Blocks of whole lines of about ``block_bytes`` (a longer line is one block of its own),
    each ending where ``block_end`` says a record ends (by default at its last newline; plain
    text by paragraph: ``paragraphs.text_block_end``).

    The blocks are views of one buffer that the next block reuses: no fresh memory per block
    (the page faults of a new 4 MB buffer each time cost more than reading the file from the
    page cache). A block is valid until the next is asked for; copy what must outlive it.

    When reading fails, the whole lines read before the failure come first, then the error:
    what a line-by-line read would have given.
    """
    buffer = bytearray(block_bytes)
    filled = 0
    while True:
        while filled < len(buffer):
            try:
                count = stream.readinto1(memoryview(buffer)[filled:])
            except StreamError:
                cut = buffer.rfind(b"\n", 0, filled) + 1
                if cut:
                    yield memoryview(buffer)[:cut]
                raise
            if not count:  # end of the stream: what is left is the last line
                if filled:
                    yield memoryview(buffer)[:filled]
                return
            filled += count
        cut = block_end(buffer, filled)
        if not cut:  # inside one long record: a larger buffer (a new one: the old may still be viewed)
            larger = bytearray(2 * len(buffer))
            larger[:filled] = buffer
            buffer = larger
            continue
        yield memoryview(buffer)[:cut]
        rest = filled - cut
        buffer[:rest] = buffer[cut:filled]  # the partial line moves to the front (same size)
        filled = rest
