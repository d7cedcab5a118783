"""Unit tests for taking segments (field path, text) and ids out of decoded JSON records."""

from __future__ import annotations

import json

import pytest

from contam_guard.errors import InputError
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.readers.fields import (
    DupObject,
    LongNumber,
    extract_id,
    general_path,
    loads_keeping_duplicates,
    segments_of,
)

P = "data.jsonl"


def _options(field: str | None, detect: bool) -> ReadOptions:
    return ReadOptions(fields=() if field is None else (field,), detect_shape=detect)


def segments(obj: object, field: str | None = None, line: int | None = 7) -> list[tuple[str, str]]:
    """(path, text) of every segment ``--field field`` reads (None: every string)."""
    return [(s.path, s.text) for s in segments_of(obj, _options(field, False), path=P, line=line)]


def text(obj: object, field: str | None = None, line: int | None = 7) -> str:
    """The text one field (or, without one, the detected shape) gives, segments joined."""
    found = segments_of(obj, _options(field, field is None), path=P, line=line)
    return "\n".join(s.text for s in found)


def error(obj: object, field: str | None = None, line: int | None = 7, detect: bool = True) -> InputError:
    with pytest.raises(InputError) as info:
        segments_of(obj, _options(field, detect and field is None), path=P, line=line)
    return info.value


# Every string, by default: each its own segment, named by its path, keys included.
@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"prompt": "Solve.", "completion": "LEAK"}, [("prompt", "Solve."), ("completion", "LEAK")]),
        (
            {"messages": [{"role": "user", "content": "q"}], "response": "LEAK"},
            [("messages[0].role", "user"), ("messages[0].content", "q"), ("response", "LEAK")],
        ),
        ({"data": {"body": "LEAK"}}, [("data.body", "LEAK")]),
        (["first", "LEAK"], [("[0]", "first"), ("[1]", "LEAK")]),
        ("LEAK", [("", "LEAK")]),
        (
            {"chosen": ["a", {"x": "LEAK"}], "n": 3, "ok": True, "z": None},
            [("chosen[0]", "a"), ("chosen[1].x", "LEAK")],
        ),
        ({"odd key": "LEAK"}, [('["odd key"]', "LEAK")]),
        (
            {"tool_calls": [{"function": {"arguments": '{"q": "LEAK"}'}}]},
            [("tool_calls[0].function.arguments", '{"q": "LEAK"}')],
        ),
    ],
)
def test_every_string_is_a_segment(record: object, expected: list[tuple[str, str]]) -> None:
    values = [(path, text) for path, text in segments(record) if not path.endswith("{key}")]
    assert values == expected


def test_keys_are_segments_too_in_document_order() -> None:
    got = segments({"a": "x", "b": {"c": "y"}})
    assert got == [("{key}", "a"), ("a", "x"), ("{key}", "b"), ("b{key}", "c"), ("b.c", "y")]


def test_a_repeated_key_keeps_both_values() -> None:
    obj = loads_keeping_duplicates('{"text": "LEAK", "text": "clean"}')
    assert isinstance(obj, DupObject)
    assert [s for s in segments(obj) if s[0] == "text"] == [("text", "LEAK"), ("text", "clean")]
    assert segments(obj, "text") == [("text", "LEAK"), ("text", "clean")]


def test_a_long_integer_is_read_as_a_number() -> None:
    digits = "9" * 5000
    obj = loads_keeping_duplicates(f'{{"id": {digits}, "text": "t"}}')
    assert isinstance(obj, dict) and isinstance(obj["id"], LongNumber)
    assert [s for s in segments(obj) if not s[0].endswith("{key}")] == [("text", "t")]
    assert extract_id(obj, "id", path=P, line=1) == digits
    assert json.loads('{"a": 1}') == loads_keeping_duplicates('{"a": 1}')


def test_general_path_drops_positions() -> None:
    assert general_path("messages[12].content[0].text") == "messages[].content[].text"


def test_explicit_top_level_field() -> None:
    assert text({"body": "hello", "text": "not this"}, "body") == "hello"


def test_explicit_dotted_field() -> None:
    assert text({"meta": {"body": "deep"}}, "meta.body") == "deep"


def test_explicit_list_step_gives_one_segment_per_element() -> None:
    obj = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}
    assert segments(obj, "messages[].content") == [("messages[0].content", "q"), ("messages[1].content", "a")]


def test_explicit_sharegpt_path() -> None:
    obj = {"conversations": [{"from": "human", "value": "x"}, {"from": "gpt", "value": "y"}]}
    assert text(obj, "conversations[].value") == "x\ny"


def test_explicit_list_of_strings_is_one_segment_each() -> None:
    assert segments({"paras": ["p1", "p2"]}, "paras") == [("paras[0]", "p1"), ("paras[1]", "p2")]


def test_explicit_object_reads_every_string_under_it() -> None:
    assert segments({"body": {"a": "b"}}, "body") == [("body{key}", "a"), ("body.a", "b")]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (3, "a number"),
        (2.5, "a number"),
        (None, "null"),
        (True, "a boolean"),
    ],
)
def test_explicit_field_of_wrong_type(value: object, kind: str) -> None:
    err = error({"body": value}, "body")
    assert err.line == 7
    assert str(err).startswith(f"{P}:7: ")
    assert "'body'" in err.problem
    assert kind in err.problem


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}, [None, {"b": True}]])
def test_explicit_field_holding_no_string_is_an_error(value: object) -> None:
    err = error({"body": value}, "body")
    assert "'body'" in err.problem and "holding no string" in err.problem


@pytest.mark.parametrize("value", [[], {}])
def test_explicit_field_that_is_empty_holds_no_text(value: object) -> None:
    assert segments({"body": value}, "body") == []


def test_explicit_field_missing_lists_fields_present() -> None:
    err = error({"title": "t", "body": "b"}, "text")
    assert "'text' not found" in err.problem
    assert "fields present: title, body" in err.problem
    assert err.line == 7


def test_explicit_nested_field_missing_names_parent() -> None:
    err = error({"meta": {"x": 1}}, "meta.body")
    assert "no 'body' in meta" in err.problem
    assert "fields present: x" in err.problem


def test_list_without_list_step_hints_at_brackets() -> None:
    err = error({"messages": [{"content": "a"}]}, "messages.content")
    assert "an array, not an object" in err.problem
    assert err.hint is not None and "messages[]" in err.hint


def test_list_step_on_non_list() -> None:
    err = error({"messages": "flat"}, "messages[].content")
    assert "'messages' is a string, not an array" in err.problem


def test_invalid_field_path() -> None:
    err = error({"a": "b"}, "a..b")
    assert "invalid field path" in err.problem


@pytest.mark.parametrize(
    ("obj", "kind"), [(5, "a number"), ([1, 2], "an array"), ("s", "a string"), (None, "null")]
)
def test_record_not_an_object(obj: object, kind: str) -> None:
    for field in (None, "text"):  # a named field, or the shapes of a golden set
        err = error(obj, field)
        assert f"record is {kind}, not a JSON object" in err.problem
        assert err.line == 7


def test_any_json_value_is_read_without_a_field() -> None:
    assert segments(["a", 5, None]) == [("[0]", "a")]
    assert segments(5) == []


def test_detect_text() -> None:
    assert text({"text": "t", "messages": [{"content": "m"}]}) == "t"


def test_detect_messages_string_content() -> None:
    obj = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]}
    assert text(obj) == "s\nu"


def test_detect_messages_list_of_parts() -> None:
    obj = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "x"}},
                    {"type": "text", "text": "here"},
                ],
            },
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "assistant", "content": "done"},
        ]
    }
    assert text(obj) == "look\nhere\ndone"


def test_detect_messages_bad_content_type() -> None:
    err = error({"messages": [{"role": "user", "content": 4}]})
    assert "messages[0].content is a number" in err.problem


def test_detect_alpaca_skips_empty_input() -> None:
    obj = {"instruction": "Add.", "input": "", "output": "4"}
    assert text(obj) == "Add.\n4"
    obj2 = {"instruction": "Add.", "input": "2+2", "output": "4"}
    assert text(obj2) == "Add.\n2+2\n4"


def test_detect_sharegpt() -> None:
    obj = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}
    assert text(obj) == "hi\nyo"


@pytest.mark.parametrize("key", ["question", "prompt", "content"])
def test_detect_simple_keys(key: str) -> None:
    assert text({"id": 1, key: "v"}) == "v"


def test_detect_order_prefers_question_over_prompt() -> None:
    assert text({"prompt": "p", "question": "q"}) == "q"


def test_detect_nothing_lists_fields() -> None:
    err = error({"a": 1, "b": 2, "c": 3})
    assert err.problem == "no text field found; fields present: a, b, c; pass --field"
    assert err.line == 7


def test_detect_text_of_wrong_type_is_named() -> None:
    err = error({"text": 12})
    assert "'text' is a number" in err.problem


def test_extract_id_string_and_number() -> None:
    assert extract_id({"id": "q-1"}, "id", path=P, line=1) == "q-1"
    assert extract_id({"id": 42}, "id", path=P, line=1) == "42"
    assert extract_id({"meta": {"uid": 3}}, "meta.uid", path=P, line=1) == "3"
    assert extract_id({"id": "x"}, None, path=P, line=1) is None


def test_extract_id_missing_names_field_and_fields_present() -> None:
    with pytest.raises(InputError) as info:
        extract_id({"text": "t", "qid": 1}, "id", path=P, line=3)
    assert "id field 'id' not found" in info.value.problem
    assert "fields present: text, qid" in info.value.problem
    assert info.value.line == 3


@pytest.mark.parametrize("value", [True, None, [1], {"a": 1}])
def test_extract_id_wrong_type(value: object) -> None:
    with pytest.raises(InputError, match="id field 'id' is"):
        extract_id({"id": value}, "id", path=P, line=3)
