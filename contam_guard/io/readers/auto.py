"""Files whose name does not say what they hold: read by what their bytes are.

Any file that sniffs as text (``io.readers.sniff``) is read as text whatever its name: JSON Lines,
a JSON array, HTML or XML (``io.readers.markup``), else plain text. A compressed file without an
inner suffix (``dump.gz``, ``data.zst``) is decompressed and its content sniffed in turn; an
archive, a Parquet, Arrow or ORC file is read as such. A file that cannot hold text (an image,
audio, model weights) is left out and listed by kind (``io.readers.notes``); one that may hold text
but cannot be read (a PDF, a database, unknown binary data) is an ``InputError``: exit 2, unless
``--skip-unreadable`` or ``scan.exclude`` leaves it out. A folder written by ``datasets``'
``save_to_disk`` is read as one dataset (``io.readers.dataset_folder``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from contam_guard.errors import InputError
from contam_guard.io.readers import notes
from contam_guard.io.readers.archive import depth_of
from contam_guard.io.readers.base import Input, Reader, ReadOptions, Record, UnsupportedFileError
from contam_guard.io.readers.compression import compression_of, strip_compression
from contam_guard.io.readers.dataset_folder import is_dataset_folder
from contam_guard.io.readers.formats import RANDOM_ACCESS
from contam_guard.io.readers.member import HEAD_BYTES, MAX_DEPTH, Member
from contam_guard.io.readers.opener import head_of, open_raw
from contam_guard.io.readers.sniff import sniff

_SUFFIX_OF = {"gzip": ".gz", "zstd": ".zst", "xz": ".xz", "bz2": ".bz2", "lz4": ".lz4"}
UNREADABLE_HINT = (
    "if it holds no training text, leave it out with scan.exclude in the config; "
    "--skip-unreadable goes on without it"
)


def read_sniffed(
    path: Input, display: str, options: ReadOptions, readers: Callable[[str], Reader]
) -> Iterator[Record]:
    """The records of ``path``, by what its (decompressed) bytes are; ``readers(format)`` is the
    reader of a format."""
    if isinstance(path, Path) and path.is_dir():
        if not is_dataset_folder(path):
            raise InputError(display, "is a directory, not a file")
        from contam_guard.io.readers.arrow_ipc import read_dataset  # noqa: PLC0415 (pyarrow)

        yield from read_dataset(path, display, options)
        return
    name = path.name
    if isinstance(path, Member) and compression_of(name) == "plain":
        yield from _by_content(path, display, options, readers)
        return
    if isinstance(path, Path) and compression_of(name) == "plain":
        found = sniff(head_of(path, display), name, options.encoding)
        if found.format in RANDOM_ACCESS:  # read from the file itself, not a copy of it
            yield from readers(found.format)(path, display, options)
            return
    # A file on disk, or a compressed member: its decompressed bytes, sniffed.
    with open_raw(path, display, HEAD_BYTES) as raw:
        limit = path.limit if isinstance(path, Member) else None
        inner = Member(
            strip_compression(name),
            display,
            raw.stream,
            raw.head,
            depth=depth_of(path),
            size=None,
            limit=limit,
        )
        yield from _by_content(inner, display, options, readers, top=not isinstance(path, Member))


def _by_content(
    member: Member, display: str, options: ReadOptions, readers: Callable[[str], Reader], *, top: bool = False
) -> Iterator[Record]:
    found = sniff(member.head, member.name, options.encoding)
    plain = _plain_name(member.name)  # what its bytes are decides, not what its name claims
    if found.format in _SUFFIX_OF:
        # Compressed (whatever its name says): named as it is, and read again.
        if member.depth >= MAX_DEPTH:
            raise InputError(display, f"compressed more than {MAX_DEPTH} times over", hint=UNREADABLE_HINT)
        yield from read_sniffed(
            _renamed(member, plain + _SUFFIX_OF[found.format], member.depth + 1), display, options, readers
        )
    elif found.format is not None:
        yield from readers(found.format)(_renamed(member, plain, member.depth), display, options)
    elif found.kind is not None:
        if top:  # a file given to read: the scan's own list of files left out says so
            raise UnsupportedFileError(display, f"{found.kind}: cannot hold text, not read")
        notes.NOTES.not_text(display, found.kind)
    else:
        raise InputError(
            display,
            f"{found.unreadable}: it may hold text, which contam-guard cannot read",
            hint=UNREADABLE_HINT,
        )


def _plain_name(name: str) -> str:
    """``name`` without its compression suffixes (``a.jsonl.gz.zst`` -> ``a.jsonl``)."""
    while (stripped := strip_compression(name)) != name:
        name = stripped
    return name


def _renamed(member: Member, name: str, depth: int) -> Member:
    if name == member.name and depth == member.depth:
        return member
    return Member(
        name, member.display, member.open(), member.head, depth=depth, size=member.size, limit=member.limit
    )
