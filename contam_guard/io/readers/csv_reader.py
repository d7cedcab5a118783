"""CSV and TSV with a header row; quoted fields may hold newlines and quotes.

The header's cells are text too, as a JSON record's keys are: a file without a header (its
first row is data) or a header cell that is itself copied text must not pass unread. With
``ReadOptions.names`` (training data) the header row is record 0, its cells the segments
``{key}`` (of the ``--field`` columns only, when they are given); data rows are records 1, 2, ...
A golden set's items are its data rows only (0, 1, ...)."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from contam_guard.errors import InputError
from contam_guard.io.readers.base import Input, ReadOptions, Record, Segment
from contam_guard.io.readers.decoding import check_encoding, decoded_lines
from contam_guard.io.readers.fields import ALLOW_KEY, ALLOW_VALUE, KEY_MARK
from contam_guard.io.readers.opener import open_binary
from contam_guard.io.readers.shapes import SIMPLE_TEXT_KEYS

# The csv module's default 128 KiB field limit is smaller than many training documents.
# The limit is process-global; 2**31 - 1 fits a C long on every platform.
_FIELD_LIMIT = 2**31 - 1
_MAX_NAME_IN_PATH = 40


def _path_of(name: str) -> str:
    """A column name as a segment's path: a long one (a header that is really a row of text)
    cut short, as a long JSON key is."""
    return name if len(name) <= _MAX_NAME_IN_PATH else name[: _MAX_NAME_IN_PATH - 1] + "…"


def _is_blank(row: list[str]) -> bool:
    return not row or (len(row) == 1 and not row[0].strip())


def _column(header: list[str], name: str, what: str, display: str, line: int) -> int:
    if name not in header:
        raise InputError(
            display,
            f"{what} column {name!r} not found; columns: {', '.join(header)}",
            line=line,
        )
    return header.index(name)


def _text_columns(header: list[str], options: ReadOptions, display: str, line: int) -> list[int]:
    """The columns read as text: those named by ``fields`` (every column of a repeated name),
    else every column, else (``detect_shape``, golden sets) the first usual text column."""
    if options.fields:
        return [i for name in options.fields for i in _columns(header, name, display, line)]
    if not options.detect_shape:
        return list(range(len(header)))
    for name in SIMPLE_TEXT_KEYS:
        if name in header:
            return [header.index(name)]
    raise InputError(
        display,
        f"no text column found (looked for {', '.join(SIMPLE_TEXT_KEYS)}); columns: {', '.join(header)}",
        line=line,
        hint="pass --field with the name of the text column",
    )


def _columns(header: list[str], name: str, display: str, line: int) -> list[int]:
    found = [i for i, column in enumerate(header) if column == name]
    if not found:
        raise InputError(
            display,
            f"text column {name!r} not found; columns: {', '.join(header)}",
            line=line,
        )
    return found


def _read_delimited(path: Input, display: str, options: ReadOptions, delimiter: str) -> Iterator[Record]:
    check_encoding(options, display, line_based=True, transcoded=True)
    if csv.field_size_limit() < _FIELD_LIMIT:
        csv.field_size_limit(_FIELD_LIMIT)
    with open_binary(path, display, encoding=options.encoding, errors=options.errors) as src:
        lines = (text for _, _, text in decoded_lines(src, display, options))
        # strict: a stray quote is an error instead of silently merging fields or rows.
        reader = csv.reader(lines, delimiter=delimiter, strict=True)
        header: list[str] | None = None
        text_cols: list[int] = []
        paths: list[str] = []
        id_col: int | None = None
        group_col: int | None = None
        allow_col: int | None = None
        index = 0
        while True:
            start = reader.line_num + 1  # line_num counts lines consumed, across newlines
            try:
                row = next(reader, None)
            except csv.Error as exc:
                raise InputError(display, f"malformed CSV: {exc}", line=reader.line_num) from exc
            if row is None:
                return
            if _is_blank(row):
                continue
            if header is None:
                header = row
                text_cols = _text_columns(header, options, display, start)
                if options.id_field is not None:
                    id_col = _column(header, options.id_field, "id", display, start)
                if options.group_by is not None:
                    group_col = _column(header, options.group_by, "--group-by", display, start)
                allow_col = header.index(ALLOW_KEY) if ALLOW_KEY in header else None
                paths = [_path_of(name) for name in header]
                if options.reads_names:
                    segments = tuple(Segment(KEY_MARK, header[i]) for i in text_cols)
                    yield Record(source=display, index=index, line=start, segments=segments)
                    index += 1
                continue
            if len(row) != len(header):
                raise InputError(
                    display,
                    f"row has {len(row)} fields but the header has {len(header)}",
                    line=start,
                    hint="quote fields that contain the delimiter, quotes or newlines",
                )
            yield Record(
                source=display,
                index=index,
                line=start,
                segments=tuple(Segment(paths[i], row[i]) for i in text_cols),
                allow=allow_col is not None and row[allow_col] == ALLOW_VALUE,
                item_id=None if id_col is None else row[id_col],
                group=None if group_col is None else row[group_col],
            )
            index += 1


def read_csv(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per row of a CSV file: the header (with ``options.reads_names``), then the
    data rows.

    Every cell is read (each a segment named by its column; a repeated column name is read
    every time), or only the ``--field`` columns. ``line`` is the line on which the row starts;
    ``raw`` is None.
    """
    return _read_delimited(path, display, options, ",")


def read_tsv(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Like ``read_csv``, for tab-separated files."""
    return _read_delimited(path, display, options, "\t")
