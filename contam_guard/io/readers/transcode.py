"""Byte-order marks, BOM-less UTF-16/32 sniffing, and transcoding to a byte stream the readers split.

Every reader splits lines on the byte ``\\n`` and the compiled prefilter reads UTF-8, so a file in
an encoding where ``\\n`` is not that byte (UTF-16, UTF-32, EBCDIC) is decoded as it streams and
re-encoded in the encoding the readers decode with (``stream_encoding``: UTF-8 for those).

Which encoding a file is read in (``source_codec``):

1. A byte-order mark decides: UTF-32 (LE/BE), UTF-8, UTF-16 (LE/BE), checked in that order
   (``FF FE 00 00`` is UTF-32-LE, not UTF-16-LE followed by a NUL character). A BOM is unambiguous,
   so it wins over ``--encoding``.
2. Else ``--encoding``, when it is given.
3. Else (UTF-8, the default) a head holding NUL bytes is sniffed: the zero bytes of ASCII-range
   text in UTF-16/32 sit at fixed positions of each code unit. It is read in that encoding only if
   the head decodes to text (no NULs, no control characters but tab, newlines and form feeds);
   otherwise the caller decides (binary data).

Undecodable bytes are reported with their byte offset in the file as stored (decompressed, the
BOM counted), and the reader adds the line on which reading stopped.
"""

from __future__ import annotations

import codecs
import io
from typing import TYPE_CHECKING

from contam_guard.errors import InputError
from contam_guard.io.readers.chunked import ChunkedRaw

if TYPE_CHECKING:
    from contam_guard.io.readers.base import StreamError

SNIFF_BYTES = 4096
"""How much of a file's start is read to find a BOM or sniff BOM-less UTF-16/32."""
BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_CHUNK = 1 << 16
_UTF16_ZEROS = 0.2
"""BOM-less UTF-16 is sniffed when at least this share of the high bytes are zero (ASCII-range)."""
# Characters that do not occur in text: C0 controls other than tab, LF, VT, FF, CR.
_NOT_TEXT = frozenset(chr(c) for c in range(32)) - set("\t\n\x0b\x0c\r")


def bom_of(head: bytes) -> tuple[str, int] | None:
    """``(codec, BOM length)`` of the byte-order mark ``head`` starts with, or None."""
    for bom, codec in BOMS:
        if head.startswith(bom):
            return codec, len(bom)
    return None


def canonical(encoding: str) -> str:
    """Python's name for ``encoding`` (``utf-8-sig`` counts as ``utf-8``: the BOM is stripped)."""
    name = codecs.lookup(encoding).name
    return "utf-8" if name == "utf-8-sig" else name


def ascii_compatible(encoding: str) -> bool:
    """Whether the byte ``\\n`` is a newline in ``encoding`` (what splitting lines on bytes needs)."""
    try:
        return b"a\nb".decode(encoding) == "a\nb"
    except UnicodeError:
        return False


def stream_encoding(encoding: str) -> str:
    """The encoding of the bytes a reader gets from ``open_binary`` when asked for ``encoding``:
    ``encoding`` itself, or UTF-8 for one that is not ASCII-compatible (it is transcoded)."""
    return encoding if ascii_compatible(encoding) else "utf-8"


def _is_text(sample: bytes, codec: str) -> bool:
    try:
        text = codecs.getincrementaldecoder(codec)("strict").decode(sample)  # an unfinished tail waits
    except UnicodeDecodeError:
        return False
    return bool(text) and not _NOT_TEXT.intersection(text)


def sniff(head: bytes) -> str | None:
    """The BOM-less UTF-16/32 variant ``head`` (which holds NUL bytes) is text in, or None.

    In UTF-32 every code unit's most significant byte is zero and the next at most 0x10 (code
    points end at U+10FFFF); in UTF-16 the zero bytes of ASCII-range characters fall on odd (LE)
    or even (BE) offsets, at least a fifth of them and four times as often as on the other. The
    candidate the zeros point to must then decode to text.
    """
    units = [head[i : i + 4] for i in range(0, len(head) - len(head) % 4, 4)]
    if units and all(u[3] == 0 and u[2] <= 0x10 for u in units) and _is_text(head, "utf-32-le"):
        return "utf-32-le"
    if units and all(u[0] == 0 and u[1] <= 0x10 for u in units) and _is_text(head, "utf-32-be"):
        return "utf-32-be"
    even = head[0::2].count(0) / max(len(head[0::2]), 1)
    odd = head[1::2].count(0) / max(len(head[1::2]), 1)
    # Systematic, not stray: ASCII-range characters put a zero in every other byte. A few NULs
    # in ASCII text would otherwise read as CJK and hide the text (and a leak) from the scan.
    if max(odd, even) < _UTF16_ZEROS or min(odd, even) * 4 > max(odd, even):
        return None
    codec = "utf-16-le" if odd > even else "utf-16-be"
    return codec if _is_text(head, codec) else None


def source_codec(head: bytes, bom: str | None, encoding: str) -> str | None:
    """The codec to transcode a file from (None: read its bytes as they are).

    ``head`` is the file's first bytes after any BOM, ``bom`` the BOM's codec, ``encoding`` what
    the user asked for. See the module docstring for the order of precedence.
    """
    target = canonical(stream_encoding(encoding))
    if bom is not None:
        source = bom
    elif not ascii_compatible(encoding):
        source = canonical(encoding)
        if source in ("utf-16", "utf-32"):  # no BOM to say which byte order: the zeros say it
            width = source[-2:]
            sniffed = sniff(head) if b"\0" in head else None
            source = sniffed if sniffed and sniffed.endswith(width + "-be") else f"utf-{width}-le"
    elif target == "utf-8" and b"\0" in head:
        sniffed = sniff(head)
        if sniffed is None:
            return None
        source = sniffed
    else:
        return None
    return None if source == target else source


class Transcoder(ChunkedRaw):
    """Decode ``source`` (bytes in ``codec``) as it streams; serve it re-encoded as ``target``.

    A failure is raised as ``StreamError`` (the reader adds the line where reading stopped) after
    the text decoded before it has been served, so every whole line before a bad byte is read.
    """

    def __init__(
        self,
        source: io.RawIOBase,
        *,
        codec: str,
        target: str,
        errors: str,
        display: str,
        offset: int,
        error_type: type[StreamError],
    ) -> None:
        super().__init__()
        self._source = source
        self._codec = codec
        self._target = target
        self._errors = errors
        self._decoder = codecs.getincrementaldecoder(codec)(errors)
        self._display = display
        self._offset = offset  # file offset of the next byte fed to the decoder
        self._error_type = error_type
        self._failure: InputError | None = None

    def prime(self, size: int) -> bytes:
        """Decode ahead until ``size`` bytes are ready (or the end, or a failure); return them."""
        parts = [self._out[self._pos :]]
        have = len(parts[0])
        while have < size and not self._done and self._failure is None:
            self._fill()
            parts.append(self._out)
            have += len(self._out)
        self._out = b"".join(parts)
        self._pos = 0
        return self._out[:size]

    def _fill(self) -> None:
        if self._failure is not None:
            raise self._failure
        try:
            chunk = self._source.read(_CHUNK) or b""
        except self._error_type as exc:  # corrupt compression: after the text before it
            self._failure = exc
            self._out, self._pos = b"", 0
            return
        pending = self._decoder.getstate()[0]
        try:
            text = self._decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            data = pending + chunk
            text = codecs.decode(data[: exc.start], self._codec, self._errors)
            bad = data[exc.start : exc.start + 1]
            where = self._offset - len(pending) + exc.start
            self._failure = self._error_type(
                self._display,
                f"cannot decode byte {bad!r} at byte offset {where} as {self._codec} ({exc.reason})",
                hint="pass --encoding if the file is in another encoding, "
                "or --errors replace to substitute undecodable bytes",
            )
        self._offset += len(chunk)
        self._out = self._encode(text)
        self._pos = 0
        self._done = not chunk and self._failure is None

    def _encode(self, text: str) -> bytes:
        try:
            # Lone surrogates (only from a lenient --errors) have no UTF-8 form: replace them.
            return text.encode(self._target, "replace" if self._target == "utf-8" else "strict")
        except UnicodeEncodeError as exc:
            char = exc.object[exc.start]
            self._failure = self._error_type(
                self._display,
                f"the file is {self._codec} (its byte-order mark says so), and U+{ord(char):04X} "
                f"cannot be represented in --encoding {self._target}",
                hint="drop --encoding: a file with a byte-order mark is read in its BOM's encoding",
            )
            return text[: exc.start].encode(self._target)


__all__ = [
    "BOMS",
    "SNIFF_BYTES",
    "Transcoder",
    "ascii_compatible",
    "bom_of",
    "canonical",
    "sniff",
    "source_codec",
    "stream_encoding",
]
