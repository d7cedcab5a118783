"""Which characters are words on their own (spec ``words-v3``): letters and digits of the scripts
written without spaces between words.

Python's ``unicodedata`` has no Script property, so it comes from the ``regex`` package
(``\\p{sc=Han}``), which compiles Unicode's ``Scripts.txt`` into its own tables and is among
the most used packages on PyPI (tiktoken and transformers depend on it). Its Unicode version is
usually newer than Python's; a character only counts when Python's ``str.isalnum()`` is true for
it, so a code point Python's Unicode does not assign is never a word on its own, and the
classification follows the Unicode version the manifest records (``Spec.unicode``), not the
version of ``regex``: the tests check every letter and digit against fontTools' own copy of
``Scripts.txt`` (of yet another Unicode version), and they agree on all of them.

The scripts: the issue's eight (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, Tibetan),
and the others whose letters Unicode's line breaking algorithm (UAX #14) treats as it treats
Han or Thai, class ID (ideographic: Yi, Bopomofo, Tangut, Nüshu, Khitan Small Script) or SA
(South-East Asian, written without spaces: Tai Le, New Tai Lue, Tai Tham, Tai Viet, Ahom):
text in them has no spaces to split on either. Hangul is written with spaces (UAX #14 class
ID covers its syllables only for line breaking), so Korean keeps whitespace words.

A character that is not a letter or digit (a combining vowel or tone mark of Thai, Khmer,
Myanmar or Tibetan: category M) is not a word of its own: it stays with the letter before it,
so a word is never a mark alone.
"""

from __future__ import annotations

from functools import cache
from typing import Any

UNSPACED_SCRIPTS = (
    "Han",
    "Hiragana",
    "Katakana",
    "Thai",
    "Lao",
    "Khmer",
    "Myanmar",
    "Tibetan",
    "Yi",
    "Bopomofo",
    "Tangut",
    "Nushu",
    "Khitan_Small_Script",
    "Tai_Le",
    "New_Tai_Lue",
    "Tai_Tham",
    "Tai_Viet",
    "Ahom",
)
"""Unicode Script property values (``Scripts.txt``) of the scripts written without spaces."""

FIRST_UNSPACED = "\u0e00"
"""No character before Thai's block (U+0E00) is of those scripts (tests/text check each one)."""


@cache
def _unspaced() -> Any:
    """The class of the letters of those scripts (compiled when first asked: the code point
    tables answer for almost every character, and a scan should not import ``regex`` to start)."""
    import regex  # noqa: PLC0415

    return regex.compile("[" + "".join(f"\\p{{sc={name}}}" for name in UNSPACED_SCRIPTS) + "]")


@cache
def is_solo(ch: str) -> bool:
    """Whether the one character ``ch`` is a word on its own: a letter or digit (Python's
    ``str.isalnum()``) of a script written without spaces."""
    if ch < FIRST_UNSPACED:  # Latin, Greek, Cyrillic, Arabic, Indic ...: no regex to compile
        return False
    return ch.isalnum() and _unspaced().match(ch) is not None
