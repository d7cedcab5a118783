"""Where a pair's shared run sits in the golden item, so a review can mark it on both sides.

The scan knows the run only on the training side (``Snippet.run``); the manifest holds no golden
text. When the golden text is shown (``--show-golden``), the run is found in it by normalised
words, with the scan's own spec (``contam_guard.core.spec.located`` gives each word's span), so
punctuation, case and spacing differences do not matter, just as they did not for the match.
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import SequenceMatcher

from contam_guard.core.spec import located
from contam_guard.core.spec.normalise import TextSpec

MIN_WORDS = 5
"""A partial match (a redacted or window-only snippet) is marked only from this many words: the
matcher's shortest exact run, so a common word or two is never highlighted."""


def golden_span(golden: str, run: str, spec: TextSpec) -> tuple[int, int] | None:
    """``[start, end)`` of ``golden`` holding the words of ``run``, from the first character
    kept of the first word to the last kept of the last (as the training-side run is cut).

    The longest stretch of ``run``'s normalised words found in the golden words, when it is all
    of them or at least ``MIN_WORDS``; otherwise None (nothing is marked).
    """
    wanted = spec.words(run)
    if not wanted:
        return None
    words = located.words(golden, spec)
    match = SequenceMatcher(None, [w for w, _, _ in words], wanted, autojunk=False).find_longest_match(
        0, len(words), 0, len(wanted)
    )
    if match.size == 0 or (match.size < len(wanted) and match.size < MIN_WORDS):
        return None
    return words[match.a][1], words[match.a + match.size - 1][2]


def marked(
    text: str, span: tuple[int, int] | None, escape: Callable[[str], str], before: str, after: str
) -> str:
    """``text`` escaped, with ``span`` (when found) wrapped in ``before`` and ``after``."""
    if span is None:
        return escape(text)
    start, end = span
    return escape(text[:start]) + before + escape(text[start:end]) + after + escape(text[end:])
