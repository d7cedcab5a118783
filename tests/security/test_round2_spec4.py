"""Normalisation spec 4's table: a leaked item edited so that spec 3 read it as other words.

Each row writes the long golden item (``hostile.LONG``) into a training file with one edit a
reader does not see (an invisible letter inside words, an HTML entity or tag between words, a
Markdown link around some words) and scans it with the defaults. Under spec 3 (``was``, measured
on main before spec 4) each edit left no run of 13 words: exit 0, with at most a warning of
GPT-4's or the reworded rule. Spec 4 removes every Default_Ignorable_Code_Point and reads HTML
and Markdown markup as its reader sees it, so the GPT-3 rule fails on each (exit 1).

Two rows say what did not change. U+180E inside words was caught already (spec 3 removes it,
a format character since Unicode 6.3); the issue's "U+180E defeats the failing rule" is U+180E
*between* words, in place of the spaces: removed without splitting (spec 4 removes every
default-ignorable code point the same way; only U+200B is a word boundary), it glues the words
together as a zero-width character does on screen, which only GPT-4's character rule saw
(a warning, as for letters spaced out). Since decision E6 ("Edits that break runs") the scan
reads a token glued by U+180E (a space until Unicode 6.3) a second time with each U+180E a word
boundary, as it reads camelCase (``core.spec.glued``; the manifest is unchanged), and the GPT-3
rule fails on it too (exit 1).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.security.hostile import LONG, Row, copy_project, make_project, put, run_row

WORDS = LONG.split()


def _inside_words(mark: str) -> str:
    """``mark`` in the middle of every word of the item."""
    return " ".join(w[: len(w) // 2] + mark + w[len(w) // 2 :] for w in WORDS)


def _every(k: int, wrap: str) -> str:
    """``wrap`` (a format string of one word) around every ``k``-th word of the item."""
    return " ".join(wrap.format(w) if i % k == k - 1 else w for i, w in enumerate(WORDS))


def _jsonl(text: str) -> Callable[[Path], list[str]]:
    def build(root: Path) -> list[str]:
        put(root, "train.jsonl", json.dumps({"text": text}) + "\n")
        return ["scan", "train.jsonl"]

    return build


def _file(name: str, text: str) -> Callable[[Path], list[str]]:
    def build(root: Path) -> list[str]:
        put(root, name, text)
        return ["scan", name]

    return build


def _row(name: str, text: str, was: int | str, code: int = 1, says: tuple[str, ...] = ("FAIL gpt3",)) -> Row:
    return Row(name=name, build=_jsonl(text), code=code, was=was, says=says)


LINK = "[{}](http://example.com/page?id=9)"
ROWS = [
    _row("U+034F COMBINING GRAPHEME JOINER inside every word", _inside_words("\u034f"), was=0),
    _row("U+3164 HANGUL FILLER inside every word", _inside_words("\u3164"), was=0),
    _row("U+FFA0 HALFWIDTH HANGUL FILLER inside every word", _inside_words("\uffa0"), was=0),
    _row("U+180E MONGOLIAN VOWEL SEPARATOR inside every word", _inside_words("\u180e"), was=1),
    # read a second time with every U+180E a word boundary (``core.spec.glued``, decision E6)
    _row("U+180E in place of every space", "\u180e".join(WORDS), was=0),
    _row("&nbsp; between words", "&nbsp;".join(WORDS), was=0),
    _row("&#101; for every e", LONG.replace("e", "&#101;"), was=0),
    _row("&#x65; for every e", LONG.replace("e", "&#x65;"), was=0),
    _row("<span> between words", "<span>".join(WORDS), was=0),
    _row("</b><i> between words", "</b><i>".join(WORDS), was=0),
    _row("a Markdown link around every 9th word", _every(9, LINK), was=0),
    _row("a reference link around every 9th word", _every(9, "[{}][ref9]"), was=0),
    Row(
        name="a Markdown link around every 9th word, in a .md file",
        build=_file("notes.md", "# Notes\n\n" + _every(9, LINK) + "\n"),
        code=1,
        was=0,
        says=("FAIL gpt3",),
    ),
    Row(
        name="<span> and &nbsp; between words, in a .txt file",
        build=_file("page.txt", _every(2, "<span>{}</span>&nbsp;") + "\n"),
        code=1,
        was=0,
        says=("FAIL gpt3",),
    ),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("spec4"))


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(template: Path, tmp_path: Path, row: Row) -> None:
    run_row(row, copy_project(template, tmp_path / "project"))
