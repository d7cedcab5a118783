"""Rows of the input frame to ``Record``s, inside a task, with the local readers' rules.

A JSONL line is parsed as ``readers.jsonl`` parses it (orjson first; whatever orjson refuses, or
a line that may repeat a key, goes through ``json`` for its exact error message) and its
segments are taken out by ``io.readers.fields.record_from_object``; a Parquet row's by
``io.readers.parquet.row_segments``: the same fields, the same errors. Blank lines
are skipped as the local readers skip them (``bytes.isspace`` of the line with its ``\\n``);
a UTF-8 byte-order mark at the start of a file is dropped.

Each split counts its own lines, records and bytes (``SplitCounter``); numbers are split-local
until the driver offsets them (``splits.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from contam_guard.engines.spark.failures import TaskError, TaskInputError
from contam_guard.engines.spark.inputs import InputFile
from contam_guard.errors import InputError
from contam_guard.io.readers.base import ReadOptions, Record, Segment
from contam_guard.io.readers.fields import record_from_object
from contam_guard.io.readers.jsonl import NOT_PARSED, fast_parse, json_scanner, parse_json_text
from contam_guard.io.readers.opener import UTF8_BOM
from contam_guard.io.readers.paragraphs import paragraph_lines
from contam_guard.io.readers.parquet import row_segments


@dataclass
class SplitCounter:
    """Counts for one split: physical lines, records (non-blank lines, rows) and bytes."""

    file: str
    block: int
    lines: int = 0
    records: int = 0
    size: int = 0
    """Bytes of the split's lines, each with its ``\\n``."""
    chars: int = 0

    def line(self, raw: bytes) -> tuple[bytes, int]:
        """Count one physical line; return it (BOM removed) with its split-local byte offset."""
        self.lines += 1
        offset = self.size
        self.size += len(raw) + 1
        if self.lines == 1 and self.block == 0 and raw.startswith(UTF8_BOM):
            raw = raw[len(UTF8_BOM) :]
            offset += len(UTF8_BOM)
        return raw, offset


def is_blank(raw: bytes) -> bool:
    """Blank as the local readers judge it: the line with its ``\\n`` is all whitespace."""
    return not raw or raw.isspace()


class RowReader:
    """Turns input rows into records for one task (one JSON scanner per task, as per file locally)."""

    def __init__(self, read: ReadOptions) -> None:
        self.read = read
        self.fast = read.encoding.replace("_", "-").lower() in ("utf-8", "utf8") and read.errors == "strict"
        self.scan = json_scanner()

    def line_record(self, file: InputFile, split: SplitCounter, raw: bytes, source: str) -> Record | None:
        """The record of one JSONL or text line, or None for a blank line.

        ``source`` names the record's split (the driver renames it); ``line`` and ``index``
        are split-local.
        """
        raw, offset = split.line(raw)
        if is_blank(raw):
            return None
        # Every line but maybe a file's last one ended in "\n": the readers see it, and a JSON
        # error's column (or line) can depend on it.
        raw = raw + b"\n"
        line = split.lines
        try:
            if file.fmt == "text":
                text = self._decode(raw, file, split, line, offset)
                text = text[:-2] if text.endswith("\r\n") else text[:-1]
                record = Record(source=source, index=split.records, line=line, segments=(Segment("", text),))
            else:
                record = self._json(raw, file, split, line, offset, source)
        except InputError as exc:
            error = TaskError(split.file, split.block, exc.problem, line=line, hint=exc.hint)
            raise TaskInputError(error) from None
        split.records += 1
        split.chars += record.chars
        return record

    def text_records(
        self, file: InputFile, split: SplitCounter, data: bytes, source: str
    ) -> Iterator[Record]:
        """The records of a whole plain-text file (one row): its paragraphs, numbered as the local
        reader numbers them (``io.readers.paragraphs``)."""
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()  # the file ended with a newline (or was empty)
        offsets: list[int] = []

        def counted() -> Iterator[bytes]:
            for line in lines:
                raw, offset = split.line(line)
                offsets.append(offset)
                yield raw + b"\n"  # as line_record: every line ends in "\n" for the reader

        for paragraph in paragraph_lines(counted()):
            if paragraph is None:
                continue
            line = paragraph.first_line + 1
            text = self._decode(paragraph.raw, file, split, line, offsets[paragraph.first_line])
            text = text[:-2] if text.endswith("\r\n") else text[:-1]
            segments = (Segment("", text),)
            record = Record(source=source, index=split.records, line=line, segments=segments, text_lines=True)
            split.records += 1
            split.chars += record.chars
            yield record

    def _decode(self, raw: bytes, file: InputFile, split: SplitCounter, line: int, offset: int) -> str:
        """``raw`` (lines from ``line`` on, at split-local ``offset``) decoded, or the task's error
        naming the line of the bad byte."""
        try:
            return raw.decode(self.read.encoding, self.read.errors)
        except UnicodeDecodeError as exc:
            bad = bytes(exc.object[exc.start : exc.start + 1]).hex()
            decode = (bad, exc.start, exc.reason, self.read.encoding)
            line += raw.count(b"\n", 0, exc.start)
            error = TaskError(split.file, split.block, "", line=line, offset=offset, decode=decode)
            raise TaskInputError(error) from None

    def _json(
        self, raw: bytes, file: InputFile, split: SplitCounter, line: int, offset: int, source: str
    ) -> Record:
        obj = fast_parse(raw) if self.fast else NOT_PARSED
        if obj is NOT_PARSED:
            text = self._decode(raw, file, split, line, offset)
            obj = parse_json_text(text, self.scan, file.display, None)
        return record_from_object(obj, self.read, source=source, index=split.records, line=line, raw=None)

    def row_record(
        self,
        file: InputFile,
        split: SplitCounter,
        row: tuple[str | None, bytes | None, int | None, bool],
        source: str,
    ) -> Record:
        """The record of a Parquet or DataFrame row, given as (text, raw, row number, allow):
        a DataFrame's text column in ``text``; a Parquet row's text columns as JSON in ``raw``,
        read by the local Parquet reader's ``row_segments``. Rows have no lines: ``line`` is None.
        """
        text, raw, number, allow = row
        index = split.records if number is None else number
        try:
            if file.absolute and number is None:
                raise InputError(file.display, "the record column is null")
            if file.fmt == "frame":
                column = file.sources[0].column
                if text is None:
                    raise InputError(file.display, f"column {column!r} is null")
                segments: tuple[Segment, ...] = (Segment(column, text),)
            else:
                assert raw is not None
                values = json.loads(raw)
                named = bool(self.read.fields)
                segments = row_segments(list(file.sources), values, named, file.display, index)
                if index == 0:
                    segments = file.names + segments
        except InputError as exc:
            error = TaskError(split.file, split.block, exc.problem, record=index, hint=exc.hint)
            raise TaskInputError(error) from None
        record = Record(source=source, index=index, line=None, segments=segments, allow=allow)
        split.records += 1
        split.chars += record.chars
        return record
