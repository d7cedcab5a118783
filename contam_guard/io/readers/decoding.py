"""Decoding bytes: option checks, and errors that give the line and the file offset."""

from __future__ import annotations

import codecs
from collections.abc import Iterator

from contam_guard.errors import InputError
from contam_guard.io.readers.base import ReadOptions, StreamError
from contam_guard.io.readers.opener import Source
from contam_guard.io.readers.transcode import ascii_compatible, stream_encoding


def decoded_lines(src: Source, display: str, options: ReadOptions) -> Iterator[tuple[int, bytes, str]]:
    """Yield ``(line number, raw bytes, decoded text)`` per physical line, ending included.

    Only ``\\n`` ends a line (``\\r\\n`` is kept whole; a lone ``\\r`` is not a break). ``src``
    must have been opened with ``options.encoding`` (its bytes are in ``stream_encoding`` of it).
    """
    encoding = stream_encoding(options.encoding)
    errors = options.errors
    offset = src.first_offset + src.bom_length  # file offset of the current line
    line = src.first_line - 1
    try:
        for raw in src.stream:
            line += 1
            try:
                text = raw.decode(encoding, errors)
            except UnicodeDecodeError as exc:
                raise decode_failure(display, exc, line=line, line_offset=offset, encoding=encoding) from exc
            yield line, raw, text
            offset += len(raw)
    except StreamError as exc:
        # Raised while fetching the next line: that line is where reading stopped.
        raise InputError(display, exc.problem, line=line + 1, hint=exc.hint) from exc


def check_encoding(options: ReadOptions, display: str, *, line_based: bool, transcoded: bool = False) -> None:
    """Reject an unknown encoding or error handler up front, with the flag to fix.

    A line-based reader splits on the byte ``\\n``, so it needs an encoding in which that byte is
    always a newline (any ASCII-compatible one; not UTF-16/32), unless it reads the file through
    ``open_binary`` (``transcoded``), which transcodes every other encoding to UTF-8.
    """
    try:
        codecs.lookup_error(options.errors)
    except LookupError as exc:
        raise InputError(
            display,
            f"unknown decoding error handler {options.errors!r}",
            hint="--errors takes strict, replace, ignore, backslashreplace or surrogateescape",
        ) from exc
    try:
        ok = ascii_compatible(options.encoding)
    except LookupError as exc:
        raise InputError(
            display,
            f"unknown text encoding {options.encoding!r}",
            hint="pass a Python codec name to --encoding, e.g. utf-8, latin-1, cp1252, utf-16",
        ) from exc
    if line_based and not ok and not transcoded:
        raise InputError(
            display,
            f"encoding {options.encoding!r} is not supported for line-based formats",
            hint="convert the file to UTF-8 first, e.g. with iconv",
        )


def decode_failure(
    display: str, exc: UnicodeDecodeError, *, line: int | None, line_offset: int, encoding: str
) -> InputError:
    """The error for an undecodable byte in a line that starts at file offset ``line_offset``."""
    offset = line_offset + exc.start
    bad = exc.object[exc.start : exc.start + 1]
    return InputError(
        display,
        f"cannot decode byte {bytes(bad)!r} at byte offset {offset} as {encoding} ({exc.reason})",
        line=line,
        hint="pass --encoding (e.g. latin-1) if the file is not UTF-8, "
        "or --errors replace to substitute undecodable bytes",
    )
