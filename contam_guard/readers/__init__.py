"""Input readers: turn training and golden files into ``Record`` streams.

``detect_format`` maps a file name to a format; ``read_records`` dispatches to the
reader registered for it in ``READERS``. Every failure is an ``InputError`` naming the
file (and line, where there is one); ``UnsupportedFileError`` marks a file to skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePath

from contam_guard import lfs
from contam_guard.errors import InputError
from contam_guard.readers.base import Reader, ReadOptions, Record, Segment, UnsupportedFileError
from contam_guard.readers.csv_reader import read_csv, read_tsv
from contam_guard.readers.fields import extract_id, segments_of
from contam_guard.readers.json_array import read_json_array
from contam_guard.readers.jsonl import read_jsonl
from contam_guard.readers.opener import COMPRESSED_SUFFIXES
from contam_guard.readers.plaintext import read_text


def read_parquet(path: Path, display: str, options: ReadOptions) -> Iterator[Record]:
    """Parquet records (see ``readers.parquet``).

    Imported here, on first use, because pyarrow takes longer to import than a pre-commit
    hook on a commit without Parquet files should spend in total.
    """
    from contam_guard.readers import parquet

    with lfs.content_of(path, display) as content:  # pyarrow opens the path itself
        yield from parquet.read_parquet(content, display, options)


READERS: dict[str, Reader] = {
    "jsonl": read_jsonl,
    "json": read_json_array,
    "csv": read_csv,
    "tsv": read_tsv,
    "parquet": read_parquet,
    "text": read_text,
}

_SUFFIX_FORMATS: dict[str, str] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".txt": "text",
    ".md": "text",
    ".text": "text",
}
# Parquet compresses internally and needs random access, so no .parquet.gz.
_COMPRESSIBLE = frozenset({"jsonl", "json", "csv", "tsv", "text"})


def detect_format(path: PurePath) -> str | None:
    """The reader format for ``path`` from its suffix (case-insensitive), else None.

    ``.gz``/``.zst`` may follow the suffix of a jsonl, json, csv, tsv or text file.
    """
    name = path.name.lower()
    compressed = name.endswith(COMPRESSED_SUFFIXES)
    if compressed:
        name = name.rsplit(".", 1)[0]
    fmt = _SUFFIX_FORMATS.get(PurePath(name).suffix)
    if fmt is None or (compressed and fmt not in _COMPRESSIBLE):
        return None
    return fmt


def read_records(
    path: Path, display: str, options: ReadOptions, *, format_name: str | None = None
) -> Iterator[Record]:
    """Stream the records of ``path`` with the reader for its format.

    ``display`` is how errors name the file. ``format_name`` overrides suffix detection.
    Raises ``InputError`` at once for an unknown format; reading errors surface while
    iterating.
    """
    fmt = format_name if format_name is not None else detect_format(path)
    if fmt is None or fmt not in READERS:
        raise InputError(
            display,
            "unknown file type" if fmt is None else f"unknown format {fmt!r}",
            hint=f"supported formats: {', '.join(READERS)} "
            f"({', '.join(sorted(_SUFFIX_FORMATS))}, optionally .gz/.zst)",
        )
    return READERS[fmt](path, display, options)


__all__ = [
    "READERS",
    "ReadOptions",
    "Reader",
    "Record",
    "Segment",
    "UnsupportedFileError",
    "detect_format",
    "extract_id",
    "read_csv",
    "read_json_array",
    "read_jsonl",
    "read_parquet",
    "read_records",
    "read_text",
    "read_tsv",
    "segments_of",
]
