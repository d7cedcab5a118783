"""Parquet: one record per row, streamed a batch at a time from the needed columns."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contam_guard.errors import InputError
from contam_guard.readers.base import ReadOptions, Record
from contam_guard.readers.fields import (
    ALLOW_KEY,
    ALLOW_VALUE,
    extract_id,
    extract_text,
    parse_field,
)
from contam_guard.readers.opener import check_regular_file
from contam_guard.readers.shapes import SIMPLE_TEXT_KEYS

_BATCH_ROWS = 1024
_ARROW_ERRORS = (pa.ArrowException, OSError, ValueError)
_EMPTY_HINT = "re-create or re-download the file; a zero-byte file is a failed write or download"


@dataclass(frozen=True, slots=True)
class _Source:
    """Where a value comes from: a whole column, or a field path into a nested column."""

    column: str
    path: str | None  # None: the column's value itself


def _is_string(dtype: pa.DataType) -> bool:
    if pa.types.is_dictionary(dtype):
        return _is_string(dtype.value_type)
    return bool(
        pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype)
    )


def _locate(schema: pa.Schema, name: str, what: str, display: str) -> _Source:
    if name in schema.names:
        return _Source(name, None)
    try:
        first = parse_field(name)[0].key
    except ValueError as exc:
        raise InputError(display, str(exc)) from exc
    if first not in schema.names or first == name:
        raise InputError(display, f"{what} column {first!r} not found; columns: {', '.join(schema.names)}")
    return _Source(first, name)


def _text_source(schema: pa.Schema, options: ReadOptions, display: str) -> _Source:
    if options.field is not None:
        src = _locate(schema, options.field, "text", display)
    else:
        found = next((n for n in SIMPLE_TEXT_KEYS if n in schema.names), None)
        if found is None:
            raise InputError(
                display,
                f"no text column found (looked for {', '.join(SIMPLE_TEXT_KEYS)}); "
                f"columns: {', '.join(schema.names)}",
                hint="pass --field with a column name or a path such as messages[].content",
            )
        src = _Source(found, None)
    dtype = schema.field(src.column).type
    if src.path is None and not _is_string(dtype):
        raise InputError(display, f"text column {src.column!r} has type {dtype}, expected string")
    return src


def _id_source(schema: pa.Schema, id_field: str, display: str) -> _Source:
    src = _locate(schema, id_field, "id", display)
    dtype = schema.field(src.column).type
    if src.path is None and not (_is_string(dtype) or pa.types.is_integer(dtype)):
        raise InputError(display, f"id column {src.column!r} has type {dtype}, expected string or integer")
    return src


def _value(src: _Source, value: object, is_id: bool, display: str, row: int) -> str | None:
    try:
        if src.path is not None:
            obj = {src.column: value}
            if is_id:
                return extract_id(obj, src.path, path=display, line=None)
            return extract_text(obj, src.path, path=display, line=None)
        if value is None:
            raise InputError(display, f"column {src.column!r} is null")
        return value if isinstance(value, str) else str(value)
    except InputError as exc:
        raise InputError(display, f"row {row}: {exc.problem}", hint=exc.hint) from exc


def read_parquet(path: Path, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per row of a Parquet file, reading only the needed columns.

    ``line`` is None; ``index`` is the row number. ``--field`` names a column, or a path
    such as ``messages[].content`` whose first key is a column.
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
        text_src = _text_source(schema, options, display)
        id_src = None if options.id_field is None else _id_source(schema, options.id_field, display)
        allow = ALLOW_KEY if ALLOW_KEY in schema.names else None
        wanted = [text_src.column, id_src.column if id_src else None, allow]
        columns = list(dict.fromkeys(c for c in wanted if c is not None))
        index = 0
        try:
            for batch in pfile.iter_batches(batch_size=_BATCH_ROWS, columns=columns):
                values = {c: batch.column(c).to_pylist() for c in columns}
                for i in range(batch.num_rows):
                    text = _value(text_src, values[text_src.column][i], False, display, index)
                    yield Record(
                        source=display,
                        index=index,
                        line=None,
                        text=text or "",
                        allow=allow is not None and values[allow][i] == ALLOW_VALUE,
                        item_id=None
                        if id_src is None
                        else _value(id_src, values[id_src.column][i], True, display, index),
                    )
                    index += 1
        except _ARROW_ERRORS as exc:
            raise InputError(display, f"cannot read Parquet data at row {index}: {exc}") from exc
