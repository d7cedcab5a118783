"""Input readers: turn training and golden files into ``Record`` streams.

``detect_format`` maps a file name to a format; ``read_records`` dispatches to the
reader registered for it in ``READERS``. Every failure is an ``InputError`` naming the
file (and line, where there is one); ``UnsupportedFileError`` marks a file to skip.
"""

from __future__ import annotations

from collections.abc import Iterator

from contam_guard.errors import InputError
from contam_guard.io import lfs
from contam_guard.io.readers.base import Input, Reader, ReadOptions, Record, Segment, UnsupportedFileError
from contam_guard.io.readers.compression import COMPRESSED_SUFFIXES
from contam_guard.io.readers.csv_reader import read_csv, read_tsv
from contam_guard.io.readers.fields import extract_id, segments_of
from contam_guard.io.readers.formats import SNIFF, SUFFIX_FORMATS, detect_format
from contam_guard.io.readers.json_array import read_json_array
from contam_guard.io.readers.jsonl import read_jsonl
from contam_guard.io.readers.member import Member
from contam_guard.io.readers.plaintext import read_text


def read_parquet(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Parquet records (see ``io.readers.parquet``).

    The columnar readers are imported here, on first use, because pyarrow takes longer to
    import than a pre-commit hook on a commit without such files should spend in total.
    """
    from contam_guard.io.readers import parquet

    if isinstance(path, Member):
        yield from parquet.read_parquet(path, display, options)
        return
    with lfs.content_of(path, display) as content:  # pyarrow opens the path itself
        yield from parquet.read_parquet(content, display, options)


def read_arrow(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Arrow IPC and Feather records (see ``io.readers.arrow_ipc``)."""
    from contam_guard.io.readers import arrow_ipc

    yield from arrow_ipc.read_arrow(path, display, options)


def read_orc(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """ORC records (see ``io.readers.orc``)."""
    from contam_guard.io.readers import orc

    yield from orc.read_orc(path, display, options)


def read_zip(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Every member of a zip archive (see ``io.readers.archive``)."""
    from contam_guard.io.readers import archive

    yield from archive.read_zip(path, display, options, read_member)


def read_tar(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Every member of a tar archive, compressed or not (see ``io.readers.archive``)."""
    from contam_guard.io.readers import archive

    yield from archive.read_tar(path, display, options, read_member)


def read_markup(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """HTML and XML: text with entities decoded and tags as word boundaries (``io.readers.markup``)."""
    from contam_guard.io.readers import markup

    yield from markup.read_markup(path, display, options)


def read_notebook(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Jupyter notebooks, a record per cell (``io.readers.notebook``)."""
    from contam_guard.io.readers import notebook

    yield from notebook.read_notebook(path, display, options)


def read_sniffed(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Whatever the bytes are: text of any name, archives, tables (``io.readers.auto``)."""
    from contam_guard.io.readers import auto

    yield from auto.read_sniffed(path, display, options, READERS.__getitem__)


READERS: dict[str, Reader] = {
    "jsonl": read_jsonl,
    "json": read_json_array,
    "csv": read_csv,
    "tsv": read_tsv,
    "parquet": read_parquet,
    "text": read_text,
    "arrow": read_arrow,
    "orc": read_orc,
    "zip": read_zip,
    "tar": read_tar,
    "markup": read_markup,
    "notebook": read_notebook,
    "sniff": read_sniffed,
}


def read_records(
    path: Input, display: str, options: ReadOptions, *, format_name: str | None = None
) -> Iterator[Record]:
    """Stream the records of ``path`` (a file, or a ``Member`` inside one) with the reader for
    its format.

    ``display`` is how errors name the file. ``format_name`` overrides name detection.
    Raises ``InputError`` at once for an unknown format; reading errors surface while
    iterating.
    """
    fmt = (
        format_name
        if format_name is not None
        else detect_format(path.name if isinstance(path, Member) else path)
    )
    if fmt not in READERS:
        raise InputError(
            display,
            f"unknown format {fmt!r}",
            hint=f"formats: {', '.join(READERS)}",
        )
    return READERS[fmt](path, display, options)


def read_member(member: Member, options: ReadOptions) -> Iterator[Record]:
    """The records of an archive member, named ``ARCHIVE:MEMBER``."""
    return read_records(member, member.display, options)


def describe_formats() -> str:
    """The formats and their suffixes, for messages."""
    return f"{', '.join(READERS)} ({', '.join(sorted(SUFFIX_FORMATS))}, {', '.join(COMPRESSED_SUFFIXES)})"


__all__ = [
    "READERS",
    "SNIFF",
    "Input",
    "Member",
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
    "read_member",
    "read_parquet",
    "read_records",
    "read_text",
    "read_tsv",
    "segments_of",
]
