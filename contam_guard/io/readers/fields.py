"""Take the text (as segments) and the item id out of one decoded JSON record.

By default every string of a record is read, at any depth and in lists too, each string its
own ``Segment`` (a shared run never spans two of them): the prompt, the completion, every chat
turn, a tool call's arguments, a rationale, an object key. A guard that reads one field of a
``{"prompt", "completion"}`` record passes a leak in the other, so it never guesses which
string matters.

With ``fields`` (``--field``, repeatable) only those paths are read: dotted keys with optional
list steps, ``text``, ``meta.body``, ``messages[].content``. A path that ends at an object or a
list reads every string under it. Each segment is named by its concrete path
(``messages[2].content``); ``meta{key}`` is a key of the object ``meta`` (keys are text too).

A JSON object with a key written twice keeps both values here (``json`` would keep the last one
and silently drop the other): both are read, in document order.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from contam_guard.errors import InputError
from contam_guard.io.readers.base import ReadOptions, Record, Segment
from contam_guard.io.readers.jsontypes import describe, fields_present
from contam_guard.io.readers.shapes import detect_text

ALLOW_KEY = "contam_guard"
ALLOW_VALUE = "allow"
KEY_MARK = "{key}"
"""Suffix of the path of a segment that is an object's key (``meta{key}``)."""
GROUP_LABEL = "--group-by field"
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")
_MAX_KEY_IN_PATH = 40
_INDEX = re.compile(r"\[\d+\]")


class DupObject(dict[str, object]):
    """A decoded JSON object that keeps every pair, ``pairs``, even of a key written twice.

    The dict itself is what ``json`` gives (the last value of each key), so code that only
    looks up keys keeps working; the walk reads ``pairs``. ``json`` builds it from the pairs
    (``keep_duplicates``), ijson key by key (``map_type``), hence ``__setitem__``.
    """

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, object]] | None = None) -> None:
        super().__init__(pairs or [])
        self.pairs = list(pairs or [])

    def __setitem__(self, key: str, value: object) -> None:
        self.pairs.append((key, value))
        super().__setitem__(key, value)

    @property
    def repeats(self) -> bool:
        """Whether some key was written more than once."""
        return len(self.pairs) != len(self)


def keep_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``object_pairs_hook`` for ``json``: a dict, or a ``DupObject`` when a key repeats."""
    obj = dict(pairs)
    return obj if len(obj) == len(pairs) else DupObject(pairs)


class LongNumber(str):
    """A JSON integer with more digits than Python converts (``sys.get_int_max_str_digits``):
    kept as its digits. It is valid JSON, so it is read; it is a number, not text."""

    __slots__ = ()


_MAX_INT_DIGITS = 4000  # under Python's default limit of 4,300 digits, sign included


def parse_int(digits: str) -> int | LongNumber:
    """``parse_int`` for ``json``: an int, or a ``LongNumber`` past Python's digit limit."""
    return int(digits) if len(digits) <= _MAX_INT_DIGITS else LongNumber(digits)


def keeping_decoder() -> json.JSONDecoder:
    """A decoder that keeps every value of a repeated key and reads integers of any length."""
    return json.JSONDecoder(object_pairs_hook=keep_duplicates, parse_int=parse_int)


def loads_keeping_duplicates(text: str | bytes) -> object:
    """``json.loads`` that keeps every value of a repeated key (``DupObject``) and reads
    integers of any length (``LongNumber``)."""
    return json.loads(text, object_pairs_hook=keep_duplicates, parse_int=parse_int)


def _pairs(obj: dict[str, object]) -> Iterable[tuple[str, object]]:
    return obj.pairs if isinstance(obj, DupObject) else obj.items()


def child_path(path: str, key: str) -> str:
    """The path of ``key`` under ``path``: ``a.b``, or ``a["odd key"]`` for other keys."""
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    shown = key if len(key) <= _MAX_KEY_IN_PATH else key[: _MAX_KEY_IN_PATH - 1] + "…"
    return f"{path}[{json.dumps(shown, ensure_ascii=False)}]"


def general_path(path: str) -> str:
    """A segment path with its list positions dropped: ``messages[2].content`` -> ``messages[].content``."""
    return _INDEX.sub("[]", path)


def strings_in(value: object, path: str = "") -> list[Segment]:
    """Every string under ``value`` in document order (object keys too), each a segment.

    Iterative, so depth is bounded by the decoder (``json`` stops at its recursion limit),
    never by this walk.
    """
    found: list[Segment] = []
    stack: list[tuple[str, object, bool]] = [(path, value, False)]
    while stack:
        where, node, is_key = stack.pop()
        if isinstance(node, LongNumber):
            continue
        if isinstance(node, str):
            found.append(Segment(where + KEY_MARK if is_key else where, node))
        elif isinstance(node, dict):
            children: list[tuple[str, object, bool]] = []
            for key, child in _pairs(node):
                children.append((where, key, True))
                children.append((child_path(where, key), child, False))
            stack.extend(reversed(children))
        elif isinstance(node, (list, tuple)):
            stack.extend((f"{where}[{i}]", node[i], False) for i in range(len(node) - 1, -1, -1))
    return found


@dataclass(frozen=True, slots=True)
class _Step:
    key: str
    each: bool  # `key[]`: map the following steps over the list at `key`


@functools.lru_cache(maxsize=64)
def parse_field(field: str) -> tuple[_Step, ...]:
    """Split a field path into steps; ``ValueError`` if it is malformed."""
    steps: list[_Step] = []
    for part in field.split("."):
        each = part.endswith("[]")
        key = part[:-2] if each else part
        if not key or "[" in key or "]" in key:
            raise ValueError(f"invalid field path {field!r}: expected keys like a.b or a[].b")
        steps.append(_Step(key, each))
    return tuple(steps)


def _steps(field: str, path: str, line: int | None) -> tuple[_Step, ...]:
    try:
        return parse_field(field)
    except ValueError as exc:
        raise InputError(path, str(exc), line=line) from exc


def _as_object(obj: object, path: str, line: int | None) -> dict[str, object]:
    if not isinstance(obj, dict):
        raise InputError(
            path,
            f"record is {describe(obj)}, not a JSON object",
            line=line,
            hint='each record must be an object such as {"text": "..."}',
        )
    return obj


def _prefix(steps: tuple[_Step, ...], depth: int) -> str:
    return ".".join(s.key + ("[]" if s.each else "") for s in steps[:depth]) or "the record"


def _values_at(obj: object, key: str) -> list[object]:
    """Every value of ``key`` in the object ``obj`` (more than one when the key repeats)."""
    assert isinstance(obj, dict)
    if isinstance(obj, DupObject):
        return [value for k, value in obj.pairs if k == key]
    return [obj[key]]


def _resolve(
    obj: dict[str, object], field: str, label: str, path: str, line: int | None
) -> list[tuple[str, object]]:
    """The (concrete path, value) pairs that ``field`` selects in ``obj``."""
    values: list[tuple[str, object]] = [("", obj)]
    steps = _steps(field, path, line)
    for depth, step in enumerate(steps):
        nxt: list[tuple[str, object]] = []
        for where, value in values:
            if not isinstance(value, dict):
                hint = None
                if isinstance(value, list) and depth > 0 and not steps[depth - 1].each:
                    hint = f"{steps[depth - 1].key!r} is a list; write {steps[depth - 1].key}[]"
                raise InputError(
                    path,
                    f"{label} {field!r}: {_prefix(steps, depth)} is {describe(value)}, not an object",
                    line=line,
                    hint=hint,
                )
            if step.key not in value:
                raise InputError(
                    path,
                    f"{label} {field!r} not found: no {step.key!r} in {_prefix(steps, depth)}; "
                    f"fields present: {fields_present(value)}",
                    line=line,
                )
            here = child_path(where, step.key)
            for child in _values_at(value, step.key):
                if not step.each:
                    nxt.append((here, child))
                elif isinstance(child, list):
                    nxt.extend((f"{here}[{i}]", element) for i, element in enumerate(child))
                else:
                    raise InputError(
                        path,
                        f"{label} {field!r}: {step.key!r} is {describe(child)}, not an array",
                        line=line,
                    )
        values = nxt
    return values


def _selected(record: dict[str, object], field: str, path: str, line: int | None) -> list[Segment]:
    segments: list[Segment] = []
    for where, value in _resolve(record, field, "field", path, line):
        found = strings_in(value, where) if isinstance(value, (dict, list)) else []
        if isinstance(value, str) and not isinstance(value, LongNumber):
            found = [Segment(where, value)]
        elif not any(not s.path.endswith(KEY_MARK) for s in found) and not (
            isinstance(value, (dict, list)) and not value
        ):
            # A named field must hold text: a number, a boolean, null, or a container of
            # nothing but those is a wrong --field, not a record without text (empty is fine).
            raise InputError(
                path,
                f"field {field!r} is {describe(value)}"
                + (" holding no string" if isinstance(value, (dict, list)) else "")
                + ", expected a string (or an object or array holding strings)",
                line=line,
            )
        segments += found
    return segments


def segments_of(obj: object, options: ReadOptions, *, path: str, line: int | None) -> tuple[Segment, ...]:
    """The segments ``options`` reads from one decoded record (see the module docstring).

    Raises ``InputError`` (naming ``path`` and ``line``) for a field that is missing or holds a
    number, boolean or null, and, with ``detect_shape``, for a record in no known shape.
    """
    if options.fields:
        record = _as_object(obj, path, line)
        found: list[Segment] = []
        for field in options.fields:
            found += _selected(record, field, path, line)
        return tuple(found)
    if options.detect_shape:
        return (Segment("", detect_text(_as_object(obj, path, line), path, line)),)
    return tuple(strings_in(obj))


def extract_id(
    obj: object, id_field: str | None, *, path: str, line: int | None, label: str = "id field"
) -> str | None:
    """The item id at ``id_field`` (numbers become their decimal string), or None if unset.
    (Also the ``--group-by`` value, with ``label`` naming that option in errors.)"""
    if id_field is None:
        return None
    record = _as_object(obj, path, line)
    values = _resolve(record, id_field, label, path, line)
    if len(values) != 1:
        raise InputError(path, f"{label} {id_field!r} gives {len(values)} values, expected one", line=line)
    value = values[0][1]
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        path,
        f"{label} {id_field!r} is {describe(value)}, expected a string or number",
        line=line,
    )


def record_from_object(
    obj: object,
    options: ReadOptions,
    *,
    source: str,
    index: int,
    line: int | None,
    raw: bytes | None,
) -> Record:
    """Build the ``Record`` for one decoded JSON value (segments, id, allow marker)."""
    return Record(
        source=source,
        index=index,
        line=line,
        segments=segments_of(obj, options, path=source, line=line),
        raw=raw,
        allow=isinstance(obj, dict) and obj.get(ALLOW_KEY) == ALLOW_VALUE,
        item_id=None
        if options.id_field is None
        else extract_id(obj, options.id_field, path=source, line=line),
        group=extract_id(obj, options.group_by, path=source, line=line, label=GROUP_LABEL),
    )
