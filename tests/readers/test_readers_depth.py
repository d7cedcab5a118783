"""One nesting limit for every JSON reader (``io.readers.depth.MAX_DEPTH``), and a JSON-array reader
whose memory and time grow linearly with depth (``ijson.items`` grew with its square)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import ijson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contam_guard.io.readers.depth import MAX_DEPTH, deeper_than
from contam_guard.io.readers.fields import DupObject
from contam_guard.io.readers.json_array import _elements
from tests.helpers import fail, read, write


def nested(depth: int, inner: str = "") -> str:
    """A JSON value ``depth`` levels deep: arrays inside an object (the object is level 1)."""
    return '{"x": ' + "[" * (depth - 1) + inner + "]" * (depth - 1) + ', "text": "b"}'


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ("[]", 1),
        ('{"a": [{}]}', 3),
        ('"[[[[[["', 0),  # brackets inside a string do not count
        ('["\\"[[[", [[]]]', 3),  # nor after an escaped quote inside the string
        (nested(MAX_DEPTH), MAX_DEPTH),
        (nested(MAX_DEPTH + 1), MAX_DEPTH + 1),
        ("[" * 600 + "]" * 600, 600),
        ("[" * 300 + "]" * 300 + "[" * 300 + "]" * 300, 300),  # many brackets, shallow
        ('["' + "[" * 1000 + '"]', 1),
    ],
)
def test_deeper_than(text: str, depth: int) -> None:
    raw = text.encode()
    assert deeper_than(raw, depth - 1) is (depth > 0)
    assert deeper_than(raw, depth) is False


@pytest.mark.parametrize("name", ["d.jsonl", "d.jsonl.gz"])
@pytest.mark.parametrize(
    "extra",
    [
        "",  # orjson reads the line
        ', "text": "c"',  # a repeated key: Python's json reads it
    ],
)
def test_jsonl_limit_is_the_same_on_every_path(tmp_path: Path, name: str, extra: str) -> None:
    ok = nested(MAX_DEPTH)[:-1] + extra + "}"
    records = read(write(tmp_path / name, (ok + "\n").encode()), "text")
    assert [r.joined() for r in records] == ["b\nc" if extra else "b"]
    deep = nested(MAX_DEPTH + 1)[:-1] + extra + "}"
    err = fail(write(tmp_path / name, f'{{"text": "a"}}\n{deep}\n'.encode()), every=True)
    assert err.line == 2
    assert f"JSON nested too deeply (more than {MAX_DEPTH} levels" in err.problem


def test_jsonl_exact_path_other_encoding(tmp_path: Path) -> None:
    """A line read by Python's json (not UTF-8) has the same limit."""
    deep = nested(MAX_DEPTH + 1).encode("latin-1")
    err = fail(write(tmp_path / "d.jsonl", deep + b"\n"), every=True, encoding="latin-1")
    assert err.line == 1 and "nested too deeply" in err.problem
    ok = nested(MAX_DEPTH).replace('"b"', '"caf\xe9"').encode("latin-1")
    records = read(write(tmp_path / "e.jsonl", ok + b"\n"), "text", encoding="latin-1")
    assert [r.joined() for r in records] == ["café"]


@pytest.mark.parametrize("name", ["d.json", "d.json.zst"])
def test_json_array_limit(tmp_path: Path, name: str) -> None:
    ok = f'[{{"text": "a"}}, {nested(MAX_DEPTH)}]'
    assert [r.joined() for r in read(write(tmp_path / name, ok.encode()), "text")] == ["a", "b"]
    deep = f'[{{"text": "a"}}, {nested(MAX_DEPTH + 1)}]'
    err = fail(write(tmp_path / name, deep.encode()), every=True)
    assert err.problem.startswith(f"array element 1: JSON nested too deeply (more than {MAX_DEPTH} levels")


def test_json_array_100000_deep_stops_at_the_limit(tmp_path: Path) -> None:
    """ijson.items took 67 s and 22 GB on this; the reader stops after MAX_DEPTH levels."""
    depth = 100_000
    err = fail(write(tmp_path / "d.json", ("[" * depth + "]" * depth).encode()), every=True)
    assert "array element 0: JSON nested too deeply" in err.problem


def test_cli_deep_inputs_exit_2_naming_the_file(tmp_path: Path) -> None:
    """Through the command, in a process of its own: exit 2, the file and the limit, no traceback."""

    def cg(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "contam_guard", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)

    (tmp_path / "golden.jsonl").write_text('{"question": "one two three four five six seven eight nine"}\n')
    assert cg("init").returncode == 0
    assert cg("register", "g", "golden.jsonl").returncode == 0
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "deep.jsonl").write_text('{"text": "a"}\n' + nested(100_000) + "\n")
    for name, where in (("deep.json", "deep.json: array element 0: "), ("deep.jsonl", "deep.jsonl:2: ")):
        done = cg("scan", name)
        assert done.returncode == 2, done.stderr
        assert f"{where}JSON nested too deeply (more than {MAX_DEPTH} levels" in done.stderr
        assert "Traceback" not in done.stderr


class _ObjectText(str):
    """An object drawn as its JSON text (so that a key can repeat), told apart from a string."""

    __slots__ = ()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(st.tuples(st.sampled_from(["a", "b", "[", "{"]), inner), max_size=4).map(
            lambda pairs: _ObjectText(
                "{" + ", ".join(f"{json.dumps(k)}: {_encode(v)}" for k, v in pairs) + "}"
            )
        )
    ),
    max_leaves=20,
)


def _encode(value: object) -> str:
    # objects are drawn as their JSON text; everything else is encoded (a string that merely
    # starts with "{" included: taking it for an object's text made "[{]")
    if isinstance(value, _ObjectText):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_encode(v) for v in value) + "]"
    return json.dumps(value)


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values, max_size=5))
@example(["{"])  # a string that starts like an object's text
def test_elements_are_built_as_ijson_items_builds_them(values: list[object]) -> None:
    """The reader's builder gives what ``ijson.items(map_type=DupObject)`` gives, repeated keys
    included (``pairs``), on any JSON array."""
    data = ("[" + ", ".join(_encode(v) for v in values) + "]").encode()
    expected = list(ijson.items(io.BytesIO(data), "item", use_float=True, map_type=DupObject))
    built = list(_elements(ijson.basic_parse(io.BytesIO(data), use_float=True), "d.json"))
    assert built == expected
    assert [_pairs(v) for v in built] == [_pairs(v) for v in expected]


def _pairs(value: object) -> object:
    if isinstance(value, DupObject):
        return [(k, _pairs(v)) for k, v in value.pairs]
    if isinstance(value, list):
        return [_pairs(v) for v in value]
    return value
