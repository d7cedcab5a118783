"""The rule families: each measures some numbers per (item, record) pair and per item, which its
rules read; ``COLUMNS`` is every family's columns, in registry order (the pair table's columns:
what every output loops over).

A new family is one module declaring its ``COLUMNS`` and its totals (how it accumulates per
item, mergeable) and observing a ``core.batch.Batch``; and one line here.
"""

from __future__ import annotations

from collections.abc import Mapping

from contam_guard.core.families import ngram, reword
from contam_guard.core.pairs import Column

FAMILIES = {ngram.NAME: ngram.COLUMNS, reword.NAME: reword.COLUMNS}
COLUMNS: tuple[Column, ...] = tuple(column for columns in FAMILIES.values() for column in columns)
COLUMN_NAMES: tuple[str, ...] = tuple(column.name for column in COLUMNS)


def column(name: str) -> Column:
    """The registered column ``name``."""
    for c in COLUMNS:
        if c.name == name:
            return c
    raise KeyError(name)


def pair_numbers(numbers: Mapping[str, float]) -> str:
    """A pair's numbers as a review lists them ("longest run 18 words, 16 8-grams, ..."), the
    zero ones left out."""
    return ", ".join(c.label.format(c.shown(numbers[c.name])) for c in COLUMNS if numbers.get(c.name))


__all__ = ["COLUMNS", "COLUMN_NAMES", "FAMILIES", "column", "pair_numbers"]
