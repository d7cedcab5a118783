"""Join scores to the items CSV and compute every number ``contam-guard impact`` reports."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contam_guard.errors import InputError
from contam_guard.impact.items import Item, ItemTable
from contam_guard.impact.scores import ITEM_ID, Score, Scores
from contam_guard.impact.stats import (
    Interval,
    Sampling,
    mean_interval,
    paired_difference,
    sampling_z,
    streams,
)

NOT_CLEAN = 0.20
DIRTY = 0.80
"""Llama 2's lines (Appendix A.6): clean under 20% of tokens contaminated, dirty at 80% or more."""
Z_BAR = 2.0
SHOWN = 5
"""Unmatched scores listed in the error."""


@dataclass(frozen=True)
class Subset:
    """A subset's size, mean and interval (and, for Llama 2's, its Z test)."""

    name: str
    definition: str
    n: int
    mean: Interval
    sampling: Sampling | None = None


@dataclass(frozen=True)
class Impact:
    """Everything ``impact`` reports for one scores file, items CSV and rule."""

    scores: Scores
    items: ItemTable
    rule: str
    draws: int
    seed: int
    unscored: int
    """Items of the set (and view) that have no score: not counted anywhere."""
    full: Subset
    clean: Subset
    flagged: Subset
    difference: Interval
    """clean − full, paired bootstrap."""
    relative: Interval
    """GPT-3's relative change, (clean − full) / full."""
    llama2: list[Subset]

    @property
    def binary(self) -> bool:
        """Every score is 0 or 1 (shown as percentages)."""
        return all(row.score in (0.0, 1.0) for row in self.scores.rows)

    @property
    def dirty(self) -> Subset:
        return self.llama2[3]

    @property
    def contaminated(self) -> bool | None:
        """Llama 2's verdict: the dirty subset's |Z| > 2 (None: the dirty subset is empty or
        the whole set, so there is nothing to compare it with)."""
        z = self.dirty.sampling.z if self.dirty.sampling else None
        return None if z is None else abs(z) > Z_BAR

    @property
    def all_four_beyond(self) -> bool:
        """The stricter reading: every one of the four subsets has |Z| > 2."""
        zs = [s.sampling.z if s.sampling else None for s in self.llama2]
        return all(z is not None and abs(z) > Z_BAR for z in zs)


def join(scores: Scores, table: ItemTable) -> list[tuple[Item, float]]:
    """Each score with its item, in the scores' order; an error listing a few scores that
    match no item."""
    by_id = {item.item_id: item for item in table.items}
    by_index: dict[int, Item | None] = {}
    for each in table.items:
        # test_index counts within each golden file: two files of one set repeat it.
        by_index[each.test_index] = None if each.test_index in by_index else each
    pairs: list[tuple[Item, float]] = []
    missing: list[Score] = []
    for row in scores.rows:
        item: Item | None
        if row.key == ITEM_ID:
            item = by_id.get(str(row.value))
        elif int(row.value) in by_index and by_index[int(row.value)] is None:
            raise InputError(
                str(scores.path),
                f"test_index {row.value} names two items of set {table.set_name!r} in {table.path} "
                "(the set has several golden files, each indexed from 0)",
                line=row.line,
                hint="score by item_id instead",
            )
        else:
            item = by_index.get(int(row.value))
        if item is None:
            missing.append(row)
            continue
        pairs.append((item, row.score))
    if missing:
        listed = ", ".join(f"line {row.line} ({row.label()})" for row in missing[:SHOWN])
        more = f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else ""
        raise InputError(
            str(scores.path),
            f"{len(missing)} of {len(scores.rows)} scores match no item of set {table.set_name!r} "
            f"in {table.path}: {listed}{more}",
            line=missing[0].line,
            hint="are the scores and the items CSV from the same benchmark and split?",
        )
    return pairs


def analyse(scores: Scores, table: ItemTable, rule: str, draws: int, seed: int) -> Impact:
    """Every number of the report, seeded by ``seed``."""
    table.check_rule(rule)
    pairs = join(scores, table)
    flags = dict(zip((item.item_id for item in table.items), table.flagged(rule)))
    values = np.array([score for _, score in pairs], dtype=np.float64)
    flagged = np.array([flags[item.item_id] for item, _ in pairs], dtype=np.bool_)
    share = np.array([item.share for item, _ in pairs], dtype=np.float64)
    clean = ~flagged
    rng = streams(seed, 9)
    difference, relative = paired_difference(values, clean, draws, rng[0])
    masks = [share < NOT_CLEAN, share >= NOT_CLEAN, share < DIRTY, share >= DIRTY]
    samplings = sampling_z(values, masks, draws, rng[1])
    names = [
        ("clean", f"under {NOT_CLEAN:.0%} of words in shared runs of 10+"),
        ("not clean", f"{NOT_CLEAN:.0%} or more"),
        ("not dirty", f"under {DIRTY:.0%}"),
        ("dirty", f"{DIRTY:.0%} or more"),
    ]
    llama2 = [
        Subset(name, definition, int(mask.sum()), mean_interval(values[mask], draws, rng[4 + k]), sampling)
        for k, ((name, definition), mask, sampling) in enumerate(zip(names, masks, samplings))
    ]
    label = "any rule" if rule == "any" else rule
    return Impact(
        scores=scores,
        items=table,
        rule=rule,
        draws=draws,
        seed=seed,
        unscored=len(table.items) - len(pairs),
        full=Subset("full", "every scored item", values.size, mean_interval(values, draws, rng[2])),
        clean=Subset(
            "clean", f"not flagged by {label}", int(clean.sum()), mean_interval(values[clean], draws, rng[3])
        ),
        flagged=Subset(
            "flagged",
            f"flagged by {label}",
            int(flagged.sum()),
            mean_interval(values[flagged], draws, rng[8]),
        ),
        difference=difference,
        relative=relative,
        llama2=llama2,
    )
