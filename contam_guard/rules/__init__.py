"""The overlap rules: one module each, one line each in ``RULES``.

Everything that names rules reads this registry: the config (``rules:``), the command line
(``--only``, ``--disable``, ``--fail-on``, ``--warn-on``), the verdicts (``verdicts.evaluate``),
the sweep table, SARIF's rule list and the notice that a scan cannot find anything. A new rule
is a module like ``palm.py`` (settings, ``evaluate``, ``RULE``) and a line below.
"""

from __future__ import annotations

from typing import Any

from contam_guard.rules import gpt3, gpt4, llama2, numbers, palm, reworded, whole
from contam_guard.rules.base import Column, Rule, RuleResult, RuleSettings

RULES: dict[str, Rule[Any]] = {
    gpt3.NAME: gpt3.RULE,
    whole.NAME: whole.RULE,
    palm.NAME: palm.RULE,
    llama2.NAME: llama2.RULE,
    gpt4.NAME: gpt4.RULE,
    numbers.NAME: numbers.RULE,
    reworded.NAME: reworded.RULE,
}

COLUMNS: tuple[Column, ...] = tuple(column for rule in RULES.values() for column in rule.columns_csv)
"""The rules' own numbers, in registry order: extra columns of the CSVs, extra numbers of a pair."""


def column_value(column: Column, value: float) -> float | int:
    """A column's number as the CSVs write it (an int, or rounded to its decimals)."""
    return round(float(value), column.decimals) if column.decimals else int(value)


def pair_numbers(pair: Any) -> list[str]:
    """The rules' own numbers of a pair that has them, for the reviews ("masked run 18 words")."""
    return [c.label.format(column_value(c, c.pair(pair))) for c in COLUMNS if c.pair(pair)]


__all__ = ["COLUMNS", "RULES", "Column", "Rule", "RuleResult", "RuleSettings", "column_value", "pair_numbers"]
