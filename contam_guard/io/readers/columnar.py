"""Tables (Parquet, Arrow IPC and Feather, ORC): one record per row, from Arrow record batches.

Every column that can hold text is read: strings, binary values that are UTF-8 text (a
``binary``/``large_binary`` column is how many writers store text), and lists, structs and maps
of them, each string a segment; or only the ``--field`` columns or paths such as
``messages[].content``. Binary values that are not UTF-8 (an image's bytes) are not text: the
summary says how many, per column (``io.readers.notes``). Column names are text too, as JSON keys
are: they are read with the first row (segments ``{key}``, ``meta{key}`` for a field of the
struct column ``meta``), or as a record of their own in a table without rows.

``index`` is the row number (counted on across a dataset's shards); ``line`` is None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from contam_guard.errors import InputError
from contam_guard.io.readers import notes, sniff
from contam_guard.io.readers.base import ReadOptions, Record, Segment
from contam_guard.io.readers.fields import (
    ALLOW_KEY,
    ALLOW_VALUE,
    KEY_MARK,
    child_path,
    extract_id,
    parse_field,
    segments_of,
    strings_in,
)
from contam_guard.io.readers.shapes import SIMPLE_TEXT_KEYS

ARROW_ERRORS = (pa.ArrowException, OSError, ValueError)
Batches = Callable[[list[str]], Iterable[pa.RecordBatch]]
"""The table's record batches, of the given columns only."""


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


def _is_binary(dtype: pa.DataType) -> bool:
    if pa.types.is_dictionary(dtype):
        return _is_binary(dtype.value_type)
    return bool(
        pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype) or pa.types.is_binary_view(dtype)
    )


def _children(dtype: pa.DataType) -> list[pa.DataType]:
    if pa.types.is_dictionary(dtype):
        return [dtype.value_type]
    if pa.types.is_struct(dtype):
        return [dtype.field(i).type for i in range(dtype.num_fields)]
    if pa.types.is_map(dtype):
        return [dtype.key_type, dtype.item_type]
    if (
        pa.types.is_list(dtype)
        or pa.types.is_large_list(dtype)
        or pa.types.is_fixed_size_list(dtype)
        or pa.types.is_list_view(dtype)
        or pa.types.is_large_list_view(dtype)
    ):
        return [dtype.value_type]
    return []


def holds_text(dtype: pa.DataType) -> bool:
    """Whether values of ``dtype`` can hold text: strings or binary, or lists, structs and maps
    of them."""
    return _is_string(dtype) or _is_binary(dtype) or any(holds_text(child) for child in _children(dtype))


def _holds_binary(dtype: pa.DataType) -> bool:
    return _is_binary(dtype) or any(_holds_binary(child) for child in _children(dtype))


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


def text_sources(
    names: list[str], holds_strings: Callable[[str], str | None], options: ReadOptions, display: str
) -> list[ColumnSource]:
    """Where the text comes from, for a table with columns ``names``: the ``--field`` columns or
    paths, else every column that can hold text. ``holds_strings(column)`` is None for a column
    that can hold text, else its type's name (for the message). Shared with the Spark engine."""
    if options.fields:
        sources = [locate(names, name, "text", display) for name in options.fields]
        for src in sources:
            kind = holds_strings(src.column)
            if src.path is None and kind is not None:
                raise InputError(display, f"text column {src.column!r} has type {kind}, expected string")
        return sources
    return [ColumnSource(name, None) for name in names if holds_strings(name) is None]


def _text_sources(schema: pa.Schema, options: ReadOptions, display: str) -> list[ColumnSource]:
    """``text_sources`` for an Arrow schema; with ``detect_shape`` (golden sets without
    ``--field``) the first usual text column."""

    def holds_strings(column: str) -> str | None:
        dtype = schema.field(column).type
        return None if holds_text(dtype) else str(dtype)

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


def name_segments(schema: pa.Schema, columns: list[str]) -> tuple[Segment, ...]:
    """The names of ``columns`` and of the fields nested in them, each a segment (``{key}``,
    ``meta{key}``), as the keys of a JSON record are read."""
    found: list[Segment] = []

    def walk(dtype: pa.DataType, where: str) -> None:
        if pa.types.is_struct(dtype):
            for i in range(dtype.num_fields):
                child = dtype.field(i)
                found.append(Segment(where + KEY_MARK, child.name))
                walk(child.type, child_path(where, child.name))
        else:
            for child in _children(dtype):
                walk(child, f"{where}[]")

    for column in columns:
        found.append(Segment(KEY_MARK, column))
        walk(schema.field(column).type, child_path("", column))
    return tuple(found)


@dataclass
class _Binary:
    """Per column: binary values that were not UTF-8 text, and what the first one was."""

    bad: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    first: dict[str, bytes] = field(default_factory=dict)

    def decode(self, column: str, array: pa.Array) -> list[object]:
        """The column's values with binary values as text; values that are not UTF-8 are left
        out (None) and counted."""
        try:
            return list(array.cast(_as_text(array.type)).to_pylist())  # UTF-8 checked in C
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            pass
        counts = [0, 0]
        values = [self._walk(value, column, counts) for value in array.to_pylist()]
        self.total[column] = self.total.get(column, 0) + counts[0]
        self.bad[column] = self.bad.get(column, 0) + counts[1]
        return values

    def _walk(self, value: object, column: str, counts: list[int]) -> object:
        if isinstance(value, bytes):
            counts[0] += 1
            try:
                return value.decode("utf-8")
            except UnicodeDecodeError:
                counts[1] += 1
                self.first.setdefault(column, value[: sniff.HEAD_BYTES])
                return None
        if isinstance(value, dict):
            return {k: self._walk(v, column, counts) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v, column, counts) for v in value]
        if isinstance(value, tuple):  # a map's (key, value) pairs
            return tuple(self._walk(v, column, counts) for v in value)
        return value

    def tell(self, display: str) -> None:
        for column, bad in self.bad.items():
            if not bad:
                continue
            seen = sniff.sniff(self.first[column])
            kind = f" (the first: {seen.kind or seen.unreadable or 'binary data'})"
            notes.NOTES.add(
                f"{display}: column {column!r}: {bad} of {self.total[column]} binary value(s) are "
                f"not UTF-8 text{kind}; not read"
            )


def _as_text(dtype: pa.DataType) -> pa.DataType:
    """``dtype`` with every binary type in it made the matching string type."""
    if pa.types.is_large_binary(dtype):
        return pa.large_string()
    if pa.types.is_binary(dtype):
        return pa.string()
    if pa.types.is_binary_view(dtype):
        return pa.string_view()
    if pa.types.is_list(dtype):
        return pa.list_(dtype.value_field.with_type(_as_text(dtype.value_type)))
    if pa.types.is_large_list(dtype):
        return pa.large_list(dtype.value_field.with_type(_as_text(dtype.value_type)))
    if pa.types.is_struct(dtype):
        return pa.struct([f.with_type(_as_text(f.type)) for f in dtype])
    raise pa.ArrowNotImplementedError(f"no text form of {dtype}")


@dataclass
class Table:
    """One table's schema and how to read its batches; ``first_row``: the number its first row
    gets (a dataset's later shards count on)."""

    schema: pa.Schema
    batches: Batches
    first_row: int = 0
    with_names: bool = True
    """Whether this table's column names are read (once per dataset, not once per shard)."""
    rows_read: int = 0
    """Rows read so far (set by ``read_table``)."""


def read_table(table: Table, display: str, options: ReadOptions, what: str) -> Iterator[Record]:
    """One record per row of ``table`` (``what`` names the format in errors)."""
    schema = table.schema
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
    names: tuple[Segment, ...] = ()
    if options.reads_names and table.with_names:
        names = name_segments(
            schema, list(dict.fromkeys(s.column for s in text_srcs)) if named else schema.names
        )
    binary = _Binary()
    index = table.first_row
    try:
        for batch in table.batches(columns):
            values = {
                c: binary.decode(c, batch.column(c))
                if _holds_binary(batch.column(c).type)
                else batch.column(c).to_pylist()
                for c in columns
            }
            for i in range(batch.num_rows):
                row = {src.column: values[src.column][i] for src in text_srcs}
                yield Record(
                    source=display,
                    index=index,
                    line=None,
                    segments=names + row_segments(text_srcs, row, named, display, index),
                    allow=allow is not None and values[allow][i] == ALLOW_VALUE,
                    item_id=None
                    if id_src is None
                    else _id_value(id_src, values[id_src.column][i], display, index),
                    group=None
                    if group_src is None
                    else _id_value(group_src, values[group_src.column][i], display, index),
                )
                names = ()
                index += 1
                table.rows_read += 1
    except ARROW_ERRORS as exc:
        raise InputError(display, f"cannot read {what} data at row {index}: {exc}") from exc
    finally:
        binary.tell(display)
    if names:  # a table without rows: its names alone (the record a first row would be)
        yield Record(source=display, index=index, line=None, segments=names)
        table.rows_read += 1
