"""Parquet: one record per row, streamed a batch at a time from the needed columns
(``io.readers.columnar`` takes the text out of the rows)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq

from contam_guard.errors import InputError
from contam_guard.io.readers.archive import seekable
from contam_guard.io.readers.base import Input, ReadOptions, Record
from contam_guard.io.readers.columnar import (
    ARROW_ERRORS,
    ColumnSource,
    Table,
    read_table,
    row_segments,
    text_sources,
)

BATCH_ROWS = 1024
EMPTY_HINT = "re-create or re-download the file; a zero-byte file is a failed write or download"


def read_parquet(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per row of a Parquet file, reading only the needed columns.

    ``line`` is None; ``index`` is the row number. ``path`` is a file on disk (LFS objects
    resolved) or a seekable spool of a member's bytes (``io.readers.archive.seekable``).
    """
    with seekable(path, display, options.max_member_bytes) as where:
        if isinstance(where, Path):
            if where.stat().st_size == 0:
                # A Parquet file has at least its magic bytes and footer: zero bytes is a failed write.
                raise InputError(display, "empty Parquet file: not a valid Parquet file", hint=EMPTY_HINT)
            # pyarrow would report an unreadable file as a generic IOError; say what it is.
            if not os.access(where, os.R_OK):
                raise InputError(display, "permission denied")
        try:
            pfile = pq.ParquetFile(str(where) if isinstance(where, Path) else where)
        except ARROW_ERRORS as exc:
            if not isinstance(where, Path) and where.seek(0, 2) == 0:
                raise InputError(
                    display, "empty Parquet file: not a valid Parquet file", hint=EMPTY_HINT
                ) from exc
            raise InputError(display, f"not a Parquet file, or corrupt: {exc}") from exc
        with pfile:
            table = Table(
                pfile.schema_arrow,
                lambda columns: pfile.iter_batches(batch_size=BATCH_ROWS, columns=columns),
            )
            yield from read_table(table, display, options, "Parquet")


__all__ = ["ColumnSource", "read_parquet", "row_segments", "text_sources"]
