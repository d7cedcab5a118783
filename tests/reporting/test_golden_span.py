"""The shared run found on the golden side by normalised words (``report.spans``)."""

from __future__ import annotations

import pytest

from contam_guard.core.spec.normalise import V1, V2, TextSpec
from contam_guard.report.spans import golden_span, marked

GOLDEN = (
    "Rosa's bakery sells muffins in boxes of 6. On Saturday, the bakery sold 42 boxes of muffins before noon!"
)


@pytest.mark.parametrize(
    ("run", "spec", "expected"),
    [
        # Exact text: the span from the run's first to its last kept character.
        (
            "the bakery sold 42 boxes of muffins before noon",
            V2,
            "the bakery sold 42 boxes of muffins before noon",
        ),
        # Case, punctuation and spacing differ: the words are the same after normalisation.
        (
            "THE Bakery -- sold  42 boxes, of muffins; before NOON",
            V2,
            "the bakery sold 42 boxes of muffins before noon",
        ),
        ("On Saturday the bakery sold", V1, "On Saturday, the bakery sold"),
        # The golden text's first word, with an apostrophe, starts the span.
        ("Rosa's bakery sells muffins in boxes", V2, "Rosa's bakery sells muffins in boxes"),
        # A redacted run ([EMAIL] is not in the golden text): its longest stretch of 5+ words.
        ("[EMAIL] the bakery sold 42 boxes of muffins", V2, "the bakery sold 42 boxes of muffins"),
        # Fewer than five words in common and not the whole run: nothing is marked.
        ("the bakery sold [EMAIL] [PHONE] [IP] [KEY] x", V2, None),
        # A short run found whole is marked (a window-only pair's snippet can be short).
        ("boxes of 6", V2, "boxes of 6"),
        ("nothing in common here at all today", V2, None),
        ("", V2, None),
    ],
)
def test_golden_span(run: str, spec: TextSpec, expected: str | None) -> None:
    span = golden_span(GOLDEN, run, spec)
    assert (GOLDEN[span[0] : span[1]] if span is not None else None) == expected


def test_the_first_occurrence_of_a_repeated_run_is_marked() -> None:
    text = "one two three four five and again one two three four five"
    assert golden_span(text, "one two three four five", V2) == (0, len("one two three four five"))


def test_marked_escapes_around_the_span() -> None:
    shout = str.upper
    assert marked("a <b> c", (2, 5), shout, "[", "]") == "A [<B>] C"
    assert marked("a <b> c", None, shout, "[", "]") == "A <B> C"
