"""Unit tests for field extraction from decoded JSON records."""

from __future__ import annotations

import pytest

from contam_guard.errors import InputError
from contam_guard.readers.fields import extract_id, extract_text

P = "data.jsonl"


def text(obj: object, field: str | None = None, line: int | None = 7) -> str:
    return extract_text(obj, field, path=P, line=line)


def error(obj: object, field: str | None = None, line: int | None = 7) -> InputError:
    with pytest.raises(InputError) as info:
        extract_text(obj, field, path=P, line=line)
    return info.value


def test_explicit_top_level_field() -> None:
    assert text({"body": "hello", "text": "not this"}, "body") == "hello"


def test_explicit_dotted_field() -> None:
    assert text({"meta": {"body": "deep"}}, "meta.body") == "deep"


def test_explicit_list_step_joins_with_newline() -> None:
    obj = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}
    assert text(obj, "messages[].content") == "q\na"


def test_explicit_sharegpt_path() -> None:
    obj = {"conversations": [{"from": "human", "value": "x"}, {"from": "gpt", "value": "y"}]}
    assert text(obj, "conversations[].value") == "x\ny"


def test_explicit_list_of_strings_is_joined() -> None:
    assert text({"paras": ["p1", "p2"]}, "paras") == "p1\np2"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (3, "a number"),
        (2.5, "a number"),
        (None, "null"),
        (True, "a boolean"),
        ({"a": "b"}, "an object"),
    ],
)
def test_explicit_field_of_wrong_type(value: object, kind: str) -> None:
    err = error({"body": value}, "body")
    assert err.line == 7
    assert str(err).startswith(f"{P}:7: ")
    assert "'body'" in err.problem
    assert kind in err.problem


def test_explicit_field_list_of_numbers() -> None:
    err = error({"body": [1, 2]}, "body")
    assert "'body'" in err.problem
    assert "array containing a number" in err.problem


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
    for field in (None, "text"):
        err = error(obj, field)
        assert f"record is {kind}, not a JSON object" in err.problem
        assert err.line == 7


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
