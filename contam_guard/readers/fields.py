"""Take the text (and item id) out of one decoded JSON record.

A field path is dotted keys with optional list steps: ``text``, ``meta.body``,
``messages[].content``. Without a path the usual fine-tuning shapes are detected.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from contam_guard.errors import InputError
from contam_guard.readers.base import ReadOptions, Record
from contam_guard.readers.jsontypes import describe, fields_present
from contam_guard.readers.shapes import detect_text

ALLOW_KEY = "contam_guard"
ALLOW_VALUE = "allow"


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


def _resolve(obj: dict[str, object], field: str, label: str, path: str, line: int | None) -> list[object]:
    values: list[object] = [obj]
    steps = _steps(field, path, line)
    for depth, step in enumerate(steps):
        nxt: list[object] = []
        for value in values:
            if not isinstance(value, dict):
                where = _prefix(steps, depth)
                hint = None
                if isinstance(value, list) and depth > 0 and not steps[depth - 1].each:
                    hint = f"{steps[depth - 1].key!r} is a list; write {steps[depth - 1].key}[]"
                raise InputError(
                    path,
                    f"{label} {field!r}: {where} is {describe(value)}, not an object",
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
            child = value[step.key]
            if step.each:
                if not isinstance(child, list):
                    raise InputError(
                        path,
                        f"{label} {field!r}: {step.key!r} is {describe(child)}, not an array",
                        line=line,
                    )
                nxt.extend(child)
            else:
                nxt.append(child)
        values = nxt
    return values


def _strings(values: list[object], field: str, path: str, line: int | None) -> str:
    parts: list[str] = []
    for value in values:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            parts.extend(value)
        elif isinstance(value, list):
            bad = next(v for v in value if not isinstance(v, str))
            raise InputError(
                path,
                f"field {field!r} is an array containing {describe(bad)}, "
                "expected a string or an array of strings",
                line=line,
            )
        else:
            raise InputError(
                path,
                f"field {field!r} is {describe(value)}, expected a string",
                line=line,
            )
    return "\n".join(parts)


def extract_text(obj: object, field: str | None, *, path: str, line: int | None) -> str:
    """The text of one decoded record: from ``field`` if given, else a detected shape.

    Raises ``InputError`` (naming ``path`` and ``line``) if the record is not an object,
    the field is missing, or its value is not a string (or list of strings).
    """
    return _text_of(_as_object(obj, path, line), field, path, line)


def _text_of(record: dict[str, object], field: str | None, path: str, line: int | None) -> str:
    # The common case first, on the hot path: a plain top-level string field.
    value = record.get(field if field is not None else "text")
    if isinstance(value, str) and (field is None or field.isidentifier()):
        return value
    if field is None:
        return detect_text(record, path, line)
    return _strings(_resolve(record, field, "field", path, line), field, path, line)


def extract_id(obj: object, id_field: str | None, *, path: str, line: int | None) -> str | None:
    """The item id at ``id_field`` (numbers become their decimal string), or None if unset."""
    if id_field is None:
        return None
    record = _as_object(obj, path, line)
    values = _resolve(record, id_field, "id field", path, line)
    if len(values) != 1:
        raise InputError(path, f"id field {id_field!r} gives {len(values)} values, expected one", line=line)
    value = values[0]
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        path,
        f"id field {id_field!r} is {describe(value)}, expected a string or number",
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
    """Build the ``Record`` for one decoded JSON value (text, id, allow marker)."""
    record = _as_object(obj, source, line)
    return Record(
        source=source,
        index=index,
        line=line,
        text=_text_of(record, options.field, source, line),
        raw=raw,
        allow=record.get(ALLOW_KEY) == ALLOW_VALUE,
        item_id=None
        if options.id_field is None
        else extract_id(record, options.id_field, path=source, line=line),
    )
