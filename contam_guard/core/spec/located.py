"""The spec's words and alnum view of one record, each unit with where it came from.

``features.py`` hands the records its tables cannot do (a SPECIAL code point) to these
functions. They compute exactly ``TextSpec.words`` and ``TextSpec.alnum`` (the tests compare
them on random text) and also say, for each word, the span [start, end) of the record from its
first to its last kept character, and for each alnum character the offset it came from.

Version 2 changes text before splitting it (NFKC may join or split characters), so offsets are
kept per *piece*: the record is cut before each code point that NFKC cannot join to what
precedes it (``tables.starts_safely``), each piece is normalised on its own (the same as
normalising the whole text, for that reason), and every character a piece gives points at the
piece's span.

Version 3 cuts words as step f says (``normalise.split_solo``), deciding on each character as
it will stand in the word (lowercased); a word's span then runs from the piece of its first
kept character to the piece of its last.
Its alnum view (``alnum-v3``) is put in NFC (step g); a character that joined others points
where the first of them came from.

Version 4 rewrites the record's markup first (step m, ``markup.rewrite``: the same length, each
character where it was), then cuts pieces as version 3 does, with its own step b.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from contam_guard.core.spec.normalise import ZERO_WIDTH_SPACE, TextSpec, is_ignorable, is_removed
from contam_guard.core.spec.scripts import is_solo
from contam_guard.core.spec.tables import composes_with_nothing_before, starts_safely

_TOKEN = re.compile(r"\S+")  # re's \s is str.isspace(), the same split as str.split()
Located = tuple[str, int, int]
"""A word, and the span [start, end) of the record it came from."""
_is_removed = cache(is_removed)  # the reference path runs on whole records: per-character caches
_is_solo = is_solo  # cached already


def words(text: str, spec: TextSpec, parts: list[Piece] | None = None) -> list[Located]:
    """``spec.words(text)``, each word with its span in ``text`` (version 2 and up: ``parts``
    are ``pieces(text, spec)`` when the caller has them already)."""
    if spec.version == 1:
        out = []
        for token in _TOKEN.finditer(text):
            kept = [i for i, ch in enumerate(token.group()) if not is_removed(ch)]
            if kept:
                word = "".join(token.group()[i] for i in kept).lower()
                out.append((word, token.start() + kept[0], token.start() + kept[-1] + 1))
        return out
    found: list[Located] = []
    current: list[str] = []
    start = end = 0
    cut = spec.version >= 3
    solo = False  # version 3: the current word began with a character that is a word on its own
    for piece_start, piece_end, piece in pieces(text, spec) if parts is None else parts:
        for ch in piece.casefold():
            if ch.isspace():
                if current:
                    found.append((_word(current), start, end))
                    current = []
                solo = False
            elif not _is_removed(ch):
                if cut:
                    lowered = ch.lower()
                    alone = _is_solo(lowered)
                    if current and (alone or (solo and lowered.isalnum())):
                        found.append((_word(current), start, end))
                        current = []
                    if alone or lowered.isalnum():
                        solo = alone
                if not current:
                    start = piece_start
                current.append(ch)
                end = piece_end
    if current:
        found.append((_word(current), start, end))
    return found


def _word(chars: list[str]) -> str:
    """Steps 3 and e of version 2."""
    return unicodedata.normalize("NFC", "".join(chars).lower())


def alnum(text: str, spec: TextSpec, parts: list[Piece] | None = None) -> tuple[str, list[int]]:
    """``spec.alnum(text)``, and the offset in ``text`` each of its characters came from."""
    if spec.version == 1:
        kept = [(ch, i) for i, ch in enumerate(text) if ch.isalnum()]
    else:
        parts = pieces(text, spec) if parts is None else parts
        kept = [(ch, start) for start, _, piece in parts for ch in piece if ch.isalnum()]
    view, offsets = "".join(ch for ch, _ in kept), [offset for _, offset in kept]
    if spec.version >= 3 and not unicodedata.is_normalized("NFC", view):
        return _composed(kept)
    return view, offsets


def _composed(kept: list[tuple[str, int]]) -> tuple[str, list[int]]:
    """Step g of ``alnum-v3`` on a view with its offsets: NFC, run by run, each run starting at
    a character NFC joins to nothing before it (so NFC of the whole is NFC of each run); every
    character a run gives points where the run's first came from."""
    runs: list[tuple[list[str], int]] = []
    for ch, offset in kept:
        if not runs or composes_with_nothing_before(ch):
            runs.append(([], offset))
        runs[-1][0].append(ch)
    view = "".join(unicodedata.normalize("NFC", "".join(chars)) for chars, _ in runs)
    offsets = [offset for chars, offset in runs for _ in unicodedata.normalize("NFC", "".join(chars))]
    return view, offsets


Piece = tuple[int, int, str]
"""A span [start, end) of the record and what steps a to c make of it."""


def pieces(text: str, spec: TextSpec) -> list[Piece]:
    """Steps a to c of version 2 (and m, version 4), piece by piece."""
    found: list[Piece] = []
    chars: list[str] = []
    start = end = 0
    for i, original in enumerate(spec.rewrite(text)):
        ch, safe = _step_ab(original, spec.version)
        if not ch:
            continue
        if chars and safe:
            found.append((start, end, unicodedata.normalize("NFKC", "".join(chars))))
            chars = []
        if not chars:
            start = i
        chars.append(ch)
        end = i + 1
    if chars:
        found.append((start, end, unicodedata.normalize("NFKC", "".join(chars))))
    return found


@cache
def _step_ab(ch: str, version: int) -> tuple[str, bool]:
    """What steps a and b make of ``ch`` ("" when removed), and whether it starts a piece."""
    if is_ignorable(ch, version):
        return "", False
    replaced = " " if ch == ZERO_WIDTH_SPACE else ch
    return replaced, starts_safely(replaced)
