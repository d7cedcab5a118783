"""Snippets: at most 128 words of a record around a hit, the matched words marked.

As in the ROOTS search tool (Piktus et al. 2023), a hit shows a short window of its document,
never the whole: at most ``MAX_WORDS`` normalised words (the rules' words), cut at word
boundaries of the original text, with "…" where the record goes on. With ``redact``, personal
data is masked visibly by the reviews' own redaction (``core.redact``: ``[EMAIL]``,
``[PHONE]``, ``[IP]``, ``[KEY]``), after the window is cut, so the masks are what one sees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contam_guard.core.redact import redact as mask
from contam_guard.core.spec.features import words_of
from contam_guard.core.spec.hashing import HashArray
from contam_guard.core.spec.normalise import TextSpec

MAX_WORDS = 128
ELLIPSIS = "…"
MARK_OPEN, MARK_CLOSE = "«", "»"


@dataclass(frozen=True)
class Snippet:
    """The window as parts, each (text, marked); ``offset``: the character offset in the
    segment of the first marked word (-1 when nothing is marked)."""

    parts: tuple[tuple[str, bool], ...]
    offset: int

    def marked_text(self) -> str:
        """The snippet as one string, marked words between « and »."""
        return "".join(f"{MARK_OPEN}{text}{MARK_CLOSE}" if marked else text for text, marked in self.parts)

    @property
    def words(self) -> int:
        return sum(len(text.split()) for text, _ in self.parts)


def snippet(
    text: str,
    spec: TextSpec,
    *,
    phrase: tuple[int, int] | None = None,
    terms: HashArray | None = None,
    redact: bool = False,
) -> Snippet:
    """A window of ``text`` holding the phrase of words [a, b) (exact search), or the first of
    the query's ``terms`` with every term in the window marked (BM25)."""
    words = words_of([text], spec)
    starts, ends, hashes = words.start, words.end, words.hashes
    total = int(hashes.size)
    if total == 0:
        return Snippet(((_redacted(text[:400], redact), False),) if text else (), -1)
    if phrase is not None:
        a, b = phrase[0], min(phrase[1], phrase[0] + MAX_WORDS)
        marked = np.zeros(total, dtype=np.bool_)
        marked[a:b] = True
    else:
        marked = np.isin(hashes, terms if terms is not None else np.zeros(0, dtype=np.uint64))
        hit = np.flatnonzero(marked)
        a = int(hit[0]) if hit.size else 0
        b = a + 1
    room = MAX_WORDS - (b - a)
    w0 = max(0, a - room // 2)
    w1 = min(total, w0 + MAX_WORDS)
    w0 = max(0, min(w0, w1 - MAX_WORDS))
    parts: list[tuple[str, bool]] = []
    if w0 > 0:
        parts.append((ELLIPSIS + " ", False))
    cursor = int(starts[w0]) if w0 > 0 else 0  # from the record's start: a leading quote mark
    w = w0
    while w < w1:
        flag = bool(marked[w])
        run_end = w
        while run_end + 1 < w1 and bool(marked[run_end + 1]) == flag:
            run_end += 1
        if flag:
            if int(starts[w]) > cursor:
                parts.append((text[cursor : int(starts[w])], False))
            parts.append((text[int(starts[w]) : int(ends[run_end])], True))
            cursor = int(ends[run_end])
        else:
            stop = int(starts[run_end + 1]) if run_end + 1 < w1 else int(ends[run_end])
            parts.append((text[cursor:stop], False))
            cursor = stop
        w = run_end + 1
    if w1 < total:
        parts.append((" " + ELLIPSIS, False))
    else:
        parts.append((text[cursor:].rstrip(), False))  # the last word's trailing punctuation
    hit_words = np.flatnonzero(marked[w0:w1])
    offset = int(starts[w0 + int(hit_words[0])]) if hit_words.size else -1
    return Snippet(tuple((_redacted(t, redact), m) for t, m in parts if t), offset)


def _redacted(text: str, redact: bool) -> str:
    if not redact:
        return text
    return mask(text)
