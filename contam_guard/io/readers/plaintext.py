"""Plain text: one document per paragraph (``io.readers.paragraphs``), per line, or per file."""

from __future__ import annotations

from collections.abc import Iterator

from contam_guard.errors import InputError
from contam_guard.io.readers.base import Input, ReadOptions, Record, Segment, StreamError
from contam_guard.io.readers.blocks import parsed_lines
from contam_guard.io.readers.decoding import check_encoding, decode_failure
from contam_guard.io.readers.opener import Source, open_binary
from contam_guard.io.readers.transcode import stream_encoding

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
    encoding = stream_encoding(options.encoding)
    try:
        text = data.decode(encoding, options.errors)
    except UnicodeDecodeError as exc:
        raise decode_failure(
            display,
            exc,
            line=data.count(b"\n", 0, exc.start) + 1,
            line_offset=src.bom_length,
            encoding=encoding,
        ) from exc
    yield Record(source=display, index=0, line=1, segments=(Segment("", text),), raw=data, text_lines=True)


class TextLineParser:
    """One record of a plain-text file to a ``Record`` (its last line's ending stripped): a
    paragraph's lines, or with ``options.lines`` one non-blank line."""

    head_size = _SNIFF_BYTES

    def __init__(self, display: str, options: ReadOptions) -> None:
        check_encoding(options, display, line_based=True, transcoded=True)
        self._display = display
        self._options = options
        self._encoding = stream_encoding(options.encoding)  # UTF-16/32 arrive as UTF-8
        self.paragraphs = not options.lines

    def check_head(self, head: bytes) -> None:
        self.check_head_of(head, self._display)

    @staticmethod
    def check_head_of(head: bytes, display: str) -> None:
        """A NUL byte in the first 8 KiB (after UTF-16/32 text has been recognised and transcoded
        by ``open_binary``) means binary data: an ``InputError``, since a file with a text
        extension was given to be read and cannot be."""
        if b"\x00" in head:
            raise InputError(
                display,
                "binary data (a NUL byte in the first 8 KiB), not text in UTF-8 or UTF-16/32",
                hint="if it is text in another encoding, pass --encoding (e.g. utf-16-le, utf-32, "
                "cp1252); --skip-unreadable goes on without it",
            )

    def parse(self, raw: bytes, *, line: int, offset: int, index: int) -> Record:
        """``raw`` is the record's lines with their endings, the first being line ``line`` at
        file offset ``offset`` (for decode errors, which name the line of the bad byte)."""
        try:
            text = raw.decode(self._encoding, self._options.errors)
        except UnicodeDecodeError as exc:
            bad_line = line + raw.count(b"\n", 0, exc.start)
            raise decode_failure(
                self._display, exc, line=bad_line, line_offset=offset, encoding=self._encoding
            ) from exc
        return Record(
            source=self._display,
            index=index,
            line=line,
            segments=(Segment("", _strip_ending(text)),),
            raw=raw,
            text_lines=True,
        )


def read_text(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per paragraph (lines up to a blank line, ``io.readers.paragraphs``; the last
    line's ending stripped), or with ``options.lines`` per non-blank line, or with
    ``options.whole_file`` one for the whole file. ``fields``/``id_field`` do not apply to
    plain text and are ignored (the segment's path is ""). UTF-16/32 text is read
    (``open_binary`` transcodes it); a file with a NUL byte in its first 8 KiB after that is
    binary data: ``InputError``.
    """
    if options.whole_file:
        check_encoding(options, display, line_based=False)
        with open_binary(
            path,
            display,
            head_size=_SNIFF_BYTES,
            window=options.window,
            encoding=options.encoding,
            errors=options.errors,
        ) as src:
            TextLineParser.check_head_of(src.head, display)
            yield from _whole_file(src, display, options)
        return
    yield from parsed_lines(path, display, options, TextLineParser(display, options))
