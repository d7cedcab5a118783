"""Parquet: one record per row, streamed a batch at a time from the needed columns."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contam_guard.errors import InputError
from contam_guard.readers.base import ReadOptions, Record, Segment
from contam_guard.readers.fields import (
    ALLOW_KEY,
    ALLOW_VALUE,
    extract_id,
    parse_field,
    segments_of,
    strings_in,
)
from contam_guard.readers.opener import check_regular_file
from contam_guard.readers.shapes import SIMPLE_TEXT_KEYS

_BATCH_ROWS = 1024
_ARROW_ERRORS = (pa.ArrowException, OSError, ValueError)
_EMPTY_HINT = "re-create or re-download the file; a zero-byte file is a failed write or download"


@dataclass(frozen=True, slots=True)
class ColumnSource:
    """Where a value comes from: a whole column, or a field path into a nested column."""

    column: str
    path: str | None  # None: the column's value itself


def _is_string(dtype: pa.DataType) -> bool:
    if pa.types.is_dictionary(dtype):
        return _is_string(dtype.value_type)
    return bool(
        pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype)
    )


def locate(names: list[str], name: str, what: str, display: str) -> ColumnSource:
    """The column ``name``, or the column a path such as ``messages[].content`` starts in."""
    if name in names:
        return ColumnSource(name, None)
    try:
        first = parse_field(name)[0].key
    except ValueError as exc:
        raise InputError(display, str(exc)) from exc
    if first not in names or first == name:
        raise InputError(display, f"{what} column {first!r} not found; columns: {', '.join(names)}")
    return ColumnSource(first, name)


def _holds_strings(dtype: pa.DataType) -> bool:
    """Whether values of ``dtype`` can hold text: strings, or lists, structs and maps of them."""
    if _is_string(dtype):
        return True
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype):
        return _holds_strings(dtype.value_type)
    if pa.types.is_list_view(dtype) or pa.types.is_large_list_view(dtype):
        return _holds_strings(dtype.value_type)
    if pa.types.is_struct(dtype):
        return any(_holds_strings(dtype.field(i).type) for i in range(dtype.num_fields))
    if pa.types.is_map(dtype):
        return _holds_strings(dtype.key_type) or _holds_strings(dtype.item_type)
    return False


def text_sources(
    names: list[str], holds_strings: Callable[[str], str | None], options: ReadOptions, display: str
) -> list[ColumnSource]:
    """Where the text comes from, for a table with columns ``names``: the ``--field`` columns or
    paths, else every column that can hold text. ``holds_strings(column)`` is None for a column
    that can hold text, else its type's name (for the message). Shared with the Spark engine."""
    if options.fields:
        sources = [locate(names, field, "text", display) for field in options.fields]
        for src in sources:
            kind = holds_strings(src.column)
            if src.path is None and kind is not None:
                raise InputError(display, f"text column {src.column!r} has type {kind}, expected string")
        return sources
    return [ColumnSource(name, None) for name in names if holds_strings(name) is None]


def _text_sources(schema: pa.Schema, options: ReadOptions, display: str) -> list[ColumnSource]:
    """``text_sources`` for a Parquet schema; with ``detect_shape`` (golden sets without
    ``--field``) the first usual text column."""

    def holds_strings(column: str) -> str | None:
        dtype = schema.field(column).type
        return None if _holds_strings(dtype) else str(dtype)

    if not options.detect_shape or options.fields:
        return text_sources(schema.names, holds_strings, options, display)
    found = next((n for n in SIMPLE_TEXT_KEYS if n in schema.names), None)
    if found is None:
        raise InputError(
            display,
            f"no text column found (looked for {', '.join(SIMPLE_TEXT_KEYS)}); "
            f"columns: {', '.join(schema.names)}",
            hint="pass --field with a column name or a path such as messages[].content",
        )
    dtype = schema.field(found).type
    if not _is_string(dtype):
        raise InputError(display, f"text column {found!r} has type {dtype}, expected string")
    return [ColumnSource(found, None)]


def _id_source(schema: pa.Schema, id_field: str, display: str, what: str = "id") -> ColumnSource:
    src = locate(schema.names, id_field, what, display)
    dtype = schema.field(src.column).type
    if src.path is None and not (_is_string(dtype) or pa.types.is_integer(dtype)):
        raise InputError(
            display, f"{what} column {src.column!r} has type {dtype}, expected string or integer"
        )
    return src


def _id_value(src: ColumnSource, value: object, display: str, row: int) -> str | None:
    try:
        if src.path is not None:
            return extract_id({src.column: value}, src.path, path=display, line=None)
        if value is None:
            raise InputError(display, f"column {src.column!r} is null")
        return value if isinstance(value, str) else str(value)
    except InputError as exc:
        raise InputError(display, f"row {row}: {exc.problem}", hint=exc.hint) from exc


def row_segments(
    sources: list[ColumnSource], values: Mapping[str, object], named: bool, display: str, row: int
) -> tuple[Segment, ...]:
    """The segments of one row, column source by column source (shared with the Spark engine)."""
    return tuple(
        segment for src in sources for segment in _segments(src, values.get(src.column), named, display, row)
    )


def _segments(src: ColumnSource, value: object, named: bool, display: str, row: int) -> list[Segment]:
    """The segments of one column value: every string in it (a map's pairs are its keys and
    values), or the strings at ``src.path``. A null in a column named by ``--field`` is an error;
    elsewhere it holds no text."""
    try:
        if src.path is not None:
            read = ReadOptions(fields=(src.path,))
            return list(segments_of({src.column: value}, read, path=display, line=None))
        if value is None and named:
            raise InputError(display, f"column {src.column!r} is null")
        return strings_in(value, src.column)
    except InputError as exc:
        raise InputError(display, f"row {row}: {exc.problem}", hint=exc.hint) from exc


def read_parquet(path: Path, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per row of a Parquet file, reading only the needed columns.

    ``line`` is None; ``index`` is the row number. Every column that can hold text is read
    (strings, and lists, structs and maps of them; each string a segment), or only the
    ``--field`` columns or paths such as ``messages[].content`` whose first key is a column.
    """
    if check_regular_file(path, display).st_size == 0:
        # A Parquet file has at least its magic bytes and footer: zero bytes is a failed write.
        raise InputError(display, "empty Parquet file: not a valid Parquet file", hint=_EMPTY_HINT)
    # pyarrow would report an unreadable file as a generic IOError; say what it is.
    if not os.access(path, os.R_OK):
        raise InputError(display, "permission denied")
    try:
        pfile = pq.ParquetFile(str(path))
    except _ARROW_ERRORS as exc:
        raise InputError(display, f"not a Parquet file, or corrupt: {exc}") from exc
    with pfile:
        schema = pfile.schema_arrow
        text_srcs = _text_sources(schema, options, display)
        named = bool(options.fields) or options.detect_shape
        id_src = None if options.id_field is None else _id_source(schema, options.id_field, display)
        group_src = (
            None if options.group_by is None else _id_source(schema, options.group_by, display, "--group-by")
        )
        allow = ALLOW_KEY if ALLOW_KEY in schema.names else None
        wanted = [
            *(src.column for src in text_srcs),
            id_src.column if id_src else None,
            group_src.column if group_src else None,
            allow,
        ]
        columns = list(dict.fromkeys(c for c in wanted if c is not None))
        index = 0
        try:
            for batch in pfile.iter_batches(batch_size=_BATCH_ROWS, columns=columns):
                values = {c: batch.column(c).to_pylist() for c in columns}
                for i in range(batch.num_rows):
                    row = {src.column: values[src.column][i] for src in text_srcs}
                    yield Record(
                        source=display,
                        index=index,
                        line=None,
                        segments=row_segments(text_srcs, row, named, display, index),
                        allow=allow is not None and values[allow][i] == ALLOW_VALUE,
                        item_id=None
                        if id_src is None
                        else _id_value(id_src, values[id_src.column][i], display, index),
                        group=None
                        if group_src is None
                        else _id_value(group_src, values[group_src.column][i], display, index),
                    )
                    index += 1
        except _ARROW_ERRORS as exc:
            raise InputError(display, f"cannot read Parquet data at row {index}: {exc}") from exc
