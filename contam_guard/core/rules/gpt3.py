"""GPT-3: an item is dirty if it shares any run of at least N words with one training document.

Definition (Brown et al., "Language Models are Few-Shot Learners", arXiv 2005.14165v4,
Appendix C): a gram is "a lowercase, whitespace delimited word with no punctuation"; an example
is dirty if it has "any N-gram overlap with any training document". N is "the 5th percentile
example length in words", at least 8 on non-synthetic tasks and at most 13.

Here: fires when the longest shared run (max R[i]) is at least N. By default (``n: auto``) N is
GPT-3's, per registered set and view: its 5th-percentile item length in words (nearest rank,
empty items left out), clipped to 8..13; GSM8K's test questions (5th percentile 24 words) get
13. It is computed at scan time from the item word counts the manifest holds, so a set gets the
N of its current items with no field of its own. ``n: 5..`` sets one N for every set. Items
shorter than N words cannot fire ("too short for the rule to see"): a whole copy of one (5 words
or more) is the ``whole`` rule's. Runs are trimmed of the template words they begin and end with
(``io.manifest.templates``): a record sharing only a benchmark's header with the item shares no run.

A set may carry its own N (``GoldenSet.n``: ``register --n``), which wins over the setting for
that set's items. A set written without spaces (spec ``words-v3``: each Han, kana, Thai, ...
letter is a word) gets ``UNSPACED_N`` = 10 when registered without ``--n``: measured on CMMLU
(docs/explanation/templates.md), 10 characters keep 93% of the test questions visible while
unrelated questions of CMMLU's dev split share a run of 10 with 0.07% of them (13: 83% and
0.01%; 8: 97% and 1.0%); a word of such text is one character, so 13 of them are far fewer
than GPT-3's 13 English words.

Worked example (the seed article's test item 0, "Janet's ducks lay 16 eggs per day ...",
52 words, against its copy with the numbers swapped): the swaps cut it into shared runs of 5,
13, 10 and 17 words; the longest is 17 >= 13 (GSM8K's auto N), so the rule fires. A set of
9-word items gets N = 9 (its 5th percentile), one of 5-word items N = 8 (the floor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import field_validator

from contam_guard.core.rules.base import (
    MAX_WORDS,
    Action,
    BoolArray,
    Explanations,
    FloatArray,
    IntArray,
    Rule,
    RuleResult,
    RuleSettings,
)
from contam_guard.errors import ConfigError

if TYPE_CHECKING:
    from contam_guard.core.match.index import ManifestIndex
    from contam_guard.core.match.stats import ItemStats
    from contam_guard.io.manifest.model import GoldenSet

NAME = "gpt3"
AUTO_MIN, AUTO_MAX = 8, 13
UNSPACED_N = 10
"""N for a set written without spaces, unless registered with ``--n`` (see above)."""
UNSPACED_CHARS_PER_WORD = 1.5
"""A set whose views average fewer letters and digits per word than this is written without
spaces: there a word is one character (1.0; a little more with some Latin words or numbers),
while English averages about 4.5 and code more."""


class Settings(RuleSettings):
    """Any shared run of at least ``n`` words (``auto``: the set's 5th-percentile length, 8..13)."""

    action: Action = "fail"
    n: int | Literal["auto"] = "auto"

    @field_validator("n")
    @classmethod
    def _n_at_least_five(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 5:
            raise ValueError("n must be at least 5 (runs under 5 words are not measured), or 'auto'")
        if isinstance(value, int) and value > MAX_WORDS:
            raise ValueError(f"n must be at most {MAX_WORDS:,} words, or 'auto'")
        return value


def auto_n(word_counts: IntArray) -> int:
    """GPT-3's N for a set: the 5th-percentile item length (nearest rank), clipped to 8..13."""
    if word_counts.size == 0:
        return AUTO_MAX
    ordered = np.sort(word_counts)
    rank = max(int(np.ceil(0.05 * ordered.size)) - 1, 0)
    return int(min(max(int(ordered[rank]), AUTO_MIN), AUTO_MAX))


def thresholds(index: ManifestIndex, settings: Settings) -> IntArray:
    """N for every item: its set's own (``register --n``), else the setting, or under ``auto``
    its set's (and view's) 5th-percentile length."""
    n = np.zeros(index.items, dtype=np.int64)
    for target in index.targets:
        span = slice(target.first_item, target.first_item + target.items)
        if target.n is not None:
            n[span] = target.n
        else:
            n[span] = settings.n if settings.n != "auto" else auto_n(_lengths(index.word_counts[span]))
    return n


def _lengths(word_counts: IntArray) -> IntArray:
    """The item lengths GPT-3's percentile is taken over: an empty item (a field missing from a
    record) is no example, and would pull N down to the floor."""
    return word_counts[word_counts > 0]


def with_set_n(golden: GoldenSet, n: int | None, previous: GoldenSet | None) -> GoldenSet:
    """``golden`` with its own N: ``n`` when given (``register --n``), else the previous
    version's, else ``default_n`` of its views."""
    if n is not None and not 5 <= n <= MAX_WORDS:
        raise ConfigError(f"--n {n}: a set's N must be 5..{MAX_WORDS:,} words")
    if n is None and previous is not None:
        n = previous.n
    if n is None:
        # the registered views: a derived one ("~") counts masked words or features
        views = [view for name, view in golden.views.items() if "~" not in name]
        words = np.concatenate([view.word_counts for view in views]) if views else np.zeros(0, np.int64)
        chars = np.concatenate([view.alnum_counts for view in views]) if views else np.zeros(0, np.int64)
        n = default_n(words, chars)
    return golden.model_copy(update={"n": n})


def default_n(word_counts: IntArray, alnum_counts: IntArray) -> int | None:
    """A new set's own N from its views' word and letter-or-digit counts: ``UNSPACED_N`` when
    it is written without spaces (fewer than ``UNSPACED_CHARS_PER_WORD`` per word), else None
    (the rule's setting)."""
    words = int(word_counts.sum())
    if words == 0 or int(alnum_counts.sum()) >= UNSPACED_CHARS_PER_WORD * words:
        return None
    return UNSPACED_N


def evaluate(stats: ItemStats, settings: Settings, index: ManifestIndex) -> RuleResult:
    """Fires where the longest shared run reaches N; each pair reaching it is its own finding."""
    n = thresholds(index, settings)
    fired = stats.longest_run >= n
    run = stats.longest_run
    explain = Explanations(run.size, lambda i: f"longest shared run {run[i]} words >= N = {n[i]}")
    return RuleResult(NAME, fired, stats.longest_run.astype(np.float64), explain, pair_bar=n)


def _sees(index: ManifestIndex, settings: Settings) -> BoolArray:
    return np.asarray(index.word_counts >= thresholds(index, settings))


def _sweep(stats: ItemStats, settings: Settings, index: ManifestIndex) -> dict[str, FloatArray]:
    return {"gpt3": (stats.longest_run >= thresholds(index, settings)).astype(np.float64)}


def _n_words(settings: Settings) -> str:
    if settings.n == "auto":
        return f"its set's N words (n: auto, {AUTO_MIN} to {AUTO_MAX})"
    return f"{settings.n} words"


RULE = Rule(
    name=NAME,
    title="GPT-3 (Brown et al. 2020, App. C): a shared run of N words",
    settings=Settings,
    evaluate=evaluate,
    sees=_sees,
    needs=lambda s: f"gpt3 needs a run of {_n_words(s)}",
    columns=("gpt3",),
    sweep=_sweep,
    mark=lambda s: None if s.n == "auto" else (s.n, f"GPT-3: N = {s.n}"),
    per_pair=True,
    config="""\
  # GPT-3 (Brown et al. 2020, App. C): any shared run of at least n words. n: auto (each
  # set's 5th-percentile item length in words, 8..13; GSM8K gets 13) or a number, 5 or more.
  gpt3: {enabled: true, action: fail, n: auto}
""",
)
