"""A JSON file holding one top-level array of objects, streamed with ijson.

Elements are built from ijson's basic events here rather than by ``ijson.items``: ``items``
keeps a path prefix per open level (``item.item.item...``), so memory and time grow with the
square of the nesting depth (an array nested 100,000 deep took 67 s and 22 GB). Building them
here is linear, and stops at ``depth.MAX_DEPTH`` levels per element like every JSON reader.
"""

from __future__ import annotations

import codecs
import io
import itertools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import ijson

from contam_guard.errors import InputError
from contam_guard.io.readers.base import Input, ReadOptions, Record
from contam_guard.io.readers.chunked import ChunkedRaw
from contam_guard.io.readers.decoding import check_encoding, decode_failure
from contam_guard.io.readers.depth import MAX_DEPTH, too_deep
from contam_guard.io.readers.fields import DupObject, record_from_object
from contam_guard.io.readers.jsontypes import describe
from contam_guard.io.readers.opener import open_binary
from contam_guard.io.readers.transcode import stream_encoding

if TYPE_CHECKING:
    from contam_guard.io.readers.opener import InputStream

_CHUNK = 1 << 16
_JSON_WHITESPACE = b" \t\r\n"
_HINT_JSONL = "for one object per line, use JSON Lines (JSONL, a .jsonl file)"


class _Utf8Transcoder(ChunkedRaw):
    """Re-encode a non-UTF-8 byte stream as UTF-8, since ijson only parses UTF-8.

    Decoding is incremental so an undecodable byte is reported at its exact file offset.
    """

    def __init__(self, stream: io.BufferedIOBase, display: str, options: ReadOptions, start: int) -> None:
        super().__init__()
        self._stream = stream
        self._display = display
        self._encoding = stream_encoding(options.encoding)
        self._decoder = codecs.getincrementaldecoder(self._encoding)(options.errors)
        self._offset = start  # file offset of the next byte fed to the decoder

    def _fill(self) -> None:
        chunk = self._stream.read(_CHUNK)
        pending = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            raise decode_failure(
                self._display,
                exc,
                line=None,
                line_offset=self._offset - pending,
                encoding=self._encoding,
            ) from exc
        self._offset += len(chunk)
        # Lone surrogates (from errors="surrogateescape") have no UTF-8 form.
        self._out = text.encode("utf-8", "replace")
        self._pos = 0
        self._done = not chunk


def _skip_whitespace(stream: InputStream) -> tuple[bytes, int]:
    """Consume leading JSON whitespace.

    Returns the next byte (not consumed; b"" at EOF) and how many bytes were skipped.
    """
    skipped = 0
    while True:
        buf = stream.peek(1)
        if not buf:
            return b"", skipped
        rest = buf.lstrip(_JSON_WHITESPACE)
        skipped += len(stream.read(len(buf) - len(rest)))
        if rest:
            return rest[:1], skipped


def _top_level_kind(first: bytes) -> str:
    if first in b"tf":
        return "a boolean"
    if first in b"-0123456789":
        return "a number"
    return {b"{": "an object", b'"': "a string", b"n": "null"}.get(first, "not valid JSON")


def _ijson_message(exc: Exception) -> str:
    # yajl messages are multi-line (a context snippet and a caret); keep the gist.
    arg = exc.args[0] if exc.args else exc
    text = arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    if len(lines) > 1 and "right here" not in lines[1]:
        return f"{lines[0]} near {lines[1]!r}"
    return lines[0]


_OPEN = {"start_map", "start_array"}
_CLOSE = {"end_map", "end_array"}


def _elements(events: Iterable[tuple[str, Any]], display: str) -> Iterator[object]:
    """The elements of the top-level array whose events (``ijson.basic_parse``) are ``events``,
    each built as ``ijson.items`` builds it (objects as ``DupObject``, keys kept in order, a
    repeated key kept twice); an element nested deeper than ``MAX_DEPTH`` is an ``InputError``."""
    building: list[tuple[list[object] | DupObject, str]] = []
    """The containers of the element being built, outermost first, with each one's key in
    its parent (its own key is unused for a list's items)."""
    key = ""
    elements = 0
    started = False
    for event, token in events:
        if event == "map_key":
            key = token
            continue
        if event in _OPEN:
            if not started:  # the top-level array itself
                started = True
            elif len(building) == MAX_DEPTH:
                raise too_deep(display, where=f"array element {elements}: ")
            else:
                building.append((DupObject() if event == "start_map" else [], key))
            continue
        if event in _CLOSE:
            if not building:  # the top-level array ends (the parser checks what follows)
                continue
            value, key = building.pop()
        else:
            value = token
        if not building:
            yield value
            elements += 1
            continue
        parent = building[-1][0]
        if isinstance(parent, list):
            parent.append(value)
        else:
            parent[key] = value


def read_json_array(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per element of a top-level JSON array (compressed files allowed).

    ``line`` is None (the parser does not track lines); ``index`` is the array position.
    An empty or whitespace-only file has no records. Training data may be any other JSON
    document too (an object: a config, a notebook-like dump), read as one record; a golden set
    must be an array of objects.
    """
    check_encoding(options, display, line_based=False)
    with open_binary(path, display, encoding=options.encoding, errors=options.errors) as src:
        first, skipped = _skip_whitespace(src.stream)
        if not first:
            return
        whole = first != b"["
        if whole and (options.detect_shape or options.id_field is not None):
            raise InputError(
                display,
                f"top-level JSON value is {_top_level_kind(first)}, expected an array",
                hint=_HINT_JSONL,
            )
        stream: io.RawIOBase | InputStream = src.stream
        # open_binary has transcoded UTF-16/32 to UTF-8 already; other encodings are done here.
        if codecs.lookup(stream_encoding(options.encoding)).name != "utf-8" or options.errors != "strict":
            stream = _Utf8Transcoder(src.stream, display, options, src.bom_length + skipped)
        index = 0
        try:
            # DupObject: an element's key written twice keeps both values, as in JSONL.
            events: Iterable[tuple[str, Any]] = ijson.basic_parse(stream, use_float=True)
            if whole:  # one JSON document (a config, package.json): one record of all its strings
                events = itertools.chain([("start_array", None)], events, [("end_array", None)])
            for obj in _elements(events, display):
                if not isinstance(obj, dict) and (options.fields or options.detect_shape):
                    raise InputError(
                        display,
                        f"array element {index} is {describe(obj)}, expected an object",
                        hint='each element must be an object such as {"text": "..."}',
                    )
                yield record_from_object(obj, options, source=display, index=index, line=None, raw=None)
                index += 1
        except ijson.JSONError as exc:
            raise InputError(display, f"invalid JSON after element {index}: {_ijson_message(exc)}") from exc
        except (ValueError, RecursionError) as exc:
            raise InputError(display, f"invalid JSON after element {index}: {exc}") from exc
