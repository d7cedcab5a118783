"""Single-stream compressors, told by the file name's last suffix: gzip, zstd, xz, bzip2, lz4.

A name such as ``train.jsonl.xz`` is a JSONL file compressed with xz; ``dump.gz`` (no inner
suffix) is whatever its decompressed bytes sniff as (``io.readers.auto``); ``data.tgz`` is a gzip
compressed tar archive. gzip, xz and bzip2 come with Python; zstd is ``zstandard`` and lz4 the
``lz4`` package (its frame format, what the ``lz4`` command writes).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from typing import TYPE_CHECKING, Any, Protocol

from contam_guard.io.readers.zstd_stream import ZstdRaw

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

_SUFFIXES: dict[str, str] = {
    ".gz": "gzip",
    ".gzip": "gzip",
    ".tgz": "gzip",
    ".zst": "zstd",
    ".zstd": "zstd",
    ".tzst": "zstd",
    ".xz": "xz",
    ".txz": "xz",
    ".bz2": "bz2",
    ".tbz2": "bz2",
    ".tbz": "bz2",
    ".lz4": "lz4",
}
COMPRESSED_SUFFIXES = tuple(_SUFFIXES)
"""Every suffix that names a compressed file (lower case)."""
TAR_SHORTHANDS = frozenset({".tgz", ".tzst", ".txz", ".tbz2", ".tbz"})
"""Suffixes that say "a compressed tar archive" in one word."""


class ReadInto(Protocol):
    def readinto(self, buffer: WriteableBuffer, /) -> int | None: ...


def compression_of(name: object) -> str:
    """``"gzip"``, ``"zstd"``, ``"xz"``, ``"bz2"``, ``"lz4"`` or ``"plain"``, from the last
    suffix of ``name`` (a path, or a file name as a string)."""
    text = str(getattr(name, "name", name)).lower()
    dot = text.rfind(".")
    return _SUFFIXES.get(text[dot:], "plain") if dot >= 0 else "plain"


def strip_compression(name: str) -> str:
    """``name`` without its compression suffix (``a.jsonl.xz`` -> ``a.jsonl``; ``a.tgz`` -> ``a.tar``)."""
    lower = name.lower()
    dot = lower.rfind(".")
    if dot < 0 or lower[dot:] not in _SUFFIXES:
        return name
    return name[:dot] + (".tar" if lower[dot:] in TAR_SHORTHANDS else "")


class _Lz4Raw(io.RawIOBase):
    """lz4's frame reader, whose corrupt-data error (a ``RuntimeError``) becomes an ``OSError``
    like every other decompressor's, so that it is reported as corrupt data."""

    def __init__(self, source: Any) -> None:
        super().__init__()
        import lz4.frame  # noqa: PLC0415 (imported only for .lz4 files)

        self._inner = lz4.frame.LZ4FrameFile(source, mode="rb")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        try:
            data = self._inner.read(len(view))
        except RuntimeError as exc:
            raise OSError(str(exc)) from exc
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


def decompressor(kind: str, source: Any) -> io.BufferedIOBase | io.RawIOBase:
    """A stream of the decompressed bytes of ``source`` (a binary file object, raw or buffered,
    compressed with ``kind``). The caller closes it; closing does not close ``source``."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=source, mode="rb")
    if kind == "zstd":
        return ZstdRaw(source)
    if kind == "xz":
        return lzma.LZMAFile(source, mode="rb")
    if kind == "bz2":
        return bz2.BZ2File(source, mode="rb")
    if kind == "lz4":
        return _Lz4Raw(source)
    raise ValueError(f"not a compression: {kind!r}")
