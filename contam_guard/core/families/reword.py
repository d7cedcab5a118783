"""The rewording family: what the ``numbers`` and ``reworded`` rules read.

Computed from the same word hashes as the n-gram family (``core.batch``), through the rewording
stage (``core.reword.stage``: compiled, or numpy): per (record, item) the longest run shared once
numbers are masked and the best reworded score, and per item their maxima over everything
scanned (``RewordTotals``: mergeable).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.batch import Batch, Units
from contam_guard.core.config import Rules
from contam_guard.core.families.base import FamilyRows, Located
from contam_guard.core.match.arrays import sorted_unique
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.pairs import Column
from contam_guard.core.reword.code import CODE_MIN_FEATURES, docstring_spans, in_spans
from contam_guard.core.reword.index import RewordIndex
from contam_guard.core.reword.matching import runs_from_hits
from contam_guard.core.reword.numbers import PLACEHOLDER, mask_word
from contam_guard.core.reword.stage import (
    CODE,
    CompiledStage,
    NumpyStage,
    Stage,
    StageResult,
    has_compiled_stage,
)
from contam_guard.core.reword.vocab import WordSpans, spell, word_hashes
from contam_guard.core.rules import numbers, reworded
from contam_guard.core.spec import located
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.spec.normalise import TextSpec
from contam_guard.core.thread_pool import Threads
from contam_guard.io.manifest.model import Manifest

if TYPE_CHECKING:
    from contam_guard.core.match.prefilter import BlockWords

NAME = "reword"
_T = TypeVar("_T", bound=np.generic)
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


def _numbers_run(stats: object) -> NDArray[np.generic]:
    return numbers.runs(stats)  # type: ignore[arg-type]


def _reworded(stats: object) -> NDArray[np.generic]:
    return reworded.scores(stats)  # type: ignore[arg-type]


COLUMNS = (
    Column("numbers_run", "numbers_run", _numbers_run, "masked run {} words", "shared run, numbers masked"),
    Column("reworded", "reworded_score", _reworded, "reworded score {}", "reworded score", 3),
)


@dataclass(frozen=True)
class RewordSettings:
    """What the family needs of the rules' settings: the numbers rule's N and the reworded
    rule's threshold (None: the rule is off) and report floor."""

    numbers: int | None
    reworded: float | None
    report_floor: float

    @classmethod
    def of(cls, rules: object) -> RewordSettings | None:
        """The settings in ``rules`` (a ``core.config.Rules``); None when both rules are off."""
        n = numbers.RULE.settings_of(rules)
        r = reworded.RULE.settings_of(rules)
        if not (n.enabled or r.enabled):
            return None
        return cls(n.n if n.enabled else None, r.threshold if r.enabled else None, r.report_floor)

    @property
    def floor(self) -> float | None:
        """The lowest score computed: the rule's ``report_floor``, or a lower threshold. A pair
        under it is not looked at (``matching.Prefixes``), so an item whose best pair scores
        under it shows 0."""
        return None if self.reworded is None else min(self.reworded, self.report_floor)


@dataclass
class RewordTotals:
    """Per item over everything scanned: the longest masked run with one record (0 under 5
    words) and the best reworded score with one record (0 under the floor)."""

    numbers_run: IntArray
    reworded: FloatArray

    @classmethod
    def empty(cls, items: int) -> RewordTotals:
        return cls(np.zeros(items, dtype=np.int64), np.zeros(items, dtype=np.float64))

    def merge(self, other: RewordTotals) -> None:
        np.maximum(self.numbers_run, other.numbers_run, out=self.numbers_run)
        np.maximum(self.reworded, other.reworded, out=self.reworded)


def registered_before(
    manifest: Manifest, index: ManifestIndex, reword_index: RewordIndex, rules: Rules
) -> list[str]:
    """Notices for sets registered for these rules before they existed (no derived views)."""
    # A set registered without these rules (`register --rules`) lacks their views by choice; only
    # a set registered for them that lacks them (an older manifest) is worth a notice.
    ours = set(rules.enabled()) & {numbers.NAME, reworded.NAME}
    meant = {name for name, golden in manifest.sets.items() if ours & set(golden.rules)}
    return [
        f"{t.label} was registered before the numbers and reworded rules, which cannot fire on its "
        f"items until it is registered again (`contam-guard register {t.set_name} ...` with the same "
        "files: unchanged content keeps its version)"
        for t in index.targets
        if t.items
        and t.set_name in meant
        and not (reword_index.has_numbers[t.first_item] and reword_index.has_words[t.first_item])
    ]


class RewordFamily:
    """The family over one manifest: its stage (which keeps the vocabulary of words met)."""

    def __init__(
        self,
        index: ManifestIndex,
        key: HashKey | None,
        manifest_index: RewordIndex,
        settings: RewordSettings,
        *,
        compiled: bool,
        threads: Threads | None = None,
    ) -> None:
        """``compiled``: use the compiled stage (builds in-memory tables: for large inputs),
        which cuts a large batch between ``threads`` threads; otherwise numpy, which scores a
        small batch without decoding whole views."""
        self.index = index
        self.reword_index = manifest_index
        self.settings = settings
        self.compiled = compiled
        self.spec = index.spec
        numbers, floor = settings.numbers is not None, settings.floor
        self.stage: Stage = (
            CompiledStage(manifest_index, key, numbers=numbers, floor=floor, threads=threads)
            if compiled and has_compiled_stage()
            else NumpyStage(manifest_index, key, numbers=numbers, floor=floor)
        )

    def observe(self, batch: Batch, totals: RewordTotals | None) -> FamilyRows:
        """The batch's pairs; ``totals`` updated unless None. The numbers rule's runs are read
        over each document (a run crosses from one string into the next, as the n-gram rules'
        do); the reworded score compares each string on its own, the unit its windows were
        calibrated on (a question joined with its answer dilutes them)."""
        units, words = batch.units, batch.features
        self.know(words, lambda: units.texts)
        strings = Strings.of(units, words)
        runs = self.stage.run(words.word_hash, words.record_words, numbers=True, reworded=False)
        breaks = line_breaks(units.texts, words)
        scores = self.stage.run(words.word_hash, strings.first, numbers=False, reworded=True, breaks=breaks)
        pair_string, pair_item, pair_score = self._with_docstrings(scores, units, words, strings)
        doc, item, run, start = runs_from_hits(
            runs.gram_unit, runs.gram_at, runs.gram_posting, self.reword_index
        )
        if totals is not None:
            np.maximum.at(totals.numbers_run, item, run)
            np.maximum.at(totals.reworded, pair_item, pair_score)
        span = max(self.index.items, 1)
        run_key = units.unit_record[doc] * span + item
        score_key = units.unit_record[strings.document[pair_string]] * span + pair_item
        keys = sorted_unique(np.concatenate((run_key, score_key)))
        at_run = _best(run_key, run, keys)
        at_score = _best(score_key, pair_score, keys)
        best_run = _gather(run, at_run, 0)
        best_score = _gather(pair_score, at_score, 0.0)

        def locate(row: int) -> Located | None:
            if at_run[row] >= 0 and best_run[row] >= 5:
                d = int(doc[at_run[row]])
                return _masked_span(
                    units.documents[d].text, int(start[at_run[row]]), int(best_run[row]), d, self.spec
                )
            if at_score[row] >= 0:
                return strings.located(int(pair_string[at_score[row]]), units)
            return None

        return FamilyRows(
            keys // span,
            keys % span,
            {"numbers_run": best_run, "reworded": best_score},
            self.notable(best_run, best_score),
            locate,
        )

    def observe_words(self, words: BlockWords, totals: RewordTotals) -> IntArray | None:
        """The rules over the words the prefilter read (``core.match.prefilter.BlockWords``), with
        ``totals`` updated: the lines holding a notable pair; None when a word was spelled
        otherwise than hashed, or when docstrings are to be scored (a code view is registered:
        they are found in the text, which the prefilter does not hand over): the caller then
        reads the lines again, exactly."""
        if self.reword_index.code and self.settings.reworded is not None:
            return None
        if words.new_words:
            if not np.array_equal(word_hashes(words.new_words), words.new_hashes):
                return None
            self.stage.add(words.new_words)
        rows = words.rows
        runs = self.stage.run(words.hashes, _first(words.doc_words), numbers=True, reworded=False, rows=rows)
        strings = _first(words.string_words)
        scores = self.stage.run(
            words.hashes, strings, numbers=False, reworded=True, breaks=words.breaks, rows=rows
        )
        doc, item, run, _ = runs_from_hits(runs.gram_unit, runs.gram_at, runs.gram_posting, self.reword_index)
        np.maximum.at(totals.numbers_run, item, run)
        np.maximum.at(totals.reworded, scores.pair_item, scores.pair_score)
        lines = [np.zeros(0, dtype=np.int64)]
        if self.settings.numbers is not None:
            lines.append(words.doc_line[doc[run >= self.settings.numbers]])
        if self.settings.reworded is not None:
            lines.append(words.string_line[scores.pair_unit[scores.pair_score >= self.settings.reworded]])
        return sorted_unique(np.concatenate(lines))

    def _with_docstrings(
        self, scores: StageResult, units: Units, words: WordSpans, strings: Strings
    ) -> tuple[IntArray, IntArray, FloatArray]:
        """The reworded pairs (string, item, score): the strings' own, and those of their
        docstrings against the code views (an item with fewer than ``CODE_MIN_FEATURES``
        docstring features left out)."""
        found = scores.pair_unit, scores.pair_item, scores.pair_score
        if not self.reword_index.code or self.settings.reworded is None:
            return found
        picked, first, string_of = docstring_units(units, words, strings)
        if string_of.size == 0:
            return found
        code = self.stage.run(words.word_hash[picked], first, numbers=False, reworded=True, kind=CODE)
        keep = self.reword_index.code_words[code.pair_item] >= CODE_MIN_FEATURES
        return (
            np.concatenate([found[0], string_of[code.pair_unit[keep]]]),
            np.concatenate([found[1], code.pair_item[keep]]),
            np.concatenate([found[2], code.pair_score[keep]]),
        )

    def know(self, words: WordSpans, texts: Callable[[], Sequence[str]]) -> None:
        """Spell the words the stage has not met (read off ``texts()``, asked for only then)."""
        missing = self.stage.missing(words.word_hash)
        if missing.size:
            self.stage.add(spell(texts(), words, missing, self.spec))

    def notable(self, run: IntArray, score: FloatArray) -> NDArray[np.bool_]:
        out = np.zeros(run.size, dtype=np.bool_)
        if self.settings.numbers is not None:
            out |= run >= self.settings.numbers
        if self.settings.reworded is not None:
            out |= score >= self.settings.reworded
        return out


@dataclass(frozen=True)
class Strings:
    """The strings of a batch's documents, as units of its word stream: string s's words are
    ``first[s]:first[s + 1]``; it is segment ``segment[s]`` of document ``document[s]``."""

    first: IntArray
    document: IntArray
    segment: IntArray

    @classmethod
    def of(cls, units: Units, words: WordSpans) -> Strings:
        counts = np.array([len(d.segments) for d in units.documents], dtype=np.int64)
        document = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        segment = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        # each word's string: where its start falls among its document's strings' starts
        longest = max((len(d.text) for d in units.documents), default=0) + 1
        starts = np.array([s for d in units.documents for s in d.starts], dtype=np.int64)
        string_key = document * longest + starts
        word_doc = np.repeat(np.arange(counts.size, dtype=np.int64), np.diff(words.record_words))
        word_string = np.searchsorted(string_key, word_doc * longest + words.word_start, side="right") - 1
        first = np.searchsorted(word_string, np.arange(document.size + 1)).astype(np.int64)
        return cls(first, document, segment)

    def located(self, s: int, units: Units) -> Located:
        """Where string ``s`` lies in its document (a rewording's passage: the whole string)."""
        d, k = int(self.document[s]), int(self.segment[s])
        document = units.documents[d]
        begin = document.starts[k]
        return Located(d, begin, begin + len(document.segments[k].text), "reworded")


def docstring_units(units: Units, words: WordSpans, strings: Strings) -> tuple[IntArray, IntArray, IntArray]:
    """The docstring prose of each string that holds some (``code.docstring_spans``), as units
    of the batch's words: the words they hold (indices, unit after unit), where each unit
    begins among those, and each unit's string."""
    picked: list[IntArray] = []
    owner: list[int] = []
    for s in range(strings.document.size):
        d, k = int(strings.document[s]), int(strings.segment[s])
        document = units.documents[d]
        spans = docstring_spans(document.segments[k].text)
        a, b = int(strings.first[s]), int(strings.first[s + 1])
        if not spans or a == b:
            continue
        begin = document.starts[k]
        starts = (words.word_start[a:b] - begin).tolist()
        inside = np.flatnonzero(np.array(in_spans(starts, spans), dtype=np.bool_))
        if inside.size:
            picked.append(a + inside)
            owner.append(s)
    sizes = np.array([p.size for p in picked], dtype=np.int64)
    first = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=first[1:])
    words_at = np.concatenate(picked).astype(np.int64) if picked else np.zeros(0, dtype=np.int64)
    return words_at, first, np.array(owner, dtype=np.int64)


def line_breaks(texts: Sequence[str], words: WordSpans) -> NDArray[np.uint8]:
    """Per word of ``texts``: 1 when a newline lies between it and the word before it in its
    text (the reworded rule scores each line of a string as a unit too)."""
    out = np.zeros(words.word_hash.size, dtype=np.uint8)
    for t, text in enumerate(texts):
        a, b = int(words.record_words[t]), int(words.record_words[t + 1])
        if b - a < 2 or "\n" not in text:
            continue
        newlines = np.flatnonzero(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32) == 10)
        line = np.searchsorted(newlines, words.word_start[a:b])
        out[a + 1 : b] = line[1:] != line[:-1]
    return out


def _first(counts: IntArray) -> IntArray:
    """Where each of some units starts in their concatenation, given their sizes (and the end)."""
    first = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=first[1:])
    return first


def _gather(values: NDArray[_T], rows: IntArray, fill: float) -> NDArray[_T]:
    """``values[rows]``, ``fill`` where a row is -1."""
    out = np.full(rows.size, fill, dtype=values.dtype)
    found = rows >= 0
    out[found] = values[rows[found]]
    return out


def _best(keys: IntArray, values: NDArray[np.generic], wanted: IntArray) -> IntArray:
    """For each of ``wanted`` (sorted, unique), the row of ``keys`` with the largest value among
    the rows holding it (the first of equals), -1 where none does."""
    out = np.full(wanted.size, -1, dtype=np.int64)
    if keys.size == 0:
        return out
    order = np.lexsort((-values.astype(np.float64), keys))
    first = np.ones(order.size, dtype=np.bool_)
    first[1:] = keys[order][1:] != keys[order][:-1]
    rows = order[first]
    out[np.searchsorted(wanted, keys[rows])] = rows
    return out


def _masked_span(text: str, start: int, length: int, unit: int, spec: TextSpec) -> Located:
    """Where a run of ``length`` masked words starting at masked word ``start`` lies in ``text``:
    consecutive numbers are one masked word (``numbers.mask_words``)."""
    words = located.words(text, spec)
    masked_at: list[int] = []  # word index of each masked word
    for k, (word, _, _) in enumerate(words):
        if mask_word(word) == PLACEHOLDER and masked_at and mask_word(words[k - 1][0]) == PLACEHOLDER:
            continue
        masked_at.append(k)
    first = masked_at[min(start, len(masked_at) - 1)]
    after = start + length
    last = (masked_at[after] - 1) if after < len(masked_at) else len(words) - 1
    return Located(unit, words[first][1], words[last][2], "masked")
