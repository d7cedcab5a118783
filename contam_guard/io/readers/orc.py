"""ORC files, with pyarrow: one record per row, a stripe at a time (``io.readers.columnar``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc

from contam_guard.errors import InputError
from contam_guard.io.readers.archive import seekable
from contam_guard.io.readers.base import Input, ReadOptions, Record
from contam_guard.io.readers.columnar import ARROW_ERRORS, Table, read_table


def read_orc(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """One record per row of an ORC file."""
    with seekable(path, display, options.max_member_bytes) as where:
        try:
            orc_file = pa_orc.ORCFile(str(where) if isinstance(where, Path) else where)
            schema = orc_file.schema
        except ARROW_ERRORS as exc:
            raise InputError(display, f"not an ORC file, or corrupt: {exc}") from exc
        yield from read_table(
            Table(schema, lambda columns: _stripes(orc_file, columns)), display, options, "ORC"
        )


def _stripes(orc_file: Any, columns: list[str]) -> Iterable[pa.RecordBatch]:
    for stripe in range(orc_file.nstripes):
        yield orc_file.read_stripe(stripe, columns=columns)
