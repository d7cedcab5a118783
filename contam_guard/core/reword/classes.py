"""Word classes and extra content features for the ``reworded`` rule (prototypes, measured in
``benchmarks/reword_ideas.py``; the rule itself still uses ``content.py``'s ``words-v1``).

Everything here fits the scan's compiled pass: a *word class* is a function of the normalised
word alone (computed once per distinct word, like the stem), applied on both sides before the
stem is taken; the extra features are made in one pass over a string's words, like the
number+word pairs, from what each word gives. Each feature is a string that the manifest would
store hashed and keyed.

- ``lemma``: the word's dictionary form from ``simplemma``'s English lexicon (irregular forms
  meet their lemma: ``bought`` and ``buy``, ``children`` and ``child``, ``ran`` and ``run``),
  before the Snowball stem. A lemmatiser that needs a part of speech is out (the class must be a
  function of the word alone), so it is the lexicon's context-free lemma.
- ``stem_cut``: the stem cut to its first ``k`` characters (a cruder, wider class:
  ``compe`` for competition and compete).
- ``number_pairs``: each two consecutive numbers of a string as one feature (``#16>#3``):
  which numbers come together, and in what order, survives a rewording.
- ``pair_reach``: a number pairs with each of the next ``pair_reach`` content words, not only
  the first (``3 red apples`` gives ``#3~red`` and ``#3~appl``).
- ``bigrams``: each two consecutive content stems as one feature (a short word sequence).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from contam_guard.core.reword.content import STOPWORDS, features_of
from contam_guard.core.reword.content import _stem as snowball

WordClass = Callable[[str], str]


@lru_cache(maxsize=1 << 16)
def lemma(word: str) -> str:
    """The English lemma of a normalised word (the word itself when the lexicon lacks it)."""
    import simplemma  # noqa: PLC0415 (19 MB of lexicons, loaded only for this class)

    return str(simplemma.lemmatize(word, lang="en")).lower()


@dataclass(frozen=True)
class Spec:
    """Which content features a string gives (the defaults are ``words-v1``'s)."""

    word_class: WordClass | None = None
    """Applied to a content word before its stem (None: the stem of the word itself)."""
    stem_cut: int | None = None
    """Keep only the stem's first characters (None: the whole stem)."""
    pair_reach: int = 1
    number_pairs: bool = False
    unordered: bool = False
    """Number pairs name their two numbers in sorted order (a rewording may swap them)."""
    bigrams: bool = False
    pairs: bool = True


@lru_cache(maxsize=1 << 18)
def _classed(word: str, word_class: WordClass) -> str | None:
    """The stem of a content word after its class (None when the class is a function word)."""
    base = word_class(word)
    if len(base) < 2 or base in STOPWORDS:
        return None
    return snowball(base)


def features(words: Sequence[str], spec: Spec = Spec()) -> list[str]:
    """The content features of normalised ``words`` under ``spec``, in order (one pass)."""
    out: list[str] = []
    last_number: str | None = None
    reach = 0
    previous_stem: str | None = None
    previous_number: str | None = None
    for word in words:
        is_number, number, inside, stem = features_of(word)
        if is_number:
            if number is not None:
                out.append(number)
                if spec.number_pairs and previous_number is not None:
                    first, second = previous_number, number
                    if spec.unordered and second < first:
                        first, second = second, first
                    out.append(f"{first}>{second}")
                previous_number = number
            last_number, reach = number, spec.pair_reach
            continue
        out += inside
        if stem is not None and spec.word_class is not None:
            stem = _classed(word, spec.word_class)
        if stem is None:
            continue
        if spec.stem_cut is not None:
            stem = stem[: spec.stem_cut]
        out.append(stem)
        if spec.bigrams and previous_stem is not None:
            out.append(f"{previous_stem}_{stem}")
        previous_stem = stem
        if spec.pairs and last_number is not None and reach > 0:
            out.append(f"{last_number}~{stem}")
            reach -= 1
            if reach == 0:
                last_number = None
    return out
