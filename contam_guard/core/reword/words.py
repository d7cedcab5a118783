"""The normalised words of the strings a scan reads, for the rewording rules: the manifest's
``TextSpec.words``, with the per-character reference path only for the tokens that need it.

Every step of every spec works within a whitespace-delimited token (no step joins or splits
across whitespace: ``tests/reword/test_words.py`` checks every whitespace character), so the
words of a text are the words of its tokens in order. An ASCII token's are its characters
without ASCII punctuation and symbols (``string.punctuation``), lowercased: NFKC, case folding,
format characters and unspaced scripts change no ASCII text beyond that. So only the tokens
holding a non-ASCII character take ``spec.words``; a training text with one curly quote no
longer sends its every character through the reference path. Step m of spec 4 (markup) is the
exception: a tag or a link holds spaces, so it rewrites the whole text first
(``TextSpec.rewrite``), and every later step works token by token again.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from contam_guard.core.reword.content import masked_and_content
from contam_guard.core.spec.normalise import TextSpec

_ASCII_REMOVED = str.maketrans("", "", string.punctuation)
_NON_ASCII_TOKEN = re.compile(r"\S*[^\x00-\x7f]\S*")  # \S: not str.isspace, as str.split splits


def _ascii_words(text: str) -> list[str]:
    return text.translate(_ASCII_REMOVED).lower().split()


def normalised_words(text: str, spec: TextSpec) -> list[str]:
    """``spec.words(text)``, the same list, faster on text that is mostly ASCII."""
    text = spec.rewrite(text)
    if text.isascii():
        return _ascii_words(text)
    out: list[str] = []
    done = 0
    for token in _NON_ASCII_TOKEN.finditer(text):
        out += _ascii_words(text[done : token.start()])  # ASCII but for whitespace
        out += spec.rewritten_words(token.group())
        done = token.end()
    out += _ascii_words(text[done:])
    return out


def word_lists(texts: Sequence[str], spec: TextSpec) -> tuple[list[list[str]], list[list[str]]]:
    """Per text: its number-masked words, and its content features (as ``views.word_lists``, in one pass)."""
    both = [masked_and_content(normalised_words(text, spec)) for text in texts]
    return [masked for masked, _ in both], [content for _, content in both]
