"""The prefilter's JSON reading (``_native.decode_segments``) against Python's ``json``.

``decode_segments(line, keys, READ_KEYS)`` is the strings the C filter decodes for the listed
top-level keys, ``decode_segments(line, b"", READ_ALL)`` every string of the line (keys too, in
document order), or None where it hands the line to the exact path whatever its text. It must
never accept a line the exact path refuses nor decode a text other than the readers': a clean
line is counted, never re-read.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.spec.native import has_prefilter, may_repeat_keys, module
from contam_guard.io.readers.fields import loads_keeping_duplicates, strings_in

_native = module()


def decode_field(line: bytes, key: bytes) -> str | None:
    """The text the filter reads for the one top-level ``key`` (``--field key``), or None."""
    got = _native.decode_segments(line, key, _native.READ_KEYS)
    if got is None:
        return None
    assert len(got) == 1
    return str(got[0])


def decode_all(line: bytes) -> list[str] | None:
    """Every string the filter reads without ``--field``, or None."""
    got = _native.decode_segments(line, b"", _native.READ_ALL)
    return None if got is None else list(got)


def readers_strings(line: bytes) -> list[str]:
    """Every string the readers take from a line json reads (repeated keys kept)."""
    return [segment.text for segment in strings_in(loads_keeping_duplicates(line.decode("utf-8")))]


if not has_prefilter():
    pytest.skip("the compiled prefilter is not loaded (numpy kernels)", allow_module_level=True)

# ------------------------------------------------------------------------------------------
# Random valid lines

# Code points that exercise escaping: quotes, backslashes, controls, DEL, JSON-awkward
# separators, the BMP edges around the surrogates, 4-byte UTF-8, U+10FFFF.
AWKWARD = '"\\/\b\f\n\r\t\x00\x01\x1f\x7f\x80\x85\xa0\u2028\u2029\ud7ff\ue000\ufeff\uffff😀𐀀\U0010ffff İΣß'
texts = st.text() | st.text(alphabet=st.sampled_from(AWKWARD) | st.characters(codec="utf-8"), max_size=40)
# Number tokens as written (json.dumps only writes a few of the forms the grammar allows).
number_tokens = st.from_regex(r"-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,12})?([eE][-+]?[0-9]{1,3})?", fullmatch=True)


@dataclass(frozen=True)
class Number:
    """A number token, written verbatim."""

    token: str


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | number_tokens.map(Number)
    | texts
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)
others = st.dictionaries(texts.filter(lambda k: k != "text"), values, max_size=5)


def _plain(value: object) -> object:
    """``value`` with number tokens as Python numbers (for json.dumps)."""
    if isinstance(value, Number):
        number = json.loads(value.token)
        return number if math.isfinite(number) else 0  # 1e999 is inf, which json.dumps writes as Infinity
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@st.composite
def records(draw: st.DrawFn) -> dict[str, object]:
    """A dict with a "text" string somewhere among other keys."""
    other = draw(others)
    position = draw(st.integers(0, len(other)))
    items = list(other.items())
    items.insert(position, ("text", draw(texts)))
    return dict(items)


endings = st.sampled_from([b"", b"\n", b"\r\n"])


@st.composite
def dumped_lines(draw: st.DrawFn) -> bytes:
    """A record written by json.dumps with random separators and surrounding whitespace."""
    record = _plain(draw(records()))
    item_sep = draw(st.sampled_from([",", ", ", " , ", ",\t", "\t,  "]))
    key_sep = draw(st.sampled_from([":", ": ", " : ", ":\t", "\t:"]))
    text = json.dumps(record, ensure_ascii=draw(st.booleans()), separators=(item_sep, key_sep))
    ws = st.text(alphabet=" \t\r", max_size=3)
    return (draw(ws) + text + draw(ws)).encode("utf-8") + draw(endings)


_SIMPLE = {
    '"': '\\"',
    "\\": "\\\\",
    "/": "\\/",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _escape(ch: str, rnd: random.Random) -> str:
    cp = ord(ch)
    upper = rnd.random() < 0.5
    units = [cp]
    if cp >= 0x10000:  # a surrogate pair
        v = cp - 0x10000
        units = [0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)]
    return "".join(f"\\u{u:04X}" if upper else f"\\u{u:04x}" for u in units)


def _string(s: str, rnd: random.Random, ascii_only: bool) -> str:
    out = ['"']
    for ch in s:
        must = ch in '"\\' or ord(ch) < 0x20 or (ascii_only and ord(ch) >= 0x80)
        choice = rnd.random()
        if ch in _SIMPLE and (must or choice < 0.3) and choice < 0.7:
            out.append(_SIMPLE[ch])
        elif must or choice < 0.15:
            out.append(_escape(ch, rnd))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _dump(value: object, rnd: random.Random, ascii_only: bool) -> str:
    """Any JSON writer's output: random whitespace, escapes, number forms."""

    def ws() -> str:
        return rnd.choice(["", "", "", " ", "  ", "\t", " \r ", "\n"])

    if isinstance(value, Number):
        return value.token
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        token = json.dumps(value)
        return token.upper() if rnd.random() < 0.3 else token
    if isinstance(value, str):
        return _string(value, rnd, ascii_only)
    if isinstance(value, list):
        inner = ",".join(ws() + _dump(v, rnd, ascii_only) + ws() for v in value)
        return "[" + (inner or ws()) + "]"
    assert isinstance(value, dict)
    members = ",".join(
        ws() + _string(k, rnd, ascii_only) + ws() + ":" + ws() + _dump(v, rnd, ascii_only) + ws()
        for k, v in value.items()
    )
    return "{" + (members or ws()) + "}"


def _check_decodes(line: bytes) -> None:
    expected = json.loads(line.decode("utf-8"))["text"]
    assert decode_all(line) == readers_strings(line)
    got = decode_field(line, b"text")
    if got is None:  # a top-level key written with escapes may be "text": left to the exact path
        assert b"\\" in line, line
        return
    assert got == expected
    # The exact path parses with orjson first (json when orjson refuses): the same text too.
    try:
        fast = orjson.loads(line)
    except orjson.JSONDecodeError:
        return
    assert fast["text"] == got


@settings(max_examples=300, deadline=None)
@given(dumped_lines())
def test_json_dumps_lines_decode_as_json_does(line: bytes) -> None:
    _check_decodes(line)


@settings(max_examples=300, deadline=None)
@given(records(), st.booleans(), st.randoms(use_true_random=False), endings)
def test_any_writers_lines_decode_as_json_does(
    record: dict[str, object], ascii_only: bool, rnd: random.Random, ending: bytes
) -> None:
    line = _dump(record, rnd, ascii_only).encode("utf-8") + ending
    _check_decodes(line)


# ------------------------------------------------------------------------------------------
# Strictness: a mutated line is decoded only when json reads it, and to json's text

INTERESTING_BYTES = (
    b'"\\{}[],: \t\r\nu0123456789aeEfnrtl.-+/\x00\x0b\x0c\x1f\x7f'
    b"\x80\x8f\xa0\xbf\xc0\xc1\xc2\xdf\xe0\xed\xef\xf0\xf4\xf5\xff"
)


def _mutate(line: bytes, rnd: random.Random, count: int) -> bytes:
    data = bytearray(line)
    for _ in range(count):
        kind = rnd.choice(("delete", "insert", "replace"))
        if kind == "delete" and data:
            del data[rnd.randrange(len(data))]
            continue
        byte = rnd.choice(INTERESTING_BYTES) if rnd.random() < 0.8 else rnd.randrange(256)
        if kind == "replace" and data:
            data[rnd.randrange(len(data))] = byte
        else:
            data.insert(rnd.randrange(len(data) + 1), byte)
    return bytes(data)


def _check_strict(line: bytes) -> bool:
    """Whenever the filter decodes ``line``, json reads it, strictly, to the same text (every
    string too). Returns whether it decoded the text field."""
    strings = decode_all(line)
    if strings is not None:
        assert strings == readers_strings(line)  # json reads it (strictly: it raises otherwise)
    pairs_seen: list[list[tuple[str, object]]] = []

    def hook(kv: list[tuple[str, object]]) -> dict[str, object]:
        pairs_seen.append(kv)
        return dict(kv)

    try:
        json.loads(line.decode("utf-8"), object_pairs_hook=hook)
    except (UnicodeDecodeError, ValueError, RecursionError):
        pass
    else:
        if any(len({k for k, _ in kv}) < len(kv) for kv in pairs_seen):
            assert may_repeat_keys(line), line
    got = decode_field(line, b"text")
    if got is None:
        return False
    assert isinstance(got, str)
    text = line.decode("utf-8")  # strict: raises on any bad byte
    obj = json.loads(text)
    assert isinstance(obj, dict)
    assert isinstance(obj["text"], str)
    assert obj["text"] == got
    # ... and exactly once: json keeps the last of repeated keys, so the key must not repeat.
    pairs = json.loads(text, object_pairs_hook=lambda kv: kv)
    assert [k for k, _ in pairs].count("text") == 1
    return True


@settings(max_examples=500, deadline=None)
@given(dumped_lines(), st.randoms(use_true_random=False), st.integers(1, 3))
def test_mutated_lines_decode_only_as_json_does(line: bytes, rnd: random.Random, count: int) -> None:
    _check_strict(_mutate(line, rnd, count))


SEED_LINES = [
    b'{"text": "the cat sat on the mat", "id": 12, "score": -1.5e-3, "ok": true, "x": null}\n',
    '{"meta": {"tags": ["a", "b", [1, 2.0, {}]]}, "text": "caf\u00e9 \u00df \u0130 \U0001f600"}\r\n'.encode(),
    b'{"text":"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00","n":[0,-0,1E+2,3.25e-7]}\n',
    '{"ключ": "значение", "text": "текст", "z": false}'.encode(),
]


def test_many_mutations_decode_only_as_json_does() -> None:
    """A larger deterministic sweep, checking that it sees both outcomes (so it can fail)."""
    rnd = random.Random(20240601)
    decoded = refused = 0
    for _ in range(100000):
        line = _mutate(rnd.choice(SEED_LINES), rnd, rnd.randint(1, 3))
        if _check_strict(line):
            decoded += 1
        else:
            refused += 1
    assert decoded > 3000
    assert refused > 3000


# ------------------------------------------------------------------------------------------
# Explicit cases

DEEP = 129

REFUSED = {
    "NaN value": b'{"text": "a", "x": NaN}',
    "Infinity value": b'{"x": Infinity, "text": "a"}',
    "-Infinity value": b'{"x": -Infinity, "text": "a"}',
    "trailing comma in object": b'{"text": "a",}',
    "trailing comma in array": b'{"x": [1, 2,], "text": "a"}',
    "leading comma": b'{, "text": "a"}',
    "double comma": b'{"x": 1,, "text": "a"}',
    "single-quoted key and value": b"{'text': 'a'}",
    "single-quoted value": b"{\"text\": 'a'}",
    "duplicate text key": b'{"text": "a", "text": "b"}',
    "duplicate text key, escaped": b'{"text": "a", "t\\u0065xt": "b"}',
    "duplicate text key, second not a string": b'{"text": "a", "text": 1}',
    "text is a number": b'{"text": 1}',
    "text is a float": b'{"text": 1.5}',
    "text is null": b'{"text": null}',
    "text is true": b'{"text": true}',
    "text is a list": b'{"text": ["a"]}',
    "text is an object": b'{"text": {"text": "a"}}',
    "text missing": b'{"x": "a"}',
    "empty object": b"{}",
    "text only nested": b'{"x": {"text": "a"}}',
    "key differs in case": b'{"Text": "a"}',
    "key with a trailing space": b'{"text ": "a"}',
    "key prefix": b'{"tex": "a"}',
    "key longer": b'{"texts": "a"}',
    "key with NUL": b'{"text\\u0000": "a"}',
    "lone high surrogate": b'{"text": "\\ud800"}',
    "lone low surrogate": b'{"text": "\\udc00"}',
    "high surrogate then letter": b'{"text": "\\ud800\\u0041"}',
    "high surrogate at the end of the string": b'{"text": "a\\ud83d"}',
    "surrogates reversed": b'{"text": "\\ude00\\ud83d"}',
    "two high surrogates": b'{"text": "\\ud83d\\ud83d"}',
    "lone surrogate in another value": b'{"x": "\\ud800", "text": "a"}',
    "lone surrogate in the key": b'{"text\\udc00": "a", "text": "b"}',
    "raw tab in string": b'{"text": "a\tb"}',
    "raw NUL in string": b'{"text": "a\x00b"}',
    "raw newline in string": b'{"text": "a\nb"}',
    "raw U+001F in string": b'{"text": "a\x1f"}',
    "raw control in another value": b'{"x": "\x01", "text": "a"}',
    "invalid byte 0xff": b'{"text": "\xff"}',
    "invalid byte 0xfe": b'{"text": "a\xfe"}',
    "stray continuation byte": b'{"text": "\x80"}',
    "overlong slash": b'{"text": "\xc0\xaf"}',
    "overlong 3-byte": b'{"text": "\xe0\x80\xaf"}',
    "overlong 4-byte": b'{"text": "\xf0\x80\x80\xaf"}',
    "encoded surrogate": b'{"text": "\xed\xa0\x80"}',
    "encoded low surrogate": b'{"text": "\xed\xbf\xbf"}',
    "above U+10FFFF": b'{"text": "\xf4\x90\x80\x80"}',
    "lead byte 0xf5": b'{"text": "\xf5\x80\x80\x80"}',
    "truncated 2-byte": b'{"text": "\xc3"}',
    "truncated 3-byte": b'{"text": "\xe2\x82"}',
    "truncated 4-byte": b'{"text": "\xf0\x9f\x98"}',
    "truncated at the end of the line": b'{"text": "a"}\xe2\x82',
    "invalid UTF-8 in another value": b'{"x": "\xff", "text": "a"}',
    "invalid UTF-8 in a key": b'{"\xff": 1, "text": "a"}',
    "invalid UTF-8 between tokens": b'{"text": "a"\xc2\xa0}',
    "NBSP as whitespace": '{\u00a0"text": "a"}'.encode(),
    "deep nesting in another key": b'{"x": ' + b"[" * DEEP + b"]" * DEEP + b', "text": "a"}',
    "deep object nesting in another key": b'{"text": "a", "x": ' + b'{"a":' * DEEP + b"1" + b"}" * (DEEP + 1),
    "very deep nesting": b'{"text": "a", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "integer with 5000 digits": b'{"x": ' + b"7" * 5000 + b', "text": "a"}',
    "fraction with 5000 digits": b'{"x": 0.' + b"7" * 5000 + b', "text": "a"}',
    "leading zero": b'{"x": 01, "text": "a"}',
    "bare minus": b'{"x": -, "text": "a"}',
    "plus sign": b'{"x": +1, "text": "a"}',
    "trailing dot": b'{"x": 1., "text": "a"}',
    "leading dot": b'{"x": .5, "text": "a"}',
    "empty exponent": b'{"x": 1e, "text": "a"}',
    "exponent sign only": b'{"x": 1e+, "text": "a"}',
    "hex number": b'{"x": 0x10, "text": "a"}',
    "Python literal True": b'{"x": True, "text": "a"}',
    "Python literal None": b'{"x": None, "text": "a"}',
    "truncated literal": b'{"x": tru, "text": "a"}',
    "literal with extra letters": b'{"x": nulll, "text": "a"}',
    "unquoted key": b'{text: "a"}',
    "missing colon": b'{"text" "a"}',
    "missing comma": b'{"x": 1 "text": "a"}',
    "unclosed object": b'{"text": "a"',
    "unclosed string": b'{"text": "a}',
    "unclosed array in another key": b'{"x": [1, "text": "a"}',
    "invalid escape": b'{"text": "a\\x41"}',
    "escape of a capital U": b'{"text": "\\U0041"}',
    "short unicode escape": b'{"text": "\\u12"}',
    "non-hex unicode escape": b'{"text": "\\u12g4"}',
    "backslash at the end": b'{"text": "a\\',
    "two objects": b'{"text": "a"}{"text": "b"}',
    "two objects with a space": b'{"text": "a"} {"text": "b"}',
    "trailing garbage": b'{"text": "a"} x',
    "trailing comma after the object": b'{"text": "a"},',
    "array line": b'[{"text": "a"}]',
    "string line": b'"text"',
    "number line": b"1",
    "null line": b"null",
    "empty line": b"",
    "newline only": b"\n",
    "whitespace only": b" \t \r\n",
    "UTF-8 BOM before the object": b'\xef\xbb\xbf{"text": "a"}',
    "form feed before the object": b'\x0c{"text": "a"}',
    "vertical tab after the object": b'{"text": "a"}\x0b',
    "NUL after the object": b'{"text": "a"}\x00',
    "comment": b'{"text": "a" /* c */}',
}


@pytest.mark.parametrize("line", list(REFUSED.values()), ids=list(REFUSED))
def test_lines_the_filter_leaves_to_the_exact_path(line: bytes) -> None:
    assert decode_field(line, b"text") is None


DECODED = {
    "emoji as a surrogate pair escape": (b'{"text": "\\ud83d\\ude00"}', "\U0001f600"),
    "surrogate pair, upper-case hex": (b'{"text": "\\uD83D\\uDE00!"}', "\U0001f600!"),
    "U+10FFFF as escapes": (b'{"text": "\\udbff\\udfff"}', "\U0010ffff"),
    "escaped slash": (b'{"text": "a\\/b"}', "a/b"),
    "all simple escapes": (b'{"text": "\\"\\\\\\/\\b\\f\\n\\r\\t"}', '"\\/\b\f\n\r\t'),
    "escaped NUL and controls": (b'{"text": "\\u0000\\u001f\\u007f"}', "\x00\x1f\x7f"),
    "raw DEL": (b'{"text": "a\x7fb"}', "a\x7fb"),
    "non-ASCII key before text": ('{"ключ": 1, "text": "x"}'.encode(), "x"),
    "raw 2-, 3- and 4-byte UTF-8": ('{"text": "é€😀\U0010ffff"}'.encode(), "é€😀\U0010ffff"),
    "edges of the BMP": (
        '{"text": "\ud7ff\ue000\uffff\u0080\u07ff\u0800"}'.encode(),
        "\ud7ff\ue000\uffff\u0080\u07ff\u0800",
    ),
    "special code points (the filter decodes them; hashing sends them exact)": (
        '{"text": "İ Σ ß"}'.encode(),
        "İ Σ ß",
    ),
    "empty text": (b'{"text": ""}', ""),
    "text last": (b'{"a": {"text": 1}, "b": [{"text": null}], "text": "t"}', "t"),
    "text first": (b'{"text": "t", "a": {"text": 1}}', "t"),
    "whitespace everywhere": (b' \t{ \r"text" \t:\n "a" ,"b"\t:\r[ 1 , { } ,[ ] ]}\t\r\n', "a"),
    "CRLF ending": (b'{"text": "a"}\r\n', "a"),
    "numbers of every form": (
        b'{"a": [0, -0, 1, -12, 0.5, -0.0, 1e5, 1E+5, 1e-5, 2.5E-05, 12345678901234567890123], "text": "n"}',
        "n",
    ),
    "a long integer": (b'{"x": ' + b"9" * 200 + b', "text": "a"}', "a"),
    "an overflowing float": (b'{"x": 1e999, "text": "a"}', "a"),
    "literals": (b'{"a": true, "b": false, "c": null, "text": "lit"}', "lit"),
    "nesting 100 deep in another key": (b'{"x": ' + b"[" * 100 + b"]" * 100 + b', "text": "a"}', "a"),
    "other keys repeat": (b'{"x": 1, "x": 2, "text": "a"}', "a"),
    "a long text": (b'{"text": "' + b"ab " * 100000 + b'"}', "ab " * 100000),
}


@pytest.mark.parametrize(("line", "expected"), list(DECODED.values()), ids=list(DECODED))
def test_lines_the_filter_decodes(line: bytes, expected: str) -> None:
    assert json.loads(line.decode("utf-8"))["text"] == expected  # the table itself is right
    assert decode_field(line, b"text") == expected


# Valid lines the filter leaves to the exact path by choice, in READ_KEYS mode: a top-level key
# written with escapes might be a listed key in disguise (or repeat one).
LEFT_EXACT = {
    "escaped key": b'{"\\u0074ext": "hi"}',
    "escaped key, upper-case hex": b'{"te\\u0078\\u0054": 1, "te\\u0078t": "hi"}',
    "escaped non-ASCII key before text": b'{"\\u043a\\u043b": [1], "text": "x"}',
}


@pytest.mark.parametrize("line", list(LEFT_EXACT.values()), ids=list(LEFT_EXACT))
def test_escaped_keys_go_exact_with_a_field_but_are_read_without(line: bytes) -> None:
    assert decode_field(line, b"text") is None
    assert decode_all(line) == readers_strings(line)


def test_several_keys_in_the_order_listed() -> None:
    line = b'{"prompt": "p", "id": 3, "completion": "c"}'
    assert _native.decode_segments(line, b"completion\0prompt", _native.READ_KEYS) == ["c", "p"]
    assert _native.decode_segments(line, b"completion\0missing", _native.READ_KEYS) is None


def test_every_string_in_document_order_with_repeated_keys() -> None:
    line = b'{"a": "x", "b": ["y", {"c": "z"}], "a": "w", "n": [1, null, true]}'
    assert decode_all(line) == ["a", "x", "b", "y", "c", "z", "a", "w", "n"]
    assert decode_all(line) == readers_strings(line)
    assert decode_all(b'["s", 1, "t"]') == ["s", "t"]
    assert decode_all(b'"bare"') == ["bare"]
    assert decode_all(b"5") == []


@pytest.mark.parametrize(
    ("line", "maybe"),
    [
        (b'{"a": 1, "b": 2}', False),
        (b'{"a": 1, "b": {"a": 2}}', False),  # the same key in two objects
        (b'{"a": 1, "a": 2}', True),
        (b'{"x": [{"k": 1, "k": 2}]}', True),
        (b'{"\\u0061": 1}', True),  # escaped: cannot tell cheaply
        (b'{"a": 1,', True),  # not read: the caller parses it with every pair kept
    ],
)
def test_may_repeat_keys(line: bytes, maybe: bool) -> None:
    assert may_repeat_keys(line) is maybe


def test_other_keys() -> None:
    line = '{"text": 1, "question": "q?", "вопрос": "в"}'.encode()
    assert decode_field(line, b"question") == "q?"
    assert decode_field(line, "вопрос".encode()) == "в"
    assert decode_field(line, b"text") is None
    assert decode_field(b'{"question": "a", "question": "b"}', b"question") is None
    assert decode_field(b'{"question": "a"}', b"text") is None


def test_refused_cases_cover_what_json_accepts_too() -> None:
    """Some refused lines are valid JSON with a string text: the filter may be conservative
    there (the exact path reads them). The table must hold such cases (lone surrogates, NaN,
    repeated keys) or it only tests json errors."""
    accepted = []
    for name, line in REFUSED.items():
        try:
            obj = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and isinstance(obj.get("text"), str):
            accepted.append(name)
    assert {"NaN value", "duplicate text key", "lone high surrogate", "deep nesting in another key"} <= set(
        accepted
    )


PLAIN = b"abcdefghijklmnopqrstuvwxyz0123456789"  # longer than a few 8-byte words


@pytest.mark.parametrize("position", range(len(PLAIN) + 1))
def test_every_byte_at_every_offset_in_a_string(position: int) -> None:
    """Each byte value inside plain ASCII text, at every offset (runs of plain bytes may be read
    several at a time): decoded exactly where json reads it."""
    for byte in range(256):
        piece = bytes([byte])
        line = b'{"text": "' + PLAIN[:position] + piece + PLAIN[position:] + b'"}\n'
        decoded = _check_strict(line)
        # json reads it: printable ASCII but a quote; a backslash making an escape with the next letter
        valid = 0x20 <= byte < 0x80 and piece != b'"'
        if piece == b"\\":
            valid = PLAIN[position : position + 1] in (b"b", b"f", b"n", b"r", b"t")
        assert decoded == valid, line
    for piece in [b"\\n", b'\\"', b"\\\\", b"\\/", b"\\u00e9", b"\\ud83d\\ude00", "é€😀".encode()]:
        line = b'{"text": "' + PLAIN[:position] + piece + PLAIN[position:] + b'"}\n'
        assert _check_strict(line), line
    # The string ends (or the line is cut) at every offset.
    line = b'{"text": "' + PLAIN[:position] + b'", "b": 1}'
    assert decode_field(line, b"text") == PLAIN[:position].decode()
    assert decode_field(b'{"text": "' + PLAIN[:position], b"text") is None
