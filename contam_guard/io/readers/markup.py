"""HTML and XML (``.html``, ``.htm``, ``.xhtml``, ``.xml``, ``.svg``, or sniffed): the text of a
page as a reader of it sees it, through the standard library's ``html.parser``.

Character references are decoded (``&nbsp;``, ``&#101;``, ``&amp;``) and every tag is a word
boundary, so a copied test item survives markup put between its words (``<b>``, ``<span>``,
entities). Everything that is text is read, not only the visible body: the text of ``<script>``
and ``<style>``, comments, CDATA sections, and the value of every attribute (``alt``, ``title``,
``content`` of a ``<meta>``, ...), each value a segment of its own (``@alt``). A file is one
record; its page text is the segment ``""``.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from html.parser import HTMLParser

from contam_guard.errors import InputError
from contam_guard.io.readers.base import Input, ReadOptions, Record, Segment, StreamError
from contam_guard.io.readers.decoding import check_encoding, decode_failure
from contam_guard.io.readers.opener import open_binary
from contam_guard.io.readers.transcode import stream_encoding

_CHUNK = 1 << 16
_CDATA = "CDATA["


class _TextParser(HTMLParser):
    """Collects the page's text (tags as spaces) and its attributes' values."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.attributes: list[Segment] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parts.append(" ")
        self.attributes += [Segment(f"@{name}", value) for name, value in attrs if value and value.strip()]

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_comment(self, data: str) -> None:
        self.parts += [" ", data, " "]

    def unknown_decl(self, data: str) -> None:
        if data.startswith(_CDATA):  # XML's <![CDATA[...]]>: text, with no references to decode
            self.parts += [" ", data[len(_CDATA) :], " "]


def read_markup(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """One record for an HTML or XML file: its text (entities decoded, tags as spaces) and
    the values of its attributes. ``fields`` do not apply (as for plain text)."""
    check_encoding(options, display, line_based=False)
    encoding = stream_encoding(options.encoding)
    parser = _TextParser()
    with open_binary(path, display, encoding=options.encoding, errors=options.errors) as src:
        decoder = _decoder(encoding, options.errors)
        offset = src.bom_length
        try:
            while chunk := src.stream.read(_CHUNK):
                try:
                    parser.feed(decoder.decode(chunk))
                except UnicodeDecodeError as exc:
                    raise decode_failure(
                        display, exc, line=None, line_offset=offset, encoding=encoding
                    ) from exc
                offset += len(chunk)
            parser.feed(decoder.decode(b"", final=True))
        except StreamError as exc:
            raise InputError(display, exc.problem, hint=exc.hint) from exc
        except UnicodeDecodeError as exc:
            raise decode_failure(display, exc, line=None, line_offset=offset, encoding=encoding) from exc
    parser.close()
    text = "".join(parser.parts)
    segments = ((Segment("", text),) if text.strip() else ()) + tuple(parser.attributes)
    if segments:
        yield Record(source=display, index=0, line=1, segments=segments)


def _decoder(encoding: str, errors: str) -> codecs.IncrementalDecoder:
    return codecs.getincrementaldecoder(encoding)(errors)
