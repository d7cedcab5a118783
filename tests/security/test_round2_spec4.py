"""Normalisation spec 4's table: a leaked item edited so that spec 3 read it as other words.

Each row writes the long golden item (``hostile.LONG``) into a training record with one edit a
reader does not see (an invisible letter inside words, an HTML entity or tag between words, a
Markdown link around some words), and scans it with the defaults. Under spec 3 each edit left
no run of 13 words (``was``: exit 0, or a warning only); spec 4 removes every
Default_Ignorable_Code_Point and reads HTML and Markdown markup as its reader sees it, so the
GPT-3 rule fails on it (``code``: exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.security.hostile import LONG, Row, copy_project, make_project, put, run_row

WORDS = LONG.split()


def _inside_words(mark: str) -> str:
    """``mark`` in the middle of every word of the item."""
    return " ".join(w[: len(w) // 2] + mark + w[len(w) // 2 :] for w in WORDS)


def _row(name: str, text: str, was: int | str, says: tuple[str, ...] = ("gpt3",)) -> Row:
    def build(root: Path) -> list[str]:
        put(root, "train.jsonl", json.dumps({"text": text}) + "\n")
        return ["scan", "train.jsonl"]

    return Row(name=name, build=build, code=1, was=was, says=says)


def _every(k: int, wrap: str) -> str:
    """``wrap`` (a format string of one word) around every ``k``-th word of the item."""
    return " ".join(wrap.format(w) if i % k == k - 1 else w for i, w in enumerate(WORDS))


ROWS = [
    _row("U+180E MONGOLIAN VOWEL SEPARATOR inside every word", _inside_words("\u180e"), was="?"),
    _row("U+034F COMBINING GRAPHEME JOINER inside every word", _inside_words("\u034f"), was="?"),
    _row("U+3164 HANGUL FILLER inside every word", _inside_words("\u3164"), was="?"),
    _row("&nbsp; between words", "&nbsp;".join(WORDS), was="?"),
    _row("&#101; for every e", LONG.replace("e", "&#101;"), was="?"),
    _row("&#x65; for every e", LONG.replace("e", "&#x65;"), was="?"),
    _row("<span> between words", "<span>".join(WORDS), was="?"),
    _row("</b><i> between words", "</b><i>".join(WORDS), was="?"),
    _row("a Markdown link around every 9th word", _every(9, "[{}](http://example.com/page?id=9)"), was="?"),
    _row("a reference link around every 9th word", _every(9, "[{}][ref9]"), was="?"),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("spec4"))


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(template: Path, tmp_path: Path, row: Row) -> None:
    run_row(row, copy_project(template, tmp_path / "project"))
