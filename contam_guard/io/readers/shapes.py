"""Recognising the usual fine-tuning record shapes when no --field is given."""

from __future__ import annotations

from contam_guard.errors import InputError
from contam_guard.io.readers.jsontypes import describe, fields_present

SIMPLE_TEXT_KEYS = ("text", "question", "prompt", "content")
_FIELD_HINT = "pass --field with the path to the text, e.g. --field messages[].content"


def _turn_texts(turns: list[object], key: str, name: str, path: str, line: int | None) -> str:
    """Join the text of chat turns (``messages[].content`` or ``conversations[].value``)."""
    parts: list[str] = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict):
            raise InputError(path, f"{name}[{i}] is {describe(turn)}, expected an object", line=line)
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
                            f"{name}[{i}].{key}: a text part's 'text' is {describe(text)}, expected a string",
                            line=line,
                        )
                    parts.append(text)
        elif content is not None:  # null content is normal for tool-call turns
            raise InputError(
                path,
                f"{name}[{i}].{key} is {describe(content)}, expected a string",
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
            raise InputError(path, f"field {key!r} is {describe(value)}, expected a string", line=line)
    return "\n".join(parts)


def detect_text(obj: dict[str, object], path: str, line: int | None) -> str:
    """The text of a record in one of the usual fine-tuning shapes.

    Tried in order: ``text``; chat ``messages[].content`` (string or text parts);
    Alpaca ``instruction``/``input``/``output`` (non-empty ones joined); ShareGPT
    ``conversations[].value``; then ``question``, ``prompt``, ``content``. Once a shape's
    key is present with the right container type, that shape is used (and its errors raised).
    """
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
                f"field {key!r} is {describe(obj[key])}, expected a string",
                line=line,
                hint=_FIELD_HINT,
            )
    raise InputError(
        path,
        f"no text field found; fields present: {fields_present(obj)}; pass --field",
        line=line,
        hint=_FIELD_HINT,
    )
