"""Training text in a Markdown review is text, never markup."""

from __future__ import annotations

import pytest

from contam_guard.report.markdown import _code, _escape


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)>"),
        ("&lt;b&gt;", "&amp;lt;b&amp;gt;"),
        ("![pixel](http://example.invalid/p.png)", "![pixel]\\(http://example.invalid/p.png)"),
        ("**bold** `code`", "\\*\\*bold\\*\\* \\`code\\`"),
        ("line\nbreak", "line break"),
        ("[EMAIL] and 3 >= 2", "[EMAIL] and 3 >= 2"),
    ],
)
def test_escape(text: str, shown: str) -> None:
    assert _escape(text) == shown


def test_a_file_name_cannot_close_its_code_span() -> None:
    assert _code("a.jsonl") == "`a.jsonl`"
    assert _code("x``<script>.jsonl") == "```x``<script>.jsonl```"
    assert _code("`x") == "`` `x ``"
