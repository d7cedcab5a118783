"""Arrow IPC files and streams (``.arrow``, ``.ipc``), Feather (versions 1 and 2), and folders
written by ``datasets``' ``save_to_disk`` (``io.readers.dataset_folder``), with pyarrow.

The IPC file format (Feather 2) starts with ``ARROW1``, the stream format (what ``datasets``
writes in its ``.arrow`` shards) with a message; Feather 1 with ``FEA1``. Rows become records as
in Parquet (``io.readers.columnar``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyarrow import feather

from contam_guard.errors import InputError
from contam_guard.io.readers import dataset_folder
from contam_guard.io.readers.archive import seekable
from contam_guard.io.readers.base import Input, ReadOptions, Record
from contam_guard.io.readers.columnar import ARROW_ERRORS, Table, read_table

_BATCH_ROWS = 1024


def read_arrow(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """One record per row of an Arrow IPC file or stream, or a Feather file."""
    with ExitStack() as stack:
        where = stack.enter_context(seekable(path, display, options.max_member_bytes))
        table = _open(where, display, stack)
        yield from read_table(table, display, options, "Arrow")


def read_dataset(folder: Path, display: str, options: ReadOptions) -> Iterator[Record]:
    """One record per row of a ``save_to_disk`` folder's dataset, its shards in order."""
    row = 0
    for number, shard in enumerate(dataset_folder.shards(folder, display)):
        with ExitStack() as stack:
            table = _open(shard, f"{display}/{shard.name}", stack)
            table.first_row, table.with_names = row, number == 0
            yield from read_table(table, display, options, f"Arrow (shard {shard.name})")
            row += table.rows_read


def _open(where: Any, display: str, stack: ExitStack) -> Table:
    """The table in ``where`` (a path, or a seekable file object)."""
    try:
        source = pa.memory_map(str(where), "r") if isinstance(where, Path) else pa.PythonFile(where, mode="r")
        stack.callback(source.close)
        magic = source.read(6)
        source.seek(0)
        if not magic:
            raise InputError(display, "empty file: not an Arrow IPC file or stream")
        if magic.startswith(b"FEA1"):
            with warnings.catch_warnings():  # pyarrow deprecates Feather 1, yet such files exist
                warnings.simplefilter("ignore", DeprecationWarning)
                whole = feather.read_table(source)
            return Table(whole.schema, lambda columns: whole.select(columns).to_batches(_BATCH_ROWS))
        if magic == b"ARROW1":
            reader = pa.ipc.open_file(source)
            return Table(reader.schema, lambda columns: _file_batches(reader, columns))
        stream = pa.ipc.open_stream(source)
        return Table(stream.schema, lambda columns: (batch.select(columns) for batch in stream))
    except ARROW_ERRORS as exc:
        raise InputError(display, f"not an Arrow IPC file or stream, or corrupt: {exc}") from exc


def _file_batches(reader: Any, columns: list[str]) -> Iterable[pa.RecordBatch]:
    for i in range(reader.num_record_batches):
        yield reader.get_batch(i).select(columns)
