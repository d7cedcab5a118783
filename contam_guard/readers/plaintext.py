"""Plain text: one document per line, or the whole file as one document."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from contam_guard.errors import InputError
from contam_guard.readers.base import ReadOptions, Record, Segment, UnsupportedFileError
from contam_guard.readers.blocks import parsed_lines
from contam_guard.readers.decoding import check_encoding, decode_failure
from contam_guard.readers.opener import Source, StreamError, open_binary

_SNIFF_BYTES = 8192


def _strip_ending(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith("\n"):
        return text[:-1]
    return text


def _whole_file(src: Source, display: str, options: ReadOptions) -> Iterator[Record]:
    try:
        data = src.stream.read()
    except StreamError as exc:
        raise InputError(display, exc.problem, hint=exc.hint) from exc
    if not data or data.isspace():
        return
    try:
        text = data.decode(options.encoding, options.errors)
    except UnicodeDecodeError as exc:
        raise decode_failure(
            display,
            exc,
            line=data.count(b"\n", 0, exc.start) + 1,
            line_offset=src.bom_length,
            encoding=options.encoding,
        ) from exc
    yield Record(source=display, index=0, line=1, segments=(Segment("", text),), raw=data)


class TextLineParser:
    """One non-blank line of a plain-text file to a ``Record`` (ending stripped)."""

    head_size = _SNIFF_BYTES

    def __init__(self, display: str, options: ReadOptions) -> None:
        check_encoding(options, display, line_based=True)
        self._display = display
        self._options = options

    def check_head(self, head: bytes) -> None:
        self.check_head_of(head, self._display)

    @staticmethod
    def check_head_of(head: bytes, display: str) -> None:
        """A file with a NUL byte in its first 8 KiB is binary: ``UnsupportedFileError``."""
        if b"\x00" in head:
            raise UnsupportedFileError(
                display,
                "binary file (NUL byte in the first 8 KiB), not text",
                hint="UTF-16/32 text is not supported: convert it to UTF-8 first",
            )

    def parse(self, raw: bytes, *, line: int, offset: int, index: int) -> Record:
        """``raw`` is the line with its ending; ``offset`` its file offset (for decode errors)."""
        options = self._options
        try:
            text = raw.decode(options.encoding, options.errors)
        except UnicodeDecodeError as exc:
            raise decode_failure(
                self._display, exc, line=line, line_offset=offset, encoding=options.encoding
            ) from exc
        return Record(
            source=self._display,
            index=index,
            line=line,
            segments=(Segment("", _strip_ending(text)),),
            raw=raw,
        )


def read_text(path: Path, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per non-blank line (ending stripped), or one for the whole file.

    ``options.whole_file`` selects the latter. ``fields``/``id_field`` do not apply to
    plain text and are ignored (the segment's path is ""). A file with a NUL byte in its first
    8 KiB is binary: ``UnsupportedFileError``.
    """
    if options.whole_file:
        check_encoding(options, display, line_based=False)
        with open_binary(path, display, head_size=_SNIFF_BYTES, window=options.window) as src:
            TextLineParser.check_head_of(src.head, display)
            yield from _whole_file(src, display, options)
        return
    yield from parsed_lines(path, display, options, TextLineParser(display, options))
