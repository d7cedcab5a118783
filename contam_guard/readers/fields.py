"""Take the text (and item id) out of one decoded JSON record.

A field path is dotted keys with optional list steps: ``text``, ``meta.body``,
``messages[].content``. Without a path the usual fine-tuning shapes are detected.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from contam_guard.errors import InputError
from contam_guard.readers.base import ReadOptions, Record

ALLOW_KEY = "contam_guard"
ALLOW_VALUE = "allow"
SIMPLE_TEXT_KEYS = ("text", "question", "prompt", "content")
_MAX_LISTED_FIELDS = 20
_FIELD_HINT = "pass --field with the path to the text, e.g. --field messages[].content"


@dataclass(frozen=True, slots=True)
class _Step:
    key: str
    each: bool  # `key[]`: map the following steps over the list at `key`


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def fields_present(obj: dict[str, object]) -> str:
    """The record's top-level field names, shortened for a one-line message."""
    names = list(obj)
    if not names:
        return "(none)"
    shown = ", ".join(names[:_MAX_LISTED_FIELDS])
    if len(names) > _MAX_LISTED_FIELDS:
        shown += f", ... ({len(names) - _MAX_LISTED_FIELDS} more)"
    return shown


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
            f"record is {_a(json_type(obj))}, not a JSON object",
            line=line,
            hint='each record must be an object such as {"text": "..."}',
        )
    return obj


def _prefix(steps: tuple[_Step, ...], depth: int) -> str:
    return ".".join(s.key + ("[]" if s.each else "") for s in steps[:depth]) or "the record"


def _resolve(
    obj: dict[str, object], field: str, label: str, path: str, line: int | None
) -> list[object]:
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
                    f"{label} {field!r}: {where} is {_a(json_type(value))}, not an object",
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
                        f"{label} {field!r}: {step.key!r} is {_a(json_type(child))}, not an array",
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
                f"field {field!r} is an array containing {_a(json_type(bad))}, "
                "expected a string or an array of strings",
                line=line,
            )
        else:
            raise InputError(
                path,
                f"field {field!r} is {_a(json_type(value))}, expected a string",
                line=line,
            )
    return "\n".join(parts)


def _turn_texts(
    turns: list[object], key: str, name: str, path: str, line: int | None
) -> str:
    """Join the text of chat turns (``messages[].content`` or ``conversations[].value``)."""
    parts: list[str] = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise InputError(
                path, f"{name}[{i}] is {_a(json_type(turn))}, expected an object", line=line
            )
        content = turn.get(key)
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            # OpenAI content parts: keep text parts, skip images/audio.
            for part in content:
                if isinstance(part, str):
                    parts.append(part)
                elif isinstance(part, dict) and part.get("type") == "text":
                    text = part.get("text")
                    if not isinstance(text, str):
                        raise InputError(
                            path,
                            f"{name}[{i}].{key}: a text part's 'text' is "
                            f"{_a(json_type(text))}, expected a string",
                            line=line,
                        )
                    parts.append(text)
        elif content is not None:  # null content is normal for tool-call turns
            raise InputError(
                path,
                f"{name}[{i}].{key} is {_a(json_type(content))}, expected a string",
                line=line,
            )
    return "\n".join(parts)


def _alpaca(obj: dict[str, object], path: str, line: int | None) -> str:
    parts: list[str] = []
    for key in ("instruction", "input", "output"):
        value = obj.get(key)
        if isinstance(value, str):
            if value.strip():
                parts.append(value)
        elif value is not None:
            raise InputError(
                path, f"field {key!r} is {_a(json_type(value))}, expected a string", line=line
            )
    return "\n".join(parts)


def _detect(obj: dict[str, object], path: str, line: int | None) -> str:
    text = obj.get("text")
    if isinstance(text, str):
        return text
    messages = obj.get("messages")
    if isinstance(messages, list):
        return _turn_texts(messages, "content", "messages", path, line)
    if isinstance(obj.get("instruction"), str):
        return _alpaca(obj, path, line)
    conversations = obj.get("conversations")
    if isinstance(conversations, list):
        return _turn_texts(conversations, "value", "conversations", path, line)
    for key in SIMPLE_TEXT_KEYS[1:]:
        value = obj.get(key)
        if isinstance(value, str):
            return value
    # A likely text field of the wrong type says more than "no text field found".
    for key in (*SIMPLE_TEXT_KEYS, "instruction"):
        if key in obj:
            raise InputError(
                path,
                f"field {key!r} is {_a(json_type(obj[key]))}, expected a string",
                line=line,
                hint=_FIELD_HINT,
            )
    raise InputError(
        path,
        f"no text field found; fields present: {fields_present(obj)}; pass --field",
        line=line,
        hint=_FIELD_HINT,
    )


def extract_text(obj: object, field: str | None, *, path: str, line: int | None) -> str:
    """The text of one decoded record: from ``field`` if given, else a detected shape.

    Raises ``InputError`` (naming ``path`` and ``line``) if the record is not an object,
    the field is missing, or its value is not a string (or list of strings).
    """
    return _text_of(_as_object(obj, path, line), field, path, line)


def _text_of(record: dict[str, object], field: str | None, path: str, line: int | None) -> str:
    if field is None:
        return _detect(record, path, line)
    return _strings(_resolve(record, field, "field", path, line), field, path, line)


def extract_id(obj: object, id_field: str | None, *, path: str, line: int | None) -> str | None:
    """The item id at ``id_field`` (numbers become their decimal string), or None if unset."""
    if id_field is None:
        return None
    record = _as_object(obj, path, line)
    values = _resolve(record, id_field, "id field", path, line)
    if len(values) != 1:
        raise InputError(
            path, f"id field {id_field!r} gives {len(values)} values, expected one", line=line
        )
    value = values[0]
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        path,
        f"id field {id_field!r} is {_a(json_type(value))}, expected a string or number",
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
