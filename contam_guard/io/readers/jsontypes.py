"""Naming JSON values in error messages."""

from __future__ import annotations

_MAX_LISTED_FIELDS = 20


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if type(value).__name__ == "LongNumber":  # readers.fields.LongNumber: digits of a long integer
        return "number"
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
    return kind if kind == "null" else f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def describe(value: object) -> str:
    """``"a number"``, ``"an array"``, ``"null"``...: a value's JSON type in a sentence."""
    return _a(json_type(value))


def fields_present(obj: dict[str, object]) -> str:
    """The record's top-level field names, shortened for a one-line message."""
    names = list(obj)
    if not names:
        return "(none)"
    shown = ", ".join(names[:_MAX_LISTED_FIELDS])
    if len(names) > _MAX_LISTED_FIELDS:
        shown += f", ... ({len(names) - _MAX_LISTED_FIELDS} more)"
    return shown
