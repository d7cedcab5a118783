"""Bytes that live inside another file: an archive's member, or what a compressed file holds.

A ``Member`` is read once, as a stream, never written to disk: an archive member's name is only
ever shown (in findings, ``data.tar.gz:inner/train.jsonl``), never used as a path, so a name
such as ``../../etc/passwd`` cannot make contam-guard write or read anything outside. Its first
bytes (``head``) are read ahead so that its content can be sniffed before a reader takes it.

Every member is bounded: ``MAX_MEMBER_BYTES`` uncompressed bytes at most (an archive whose
member inflates past it, a zip bomb, is an ``InputError``: a scan never exits 0 on what it did
not read), and ``MAX_DEPTH`` archives deep at most.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING

from contam_guard.errors import InputError

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

MAX_MEMBER_BYTES = 1 << 34
"""16 GiB: the most one archive member (or a compressed file inside an archive) may inflate to
(``ReadOptions.max_member_bytes``). Larger is taken for a decompression bomb; a larger real
member is scanned once extracted (a file on disk is read whole, however large)."""
MAX_RATIO = 1000
"""A zip member whose header says it inflates over 1,000 times its stored size (and past
``BOMB_FLOOR``) is a bomb: deflate cannot do better than about 1,032 to 1, and data does not
come near it."""
BOMB_FLOOR = 1 << 30
MAX_DEPTH = 3
"""Archives read inside one another at most (``a.tar:b.zip:c.tar.gz:d.jsonl`` is 3 deep)."""
HEAD_BYTES = 8192
"""Bytes of a member read ahead for sniffing its content."""
SEPARATOR = ":"
"""Between an archive's name and its member's in ``Record.source`` (``data.zip:inner/a.jsonl``)."""


def too_large(display: str, limit: int) -> InputError:
    return InputError(
        display,
        f"inflates past {limit:,} bytes, the most contam-guard reads of one archive member "
        "(a decompression bomb, or a member too large to scan inside its archive)",
        hint="extract it and scan the extracted file, or exclude it (scan.exclude); "
        "--skip-unreadable goes on without it",
    )


def shown_name(name: str) -> str:
    """A member name as findings show it: control characters (a newline that would forge an
    output line, a terminal escape) written as ``\\xNN``; everything else as stored."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in name)


class Bounded(io.RawIOBase):
    """At most ``limit`` bytes of ``inner``; reading more is ``too_large`` (an ``InputError``)."""

    def __init__(self, inner: Callable[[int], bytes], display: str, limit: int = MAX_MEMBER_BYTES) -> None:
        super().__init__()
        self._read = inner
        self._display = display
        self._left = limit
        self._limit = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        data = self._read(min(len(view), self._left + 1))
        if len(data) > self._left:
            raise too_large(self._display, self._limit)
        self._left -= len(data)
        view[: len(data)] = data
        return len(data)


class Member:
    """One file inside another, read once as a stream (``open``), its first bytes in ``head``.

    ``name`` is its own file name as stored (its suffixes tell its format), ``display`` how
    findings and errors name it (``outer.zip:inner/a.jsonl``), ``depth`` the number of archives
    it lies in (0 for the content of a compressed file on disk), ``size`` its size when known,
    ``limit`` the most bytes it may inflate to when it is compressed (None: no limit, for the
    content of a file on disk).
    """

    def __init__(
        self,
        name: str,
        display: str,
        stream: io.RawIOBase,
        head: bytes,
        *,
        depth: int,
        size: int | None,
        limit: int | None = None,
    ) -> None:
        self.name = name
        self.display = display
        self.head = head
        self.depth = depth
        self.size = size
        self.limit = limit
        self._stream: io.RawIOBase | None = stream

    def open(self) -> io.RawIOBase:
        """The member's bytes from the start (``head`` included); a member is read only once."""
        stream = self._stream
        if stream is None:
            raise InputError(self.display, "internal: an archive member was read twice")
        self._stream = None
        return stream

    def __repr__(self) -> str:
        return f"Member({self.display!r})"


__all__ = ["HEAD_BYTES", "MAX_DEPTH", "MAX_MEMBER_BYTES", "SEPARATOR", "Bounded", "Member", "shown_name"]
