"""How deeply a JSON record may nest: one limit for every JSON reader.

A record (a JSONL line, an element of a JSON-array file) may nest arrays and objects at most
``MAX_DEPTH`` levels deep, the record itself being level 1; anything deeper is an input error
(exit 2) naming the file and the line or element. One number for every format, because each
parser has another limit of its own: orjson 1024, Python's ``json`` about 1000 minus the call
stack (so the same line could pass on one path and fail on another), the compiled prefilter
128 (it hands deeper lines to the exact path, so it sets no limit), and ijson none at all,
with memory and time growing with the square of the depth (a 100,000-deep array took 22 GB).
512 is far beyond any training record (chat turns and tool calls nest a handful of levels) and
leaves Python's ``json`` ample stack.
"""

from __future__ import annotations

import re

from contam_guard.errors import InputError

MAX_DEPTH = 512

_TOKEN = re.compile(rb'["\\\[\]{}]')
"""What changes the depth or the string state; everything else is skipped in C."""
_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")


def deeper_than(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests arrays and objects more than ``limit`` levels deep.

    Brackets inside strings do not count. ``raw`` need not be valid JSON (the parser decides
    that). A text with at most ``limit`` opening brackets (nearly every record) costs two
    ``bytes.count`` calls; any other is read once, up to the first level past ``limit``.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    in_string = False
    escaped_at = -1
    for token in _TOKEN.finditer(raw):
        at = token.start()
        if at == escaped_at:
            continue
        byte = raw[at]
        if in_string:
            if byte == _BACKSLASH:
                escaped_at = at + 1
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif byte in _CLOSE:
            depth -= 1
    return False


def too_deep(display: str, *, line: int | None = None, where: str = "") -> InputError:
    """The error for a record nested deeper than ``MAX_DEPTH`` (``where``: e.g. the element)."""
    return InputError(
        display,
        f"{where}JSON nested too deeply (more than {MAX_DEPTH} levels of arrays and objects)",
        line=line,
    )
