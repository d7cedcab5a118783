"""``core.spec.native.line_ends`` (the compiled line splitter scrub's later passes use) against Python."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core.spec import native


def python_line_ends(data: bytes) -> list[int]:
    ends: list[int] = []
    offset = 0
    for line in data.split(b"\n")[:-1]:
        offset += len(line) + 1
        ends.append(offset)
    if offset < len(data):  # a last line without its newline
        ends.append(len(data))
    return ends


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=400)
    | st.lists(st.sampled_from([b"\n", b"a", b"\r\n", b"xyz"]), max_size=300).map(b"".join)
)
def test_line_ends_equal_pythons(data: bytes) -> None:
    assert native.line_ends(data).tolist() == python_line_ends(data)


def test_many_short_lines_are_all_found() -> None:
    data = b"\n" * 10_000 + b"tail"  # far more lines than the first guess of one per 64 bytes
    ends = native.line_ends(data)
    assert ends.size == 10_001 and ends[-1] == len(data) and ends[9_999] == 10_000
