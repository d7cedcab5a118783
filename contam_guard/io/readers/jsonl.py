"""JSON Lines: one JSON object per line, streamed in constant memory.

``read_jsonl`` yields a ``Record`` per line; ``JsonLineParser`` reads one line, the same way for
``io.readers.blocks.read_line_blocks`` (blocks of lines for the scan's prefilter), so records,
line numbers and errors are the same whichever way a file is read."""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable, Iterator

import orjson

from contam_guard.core.spec import native
from contam_guard.errors import InputError
from contam_guard.io.readers.base import Input, ReadOptions, Record
from contam_guard.io.readers.blocks import parsed_lines
from contam_guard.io.readers.decoding import check_encoding, decode_failure
from contam_guard.io.readers.depth import deeper_than, too_deep
from contam_guard.io.readers.fields import keeping_decoder, loads_keeping_duplicates, record_from_object
from contam_guard.io.readers.transcode import stream_encoding

_JSON_WS = " \t\r\n"


def exact_parse(
    text: str,
    scan: Callable[[str, int], tuple[object, int]],
    loads: Callable[[str], object],
) -> object:
    """``json.loads(text)``, faster on the common case of a line starting with a value.

    ``json.loads`` spends about half its time on whitespace regexes around the C scanner;
    calling the scanner directly and checking the tail ourselves halves the parse cost.
    Anything unusual falls back to ``json.loads`` for its exact error message.
    """
    try:
        obj, end = scan(text, 0)
    except StopIteration:  # leading whitespace, or not JSON
        return loads(text)
    if end != len(text) and text[end:].strip(_JSON_WS):
        return loads(text)  # trailing data: let json.loads raise "Extra data"
    return obj


NOT_PARSED = object()


def fast_parse(raw: bytes) -> object:
    """orjson parses UTF-8 bytes about 6x faster than json. Whatever it refuses (bad bytes,
    lone surrogates, NaN, huge integers, real errors) returns ``NOT_PARSED``: the exact path then
    decides, so results and error messages are json's. So does an object that may hold a key
    twice: orjson keeps only the last value, the exact path keeps both (``DupObject``)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return NOT_PARSED
    if isinstance(obj, (dict, list)) and native.may_repeat_keys(raw):
        return NOT_PARSED
    return obj


def json_scanner() -> Callable[[str, int], tuple[object, int]]:
    """json's C scanner, keeping every value of a repeated key (one per file: its key memo is
    per-object state, so it is not shared across threads)."""
    decoder = keeping_decoder()
    # typeshed types the context as another scanner; a JSONDecoder is what json passes.
    return json.scanner.make_scanner(decoder)  # type: ignore[arg-type]


def parse_json_text(
    text: str, scan: Callable[[str, int], tuple[object, int]], display: str, line: int | None
) -> object:
    """One JSON line's decoded text, parsed json's way (repeated keys kept, integers of any
    length read); an ``InputError`` naming ``display`` and ``line`` when it is not valid JSON."""
    try:
        return exact_parse(text, scan, loads_keeping_duplicates)
    except json.JSONDecodeError as exc:
        raise InputError(
            display,
            f"invalid JSON: {exc.msg} at column {exc.colno}",
            line=line,
            hint="each line must hold exactly one JSON object",
        ) from exc
    except ValueError as exc:
        raise InputError(display, f"invalid JSON: {exc}", line=line) from exc
    except RecursionError as exc:  # a deep call stack: readers check ``depth.MAX_DEPTH`` first
        raise too_deep(display, line=line) from exc


class JsonLineParser:
    """One non-blank JSONL line to a ``Record``: json's results, errors naming the line."""

    head_size = 0
    paragraphs = False

    def __init__(self, display: str, options: ReadOptions) -> None:
        check_encoding(options, display, line_based=True, transcoded=True)
        self._display = display
        self._options = options
        self._scan = json_scanner()
        # The bytes' encoding: open_binary transcodes UTF-16/32 (and the like) to UTF-8.
        self._encoding = stream_encoding(options.encoding)
        encoding = self._encoding.replace("_", "-").lower()
        self._fast = encoding in ("utf-8", "utf8") and options.errors == "strict"

    def check_head(self, head: bytes) -> None:
        """Nothing to sniff: a JSONL file is read line by line."""

    def value(self, raw: bytes, *, line: int, offset: int) -> object:
        """The JSON value of one line (``raw`` with its ending; ``offset``: its file offset, for
        decode errors), json's way: repeated keys kept, integers of any length read."""
        options = self._options
        if deeper_than(raw):  # one limit on every path (orjson's is 1024, json's the stack's)
            raise too_deep(self._display, line=line)
        obj = fast_parse(raw) if self._fast else NOT_PARSED
        if obj is NOT_PARSED:
            try:
                text = raw.decode(self._encoding, options.errors)
            except UnicodeDecodeError as exc:
                raise decode_failure(
                    self._display, exc, line=line, line_offset=offset, encoding=self._encoding
                ) from exc
            obj = parse_json_text(text, self._scan, self._display, line)
        return obj

    def parse(self, raw: bytes, *, line: int, offset: int, index: int) -> Record:
        """``raw`` is the line with its ending; ``offset`` its file offset (for decode errors)."""
        obj = self.value(raw, line=line, offset=offset)
        return record_from_object(obj, self._options, source=self._display, index=index, line=line, raw=raw)


def read_jsonl(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per non-blank line of a JSONL file (``.gz``/``.zst`` allowed).

    ``raw`` is the line's exact bytes with its line ending; ``line`` is the physical line;
    ``index`` counts non-blank lines. Errors name the line (and byte offset for bad bytes).
    """
    yield from parsed_lines(path, display, options, JsonLineParser(display, options))
