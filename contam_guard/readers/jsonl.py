"""JSON Lines: one JSON object per line, streamed in constant memory.

Two ways to read: ``read_jsonl`` yields a ``Record`` per line; ``read_line_blocks`` reads
blocks of whole lines and hands each to a line filter (the scan's prefilter), so that only the
lines that need a ``Record`` become one. Both parse a line the same way (``LineParser``), so records,
line numbers and errors are the same whichever way a file is read.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import numpy as np
import orjson
from numpy.typing import NDArray

from contam_guard.errors import InputError
from contam_guard.readers.base import ReadOptions, Record
from contam_guard.readers.decoding import check_encoding, decode_failure
from contam_guard.readers.fields import record_from_object
from contam_guard.readers.opener import StreamError, open_binary

if TYPE_CHECKING:
    from contam_guard.readers.opener import InputStream

_JSON_WS = " \t\r\n"


def exact_parse(
    text: str,
    scan: Callable[[str, int], tuple[object, int]],
    loads: Callable[[str], object],
) -> object:
    """``json.loads(text)``, faster on the common case of a line starting with a value.

    ``json.loads`` spends about half its time on whitespace regexes around the C scanner;
    calling the scanner directly and checking the tail ourselves halves the parse cost.
    Anything unusual falls back to ``json.loads`` for its exact error message.
    """
    try:
        obj, end = scan(text, 0)
    except StopIteration:  # leading whitespace, or not JSON
        return loads(text)
    if end != len(text) and text[end:].strip(_JSON_WS):
        return loads(text)  # trailing data: let json.loads raise "Extra data"
    return obj


NOT_PARSED = object()


def fast_parse(raw: bytes) -> object:
    """orjson parses UTF-8 bytes about 6x faster than json. Whatever it refuses (bad bytes,
    lone surrogates, NaN, huge integers, real errors) returns ``NOT_PARSED``: the exact path then
    decides, so results and error messages are json's."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return NOT_PARSED


class LineParser:
    """One non-blank JSONL line to a ``Record``: json's results, errors naming the line."""

    def __init__(self, display: str, options: ReadOptions) -> None:
        check_encoding(options, display, line_based=True)
        self._display = display
        self._options = options
        # One scanner per file: its key memo is per-object state, so don't share across threads.
        # (typeshed types the context as another scanner; a JSONDecoder is what json passes.)
        self._scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
        encoding = options.encoding.replace("_", "-").lower()
        self._fast = encoding in ("utf-8", "utf8") and options.errors == "strict"

    def parse(self, raw: bytes, *, line: int, offset: int, index: int) -> Record:
        """``raw`` is the line with its ending; ``offset`` its file offset (for decode errors)."""
        display, options = self._display, self._options
        obj = fast_parse(raw) if self._fast else NOT_PARSED
        if obj is NOT_PARSED:
            try:
                text = raw.decode(options.encoding, options.errors)
            except UnicodeDecodeError as exc:
                raise decode_failure(
                    display, exc, line=line, line_offset=offset, encoding=options.encoding
                ) from exc
            try:
                obj = exact_parse(text, self._scan, json.loads)
            except json.JSONDecodeError as exc:
                raise InputError(
                    display,
                    f"invalid JSON: {exc.msg} at column {exc.colno}",
                    line=line,
                    hint="each line must hold exactly one JSON object",
                ) from exc
            except ValueError as exc:  # e.g. an integer beyond int_max_str_digits
                raise InputError(display, f"invalid JSON: {exc}", line=line) from exc
            except RecursionError as exc:
                raise InputError(display, "JSON nested too deeply", line=line) from exc
        return record_from_object(obj, options, source=display, index=index, line=line, raw=raw)


def read_jsonl(path: Path, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per non-blank line of a JSONL file (``.gz``/``.zst`` allowed).

    ``raw`` is the line's exact bytes with its line ending; ``line`` is the physical line;
    ``index`` counts non-blank lines. Errors name the line (and byte offset for bad bytes).
    """
    parser = LineParser(display, options)
    with open_binary(path, display, window=options.window) as src:
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


BLOCK_BYTES = 4 << 20
_BLANK = 0  # the status a line filter gives a blank line


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

    data: bytes
    lines: Filtered
    first_line: int
    first_offset: int
    first_record: int
    parser: LineParser

    @cached_property
    def _records_before(self) -> NDArray[np.int64]:
        record = self.lines.status != _BLANK
        counts: NDArray[np.int64] = np.cumsum(record) - record
        return counts

    def record(self, k: int) -> Record:
        """Line ``k`` of the block read exactly: ``read_jsonl``'s record, or its error."""
        start = int(self.lines.end[k - 1]) if k else 0
        return self.parser.parse(
            self.data[start : int(self.lines.end[k])],
            line=self.first_line + k,
            offset=self.first_offset + start,
            index=self.first_record + int(self._records_before[k]),
        )


def read_line_blocks(
    path: Path,
    display: str,
    options: ReadOptions,
    line_filter: Callable[[bytes], Filtered],
    *,
    block_bytes: int | None = None,
) -> Iterator[LineBlock[Filtered]]:
    """Read a JSONL file in blocks of whole lines, each with what ``line_filter`` says of it.

    The caller reads the lines it needs with ``LineBlock.record``: numbering and errors are
    ``read_jsonl``'s. A read failure (corrupt compression) comes after the blocks of whole lines
    read before it, naming the line where reading stopped, as ``read_jsonl`` does.
    """
    parser = LineParser(display, options)
    with open_binary(path, display, window=options.window) as src:
        offset = src.first_offset + src.bom_length  # file offset of the block
        line = src.first_line  # the block's first line
        index = src.first_record
        try:
            for data in line_blocks(src.stream, block_bytes or BLOCK_BYTES):
                lines = line_filter(data)
                yield LineBlock(data, lines, line, offset, index, parser)
                line += int(lines.end.size)
                offset += len(data)
                index += int(np.count_nonzero(lines.status != _BLANK))
        except StreamError as exc:
            raise InputError(display, exc.problem, line=line, hint=exc.hint) from exc


def line_blocks(stream: InputStream, block_bytes: int) -> Iterator[bytes]:
    """Blocks of whole lines of about ``block_bytes`` (a longer line is one block of its own).

    When reading fails, the whole lines read before the failure come first, then the error:
    what a line-by-line read would have given.
    """
    held: list[bytes] = []  # bytes read since the last block
    held_size = 0
    searched = 0  # bytes of ``held`` known to hold no newline
    while True:
        try:
            chunk = stream.read1(block_bytes)
        except StreamError:
            data = b"".join(held)
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
            raise
        if not chunk:
            if held_size:
                yield b"".join(held)
            return
        held.append(chunk)
        held_size += len(chunk)
        if held_size < block_bytes:
            continue
        data = b"".join(held)
        cut = data.rfind(b"\n", searched) + 1
        if not cut:  # inside one long line: keep reading
            held, searched = [data], held_size
            continue
        yield data[:cut]
        rest = data[cut:]
        held, held_size, searched = ([rest] if rest else []), len(rest), len(rest)
