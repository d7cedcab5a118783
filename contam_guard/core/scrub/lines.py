"""Lines of a JSONL or text input as bytes, the touched ones parsed, and pieces written back.

The first pass reads records with the ordinary readers (which validate everything and name
file:line on any error). Later passes walk the same file's lines as raw bytes, numbering the
records exactly as the readers do (a JSONL line is a record unless it is blank; plain text is
read by paragraph, ``io.readers.paragraphs``), so untouched records and blank lines are copied byte
for byte and only touched records are parsed again. A plain-text record's pieces keep its line
breaks and are written as paragraphs of their own (a blank line between), so that reading the
output again gives the pieces as records.
"""

from __future__ import annotations

import bisect
import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePath
from typing import BinaryIO, Protocol

import numpy as np
import zstandard
from numpy.typing import NDArray

from contam_guard.core.spec import native
from contam_guard.core.spec.hashing import GRAM_N
from contam_guard.errors import InputError
from contam_guard.io.readers import SNIFF, ReadOptions, detect_format
from contam_guard.io.readers.base import StreamError
from contam_guard.io.readers.blocks import BLOCK_BYTES, last_line_end, line_blocks
from contam_guard.io.readers.compression import compression_of
from contam_guard.io.readers.fields import KEY_MARK, DupObject, parse_field, record_from_object, strings_in
from contam_guard.io.readers.jsonl import JsonLineParser
from contam_guard.io.readers.opener import UTF8_BOM, open_binary
from contam_guard.io.readers.paragraphs import PARAGRAPH_BYTES, Counted, paragraph_lines, text_block_end

FORMATS = ("jsonl", "text")
PIECE_FIELD = "contam_guard_piece"


class Sink(Protocol):
    def write(self, data: bytes | memoryview, /) -> int | None: ...


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    """1-based physical line (after any BOM), as the readers count; a paragraph's first line."""
    raw: bytes
    """The line, or a plain-text paragraph's lines, with their endings."""
    record: int | None
    """The record number (0-based), None for a blank line."""


@dataclass(frozen=True)
class Parsed:
    """A touched record, parsed again: its segments' texts, line ending and (JSONL) object.

    Offsets into a record (kept pieces, removals) count characters of ``text``, its segments
    joined by newlines; n-grams are found per segment (``GoldenNgrams.find_segmented``), never
    across two.
    """

    segments: tuple[str, ...]
    ending: bytes
    obj: dict[str, object] | None
    target: tuple[str, ...] | None
    """Keys leading to the one string field that holds the text (one ``--field`` naming a
    string); None when the record's text is several strings (every string read, chat turns, a
    list) and cannot be cut into pieces."""
    item_id: object

    @cached_property
    def text(self) -> str:
        return "\n".join(self.segments)


# How pandas reads each format scrub cannot write back, for the hint (pyarrow, a dependency,
# gives pandas its Parquet reader). JSONL out keeps one record per line, as scrub wants.
_PANDAS_READERS = {
    "csv": "pd.read_csv(f)",
    "tsv": "pd.read_csv(f, sep='\\t')",
    "json": "pd.read_json(f)",
    "parquet": "pd.read_parquet(f)",
}


def scrub_format(path: PurePath, display: str) -> str:
    """The input's format, or an ``InputError`` for a format scrub cannot write back (the hint
    shows how to convert that format to JSONL)."""
    fmt = detect_format(path)
    written = compression_of(path) == "plain" or path.name.lower().endswith((".gz", ".zst"))
    if fmt in FORMATS and not written:
        # Read through any compression, but written back compressed only as .gz or .zst: an
        # .xz (or .gzip, .lz4, ...) input would be replaced by plain text under its own name.
        raise InputError(
            display,
            f"scrub writes .gz and .zst files, not {path.suffix}",
            hint="decompress it (or recompress it as .gz or .zst) and scrub that file",
        )
    if fmt not in FORMATS:
        kind = "a file of no known format" if fmt == SNIFF else fmt.upper()
        hint = "convert it to JSONL (one JSON object per line) first"
        if fmt in _PANDAS_READERS:
            hint += f", e.g. with pandas: {_PANDAS_READERS[fmt]}.to_json(out, orient='records', lines=True)"
        raise InputError(display, f"scrub supports JSONL and text files, not {kind}", hint=hint)
    return fmt


def pandas_reader(path: PurePath) -> str | None:
    """How pandas reads ``path`` (as ``f``) when scrub refuses its format, else None: the
    conversion a failing scan's next steps show (``next_steps``)."""
    return _PANDAS_READERS.get(detect_format(path) or "")


@dataclass(frozen=True)
class LineSpans:
    """Whole records of an input: ``data``, starting at physical line ``first_line``; its
    records are plain-text ``paragraphs`` or lines."""

    data: memoryview
    """Valid until the next block is read (``io.readers.blocks.line_blocks``)."""
    first_line: int
    paragraphs: bool = False

    @cached_property
    def ends(self) -> NDArray[np.int64]:
        """Offset just past each line."""
        return native.line_ends(self.data)

    @property
    def lines(self) -> int:
        return int(self.ends.size)

    def span(self, number: int) -> tuple[int, int]:
        """[start, end) of the record starting on physical line ``number`` (which must lie in
        this block): the line, or the paragraph's lines (``io.readers.paragraphs``)."""
        k = number - self.first_line
        start, end = (int(self.ends[k - 1]) if k else 0), int(self.ends[k])
        while self.paragraphs and end - start < PARAGRAPH_BYTES and k + 1 < self.lines:
            k += 1
            following = int(self.ends[k])
            if bytes(self.data[end:following]).isspace():
                break
            end = following
        return start, end


@contextmanager
def open_blocks(path: Path, display: str, fmt: str) -> Iterator[tuple[bool, Iterator[LineSpans]]]:
    """(whether the file starts with a UTF-8 BOM, its records in blocks) for one pass that needs
    only a few records: the rest are never split, let alone parsed."""
    paragraphs = fmt == "text"
    with open_binary(path, display) as src:

        def blocks() -> Iterator[LineSpans]:
            number = 1
            try:
                for data in line_blocks(
                    src.stream, BLOCK_BYTES, text_block_end if paragraphs else last_line_end
                ):
                    block = LineSpans(data, number, paragraphs)
                    yield block
                    number += block.lines
            except StreamError as exc:
                raise InputError(display, exc.problem, line=number, hint=exc.hint) from exc

        yield src.bom_length > 0, blocks()


def lines_in(block: LineSpans, wanted: list[int]) -> list[int]:
    """The line numbers of ``wanted`` (sorted) that lie in ``block``."""
    low = bisect.bisect_left(wanted, block.first_line)
    high = bisect.bisect_left(wanted, block.first_line + block.lines)
    return wanted[low:high]


@contextmanager
def open_lines(path: Path, display: str, fmt: str) -> Iterator[tuple[bool, Iterator[Line]]]:
    """(whether the file starts with a UTF-8 BOM, its records and blank lines) for one pass."""
    with open_binary(path, display) as src:

        def lines() -> Iterator[Line]:
            record = 0
            number = 0
            try:
                for raw in src.stream:
                    number += 1
                    if raw.isspace():
                        yield Line(number, raw, None)
                    else:
                        yield Line(number, raw, record)
                        record += 1
            except StreamError as exc:
                raise InputError(display, exc.problem, line=number + 1, hint=exc.hint) from exc

        def paragraphs() -> Iterator[Line]:
            record = 0
            counted = Counted(src.stream)
            try:
                for paragraph in paragraph_lines(counted):
                    if paragraph is not None:
                        yield Line(paragraph.first_line + 1, paragraph.raw, record)
                        record += 1
            except StreamError as exc:
                raise InputError(display, exc.problem, line=counted.read + 1, hint=exc.hint) from exc

        yield src.bom_length > 0, paragraphs() if fmt == "text" else lines()


def _ending(raw: bytes) -> bytes:
    if raw.endswith(b"\r\n"):
        return b"\r\n"
    return b"\n" if raw.endswith(b"\n") else b""


def field_target(
    obj: dict[str, object], fields: tuple[str, ...], id_field: str | None = None
) -> tuple[str, ...] | None:
    """Keys to the one string holding the text, or None (see ``Parsed.target``).

    With one ``--field``: its path, when it has no list step and ends at a string. Without: the
    record's one string value besides its id (``{"id": ..., "text": ...}``), when it sits at a
    top-level key; a record of several strings (a prompt and its completion, chat turns) has
    none. Never in an object with a repeated key (a piece is the object written again, which
    would keep only one of the two values).
    """
    if _repeats_a_key(obj):
        return None
    if not fields:
        ids = {"id"} if id_field is None else {id_field}
        strings = strings_in(obj)
        values = [s for s in strings if not s.path.endswith(KEY_MARK) and s.path not in ids]
        if len(values) != 1 or values[0].path not in obj or not isinstance(obj[values[0].path], str):
            return None
        # Every other string (keys, the id) must be too short to hold an n-gram of the rule
        # (5 words at least), or cutting only the one field could leave a collision behind.
        if any(len(s.text.split()) >= GRAM_N for s in strings if s is not values[0]):
            return None
        return (values[0].path,)
    if len(fields) != 1:
        return None
    steps = parse_field(fields[0])
    if any(step.each for step in steps):
        return None
    value: object = obj
    for step in steps:
        if not isinstance(value, dict):
            return None
        value = value.get(step.key)
    return tuple(step.key for step in steps) if isinstance(value, str) else None


def _repeats_a_key(value: object) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, DupObject) and node.repeats:
            return True
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def parse_line(fmt: str, line: Line, display: str, read: ReadOptions) -> Parsed:
    """Parse a record line again (it was validated by the first pass), as the readers do."""
    ending = _ending(line.raw)
    try:
        if fmt == "text":
            text = line.raw.decode(read.encoding, read.errors)
            return Parsed((text[: len(text) - len(ending)],), ending, None, None, None)
        obj = JsonLineParser(display, read).value(line.raw, line=line.number, offset=0)
        record = record_from_object(
            obj, read, source=display, index=line.record or 0, line=line.number, raw=None
        )
    except (ValueError, InputError) as exc:  # UnicodeDecodeError is a ValueError
        raise changed_error(display, line.number) from exc
    if not isinstance(obj, dict):
        return Parsed(tuple(s.text for s in record.segments), ending, None, None, None)
    item_id: object = record.item_id
    if read.id_field is None:
        found = obj.get("id")
        item_id = found if isinstance(found, (str, int)) and not isinstance(found, bool) else None
    target = field_target(obj, read.fields, read.id_field)
    if target is not None and not read.fields:  # one string besides keys and id: scrub that one
        value = obj[target[0]]
        assert isinstance(value, str)
        return Parsed((value,), ending, obj, target, item_id)
    segments = tuple(s.text for s in record.segments)
    return Parsed(segments, ending, obj, target, item_id)


def changed_error(display: str, line: int | None = None) -> InputError:
    return InputError(
        display,
        "the file changed while it was being scrubbed; nothing was written",
        line=line,
        hint="run scrub again once nothing else writes to the file",
    )


def render(fmt: str, parsed: Parsed, record: int, pieces: tuple[tuple[int, int], ...]) -> bytes:
    """The output lines for a touched record: its pieces, one record each (none if dropped)."""
    if not pieces:
        return b""
    ending = parsed.ending or b"\n"  # a last line without one gets "\n" between pieces
    if fmt == "text":  # each piece a paragraph of its own: a blank line between them
        texts = [parsed.text[start:end].encode("utf-8") for start, end in pieces]
        return (ending + ending).join(texts) + parsed.ending
    assert parsed.obj is not None and parsed.target is not None
    lines = [_piece_json(parsed, record, start, end) for start, end in pieces]
    return ending.join(lines) + parsed.ending


def _piece_json(parsed: Parsed, record: int, start: int, end: int) -> bytes:
    assert parsed.obj is not None and parsed.target is not None
    holder: dict[str, object] = parsed.obj
    for key in parsed.target[:-1]:
        child = holder[key]
        assert isinstance(child, dict)
        holder = child
    holder[parsed.target[-1]] = parsed.text[start:end]
    parsed.obj[PIECE_FIELD] = {"source_record": record, "id": parsed.item_id, "start": start, "end": end}
    try:
        return json.dumps(parsed.obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (from a \ud800 escape) stays escaped
        return json.dumps(parsed.obj).encode("utf-8")


@contextmanager
def output_stream(path: Path, bom: bool, handle: BinaryIO) -> Iterator[Sink]:
    """Write the output ``path`` into ``handle``, compressed when its name ends in ``.gz`` or
    ``.zst`` (the compressed stream is complete when the block ends)."""
    name = path.name.lower()
    if name.endswith(".gz"):
        # mtime=0 and no file name: the same content always gives the same bytes.
        with gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=6) as gz:
            if bom:
                gz.write(UTF8_BOM)
            yield gz
    elif name.endswith(".zst"):
        with zstandard.ZstdCompressor(level=3).stream_writer(handle, closefd=False) as zst:
            if bom:
                zst.write(UTF8_BOM)
            yield zst
    else:
        if bom:
            handle.write(UTF8_BOM)
        yield handle
