"""Derived views: what the rewording rules store in the manifest, beside each registered view.

For a view ``FIELD`` (``question``), ``register`` adds up to two views computed from the same
golden text, named with a ``~`` (which no field name may hold) and the spec they were made
under, each only when the set is registered for the rule that reads it (``register --rules``):

- ``FIELD~numbers-v1``: a view like any other (per item its word count, its 5-gram hashes in
  order) of the item's words with every number masked (``numbers.py``): the GPT-3 rule on it
  is the ``numbers`` rule;
- ``FIELD~code-v1``: for a field of Python code (``code.is_code_field``), whose ``~words`` view
  is then empty, the same for the prose of the items' docstrings, examples left out
  (``code.docstring_words``), when some item has ``code.CODE_MIN_FEATURES`` of them
  (HumanEval's prompts); a scanned string's docstrings are scored against it (``reworded``);
- ``FIELD~words-v1``: per item the distinct hashes of its content features (``content.py``:
  stemmed content words, numbers and number-word pairs),
  stored where a view keeps its window hashes (one hash per window, the window's item known):
  the inverted index from word to item that the ``reworded`` rule looks words up in. Its word
  counts are 0 (it has no 5-grams) and its alnum lengths are ``words + 49`` (0 for none), so
  that every view reads the same way in every manifest format (``verify`` checks the sizes).
  In format 2 the features are its window table (payload: the item), in a window file of its
  own whatever GPT-4's rule; a derived view holding no window hash has no window file. Its
  view file also holds each item's weight (``core.reword.weights``: the sum of its features'
  IDF), so that a scan reads them rather than decoding the table (a view written before they
  were stored has them computed, the same numbers).

Every hash goes through the manifest's key when it is keyed. Derived views are left out of the
set's content digest (they are a function of the views it covers) and out of the n-gram
engine's index; re-registering rebuilds them, as does ``contam-guard upgrade`` of a manifest of an
older spec.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.reword.code import CODE_MIN_FEATURES, CODE_VIEW, docstring_words, is_code_field
from contam_guard.core.reword.content import CONTENT_SPECS, CURRENT_CONTENT, ContentSpec, content_words
from contam_guard.core.reword.hashing import grams_of, unigrams_of
from contam_guard.core.reword.numbers import MASK_SPEC, mask_words
from contam_guard.core.reword.weights import item_weights
from contam_guard.core.reword.words import normalised_words
from contam_guard.core.spec.hashing import WINDOW_CHARS, HashKey
from contam_guard.core.spec.normalise import CURRENT, TextSpec
from contam_guard.io.manifest.digests import item_order_digest
from contam_guard.io.manifest.model import DERIVED_MARK, View, ViewData, is_derived

MARK = DERIVED_MARK
NUMBERS = MASK_SPEC
WORDS = CURRENT_CONTENT.name
"""The content features new sets store (``content.CURRENT_CONTENT``)."""
CODE = CODE_VIEW
"""The docstrings' prose features (``code.docstring_words``), for a field whose items hold some."""
RULE_OF = {NUMBERS: "numbers", WORDS: "reworded"}
"""Which rule reads each kind of derived view a registration makes: a set registered without the
rule does not get it."""


def content_spec_of(views: Collection[str], view: str) -> ContentSpec | None:
    """The content spec of ``view``'s content view among ``views`` (the newest it has), or None."""
    for spec in reversed(CONTENT_SPECS):
        if derived_name(view, spec.name) in views:
            return spec
    return None


V = TypeVar("V")


def derived_name(view: str, kind: str) -> str:
    """The name of ``view``'s derived view of ``kind`` (``NUMBERS`` or ``WORDS``)."""
    return f"{view}{MARK}{kind}"


def base_views(views: Mapping[str, V]) -> dict[str, V]:
    """The registered views only (no derived ones)."""
    return {name: view for name, view in views.items() if not is_derived(name)}


def word_lists(texts: Sequence[str], spec: TextSpec) -> tuple[list[list[str]], list[list[str]]]:
    """Per text: its number-masked words, and its content words (``content.CURRENT_CONTENT``)."""
    normalised = [normalised_words(text, spec) for text in texts]
    return [mask_words(words) for words in normalised], [content_words(words) for words in normalised]


def build_derived(
    view: str,
    texts: Sequence[str],
    key: HashKey | None,
    spec: TextSpec = CURRENT,
    *,
    rules: Collection[str] = RULE_OF.values(),
) -> dict[str, View]:
    """The derived views of the view ``view`` whose items' texts are ``texts``, for those of
    the rewording rules among ``rules`` (the set's): ``~numbers`` for ``numbers``, ``~words``
    for ``reworded``."""
    kinds = [kind for kind, rule in RULE_OF.items() if rule in rules]
    if not kinds:
        return {}
    masked, content = word_lists(texts, spec)
    items = len(texts)
    zeros = np.zeros(items, dtype=np.int64)
    out: dict[str, View] = {}
    if NUMBERS in kinds:
        grams = grams_of(masked, key)
        words = np.array([len(m) for m in masked], dtype=np.int64)
        out[derived_name(view, NUMBERS)] = _view(view, words, zeros, grams.hashes.astype(np.uint64), None)
    code_field = WORDS in kinds and is_code_field(texts)
    if WORDS in kinds:
        # a code field's prose view is empty (its items measure nothing as prose: a program's
        # names and keywords are every program's); it still says the field was registered for
        # the rule
        out[derived_name(view, WORDS)] = _feature_view(
            view, [[] for _ in texts] if code_field else content, key
        )
    if code_field:
        code = [content_words(docstring_words(text, spec)) for text in texts]
        # only a code field whose items hold docstrings worth scoring gets the view (HumanEval's
        # prompts; not a solution without one)
        if any(len(set(features)) >= CODE_MIN_FEATURES for features in code):
            out[derived_name(view, CODE)] = _feature_view(view, code, key)
    return out


def _feature_view(view: str, content: list[list[str]], key: HashKey | None) -> View:
    """A view of per-item feature sets (``WORDS``, ``CODE``): see the module's docstring."""
    items = len(content)
    zeros = np.zeros(items, dtype=np.int64)
    features, first = unigrams_of(content, key)
    counts = np.diff(first)
    alnum = np.where(counts > 0, counts + WINDOW_CHARS - 1, 0).astype(np.int64)
    empty = np.zeros(0, dtype=np.uint64)
    # the features stand where windows are (one per "window"; their item is the payload)
    windows = features.astype(np.uint64) if features.size else None
    data = ViewData.from_items(zeros, alnum, empty, windows)
    if data.windows is not None:  # stored, so that a scan does not decode the table for them
        data = replace(data, item_weights=item_weights(data.windows, items))
    return View(view, item_order_digest(view, zeros, alnum, empty, windows), data)


def _view(
    field: str,
    words: NDArray[np.int64],
    alnum: NDArray[np.int64],
    grams: NDArray[np.uint64],
    windows: NDArray[np.uint64] | None,
) -> View:
    """A derived view; without window hashes it has no window table (``disk_write.windowed``)."""
    return View(
        field,
        item_order_digest(field, words, alnum, grams, windows),
        ViewData.from_items(words, alnum, grams, windows),
    )
