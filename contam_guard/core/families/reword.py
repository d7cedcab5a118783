"""The rewording family: what the ``numbers`` and ``reworded`` rules read.

Computed from the same word hashes as the n-gram family (``core.batch``), through the rewording
stage (``reword.stage``: compiled, or numpy): per (record, item) the longest run shared once
numbers are masked and the best reworded score, and per item their maxima over everything
scanned (``RewordTotals``: mergeable).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from contam_guard.config import Rules
from contam_guard.core.batch import Batch
from contam_guard.core.families.base import FamilyRows, Located
from contam_guard.core.pairs import Column
from contam_guard.engine.index import ManifestIndex
from contam_guard.manifest.model import Manifest
from contam_guard.reword.index import RewordIndex
from contam_guard.reword.matching import REPORT_FLOOR, runs_from_hits
from contam_guard.reword.numbers import PLACEHOLDER, mask_word
from contam_guard.reword.stage import CompiledStage, NumpyStage, Stage, StageResult, has_compiled_stage
from contam_guard.reword.vocab import WordSpans, spell
from contam_guard.rules import numbers, reworded
from contam_guard.text import located
from contam_guard.text.hashing import HashKey
from contam_guard.text.normalise import TextSpec

NAME = "reword"
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
    rule's threshold (None: the rule is off)."""

    numbers: int | None
    reworded: float | None

    @classmethod
    def of(cls, rules: object) -> RewordSettings | None:
        """The settings in ``rules`` (a ``config.Rules``); None when both rules are off."""
        n = numbers.RULE.settings_of(rules)
        r = reworded.RULE.settings_of(rules)
        if not (n.enabled or r.enabled):
            return None
        return cls(n.n if n.enabled else None, r.threshold if r.enabled else None)

    @property
    def floor(self) -> float | None:
        """The lowest score computed (``matching.REPORT_FLOOR``, or a lower threshold)."""
        return None if self.reworded is None else min(self.reworded, REPORT_FLOOR)


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


@dataclass(frozen=True)
class RewordStats:
    """The family's per-item numbers as the rules read them, with the index they came from."""

    index: RewordIndex
    numbers_run: IntArray
    reworded: FloatArray


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
    ) -> None:
        """``compiled``: use the compiled stage (builds in-memory tables: for large inputs);
        otherwise numpy, which scores a small batch without decoding whole views."""
        self.index = index
        self.reword_index = manifest_index
        self.settings = settings
        self.spec = index.spec
        make = CompiledStage if compiled and has_compiled_stage() else NumpyStage
        self.stage: Stage = make(
            manifest_index, key, numbers=settings.numbers is not None, floor=settings.floor
        )

    def observe(self, batch: Batch, totals: RewordTotals | None) -> FamilyRows:
        """The batch's pairs; ``totals`` updated unless None."""
        texts, features = batch.units.texts, batch.features
        result = self.run(features, lambda: texts)
        best = self.per_record(result, batch.units.unit_record, len(batch.records), totals)
        record, item, run, score, unit, start = best

        def locate(row: int) -> Located | None:
            u = int(unit[row])
            if run[row] >= 5:
                return _masked_span(texts[u], int(start[row]), int(run[row]), u, self.spec)
            if score[row] > 0:
                return Located(u, 0, len(texts[u]), "reworded")
            return None

        return FamilyRows(
            record, item, {"numbers_run": run, "reworded": score}, self.notable(run, score), locate
        )

    def run(self, words: WordSpans, texts: Callable[[], Sequence[str]]) -> StageResult:
        """The stage over ``words`` (units: ``words.record_words``), first spelling the words it
        has not met (read off ``texts()``, asked for only then)."""
        missing = self.stage.missing(words.word_hash)
        if missing.size:
            self.stage.add(spell(texts(), words, missing, self.spec))
        return self.stage.run(words.word_hash, words.record_words)

    def per_record(
        self, result: StageResult, unit_record: IntArray, records: int, totals: RewordTotals | None
    ) -> tuple[IntArray, IntArray, IntArray, FloatArray, IntArray, IntArray]:
        """(record, item, masked run, score, unit, run start) per (record, item) pair found, the
        best over the record's units; ``totals`` updated."""
        unit, item, run, start = runs_from_hits(
            result.gram_unit, result.gram_at, result.gram_posting, self.reword_index
        )
        if totals is not None:
            np.maximum.at(totals.numbers_run, item, run)
            np.maximum.at(totals.reworded, result.pair_item, result.pair_score)
        # one row per (unit, item) with both numbers, then the best unit per (record, item)
        units = np.concatenate([unit, result.pair_unit])
        items = np.concatenate([item, result.pair_item])
        runs = np.concatenate([run, np.zeros(result.pair_unit.size, dtype=np.int64)])
        starts = np.concatenate([start, np.zeros(result.pair_unit.size, dtype=np.int64)])
        scores = np.concatenate([np.zeros(unit.size), result.pair_score])
        rec = unit_record[units] if units.size else units
        key = rec * max(self.index.items, 1) + items
        order = np.lexsort((-scores, -runs, key))
        key, units, items, runs, starts, scores, rec = (
            a[order] for a in (key, units, items, runs, starts, scores, rec)
        )
        first = np.ones(key.size, dtype=np.bool_)
        first[1:] = key[1:] != key[:-1]
        group = np.cumsum(first) - 1
        best_score = np.zeros(int(first.sum()), dtype=np.float64)
        np.maximum.at(best_score, group, scores)
        keep = np.flatnonzero(first)
        return rec[keep], items[keep], runs[keep], best_score, units[keep], starts[keep]

    def notable(self, run: IntArray, score: FloatArray) -> NDArray[np.bool_]:
        out = np.zeros(run.size, dtype=np.bool_)
        if self.settings.numbers is not None:
            out |= run >= self.settings.numbers
        if self.settings.reworded is not None:
            out |= score >= self.settings.reworded
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
