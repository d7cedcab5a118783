"""JSON Lines: one JSON object per line, streamed in constant memory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from contam_guard.errors import InputError
from contam_guard.readers.base import ReadOptions, Record
from contam_guard.readers.fields import record_from_object
from contam_guard.readers.opener import (
    StreamError,
    check_encoding,
    decode_failure,
    open_binary,
)


def read_jsonl(path: Path, display: str, options: ReadOptions) -> Iterator[Record]:
    """Yield one record per non-blank line of a JSONL file (``.gz``/``.zst`` allowed).

    ``raw`` is the line's exact bytes with its line ending; ``line`` is the physical line;
    ``index`` counts non-blank lines. Errors name the line (and byte offset for bad bytes).
    """
    check_encoding(options, display, line_based=True)
    encoding = options.encoding
    errors = options.errors
    loads = json.loads
    with open_binary(path, display) as src:
        offset = src.bom_length  # file offset of the current line, for decode errors
        line = 0
        index = 0
        try:
            for raw in src.stream:
                line += 1
                if raw.isspace():
                    offset += len(raw)
                    continue
                try:
                    text = raw.decode(encoding, errors)
                except UnicodeDecodeError as exc:
                    raise decode_failure(
                        display, exc, line=line, line_offset=offset, encoding=encoding
                    ) from exc
                try:
                    obj = loads(text)
                except json.JSONDecodeError as exc:
                    raise InputError(
                        display,
                        f"invalid JSON: {exc.msg} at column {exc.colno}",
                        line=line,
                        hint="each line must hold exactly one JSON object",
                    ) from exc
                except ValueError as exc:  # e.g. an integer beyond int_max_str_digits
                    raise InputError(display, f"invalid JSON: {exc}", line=line) from exc
                except RecursionError as exc:
                    raise InputError(display, "JSON nested too deeply", line=line) from exc
                yield record_from_object(
                    obj, options, source=display, index=index, line=line, raw=raw
                )
                offset += len(raw)
                index += 1
        except StreamError as exc:
            # Raised while fetching the next line: that line is where reading stopped.
            raise InputError(display, exc.problem, line=line + 1, hint=exc.hint) from exc
