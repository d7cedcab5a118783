"""Template n-grams at registration: which are marked, for every n at once."""

from __future__ import annotations

import numpy as np
import pytest

from contam_guard.core.register.views import hash_view
from contam_guard.io.manifest.templates import TemplateLookup, TemplateSettings, find_templates

HEADER = "The following are multiple choice questions (with answers) about high school mathematics."
"""12 words once normalised."""


def _item(k: int) -> str:
    """A distinct item body: no 5 words in a row shared with another item."""
    return " ".join(f"w{k}x{j}" for j in range(20))


def _marks(texts: list[str], settings: TemplateSettings) -> tuple[np.ndarray, np.ndarray, int, int]:
    view = hash_view("text", texts, None, templates=settings)
    marks = view.templates
    return marks.at, marks.run, marks.ngrams, marks.top


@pytest.mark.parametrize(
    ("items", "with_header", "settings", "marked"),
    [
        # default: more than 1% of the items and at least 5
        (100, 5, TemplateSettings(), True),
        (100, 4, TemplateSettings(), False),  # 4 items: under the 5
        (1000, 10, TemplateSettings(), False),  # 10 of 1000 is 1%, not more
        (1000, 11, TemplateSettings(), True),
        (100, 30, TemplateSettings(share=0.5), False),  # configurable: the share
        (100, 60, TemplateSettings(share=0.5), True),
        (100, 5, TemplateSettings(min_items=6), False),  # ... and the count
        (100, 6, TemplateSettings(min_items=6), True),
    ],
)
def test_an_ngram_is_template_past_both_thresholds(
    items: int, with_header: int, settings: TemplateSettings, marked: bool
) -> None:
    texts = [(HEADER + " " if k < with_header else "") + _item(k) for k in range(items)]
    at, run, ngrams, top = _marks(texts, settings)
    assert (at.size > 0) is marked
    if marked:
        # The header's 12 words: T = 12 at its first word, down to 5 at its eighth, in each item.
        words = 12 + 20
        grams = words - 4
        first = np.arange(with_header) * grams
        assert at.tolist() == sorted((first[:, None] + np.arange(8)).ravel().tolist())
        assert run.tolist() == [12 - k for _ in range(with_header) for k in range(8)]
        assert (ngrams, top) == (8, with_header)
    else:
        assert (ngrams, top) == (0, 0)


def test_marks_follow_the_longest_shared_ngram_at_each_word() -> None:
    # Six items open with "a b c d e f g", three of them carry on with "h i j".
    texts = ["a b c d e f g " + ("h i j " if k < 3 else "") + _item(k) for k in range(6)]
    at, run, _, _ = _marks(texts, TemplateSettings(share=0.0, min_items=3))
    # Items 0-2: "a .. j" is shared by 3 items: T = 10 at word 0 ... 5 at word 5; items 3-5: 7, 6, 5.
    firsts = dict(zip(at.tolist(), run.tolist(), strict=True))
    assert [firsts[p] for p in range(6)] == [10, 9, 8, 7, 6, 5]
    grams_long = 10 + 20 - 4
    base3 = 3 * grams_long
    assert [firsts[base3 + p] for p in range(3)] == [7, 6, 5]
    assert base3 + 3 not in firsts


def test_marks_are_deterministic_and_need_no_text() -> None:
    texts = [HEADER + " " + _item(k) for k in range(40)] + [_item(k) for k in range(40, 90)]
    first = hash_view("text", texts, None, templates=TemplateSettings())
    again = hash_view("text", list(texts), None, templates=TemplateSettings())
    assert np.array_equal(first.templates.at, again.templates.at)
    assert np.array_equal(first.templates.run, again.templates.run)
    # From the stored 5-gram hashes alone (what a keyed manifest has) the same marks follow.
    grams = np.maximum(first.word_counts - 4, 0)
    alone = find_templates(first.gram_hashes, grams, TemplateSettings())
    assert np.array_equal(alone.at, first.templates.at) and np.array_equal(alone.run, first.templates.run)


def test_trim_drops_the_template_words_a_span_begins_and_ends_with() -> None:
    texts = [HEADER + " " + _item(k) + " " + HEADER for k in range(10)]
    view = hash_view("text", texts, None, templates=TemplateSettings())
    words = view.word_counts
    base = np.cumsum(words) - words
    lookup = TemplateLookup([(lambda: view.templates, words, base)])
    assert int(lookup.words_in(base[:1], base[:1] + words[:1])[0]) == 24  # two headers
    spans = np.array([0, 0, 5, 12, 0]), np.array([12, 20, 12, 44, 44])
    start, end = lookup.trim(*spans)
    # [0, 12): the header alone -> nothing left; [0, 20): the body's 8 words; [12, 44): the body.
    assert (start >= end).tolist() == [True, False, True, False, False]
    assert start.tolist()[1:2] == [12] and end.tolist()[1:2] == [20]
    assert (start[3], end[3]) == (12, 32) and (start[4], end[4]) == (12, 32)
