"""The overlap rules: one module each, one line each in ``RULES``.

Everything that names rules reads this registry: the config (``rules:``), the command line
(``--only``, ``--disable``, ``--fail-on``, ``--warn-on``), the verdicts (``core.verdicts.evaluate``),
the sweep table, SARIF's rule list and the notice that a scan cannot find anything. A new rule
is a module like ``palm.py`` (settings, ``evaluate``, ``RULE``) and a line below.
"""

from __future__ import annotations

from typing import Any

from contam_guard.core.rules import gapped, gpt3, gpt4, llama2, numbers, palm, reworded, whole
from contam_guard.core.rules.base import Rule, RuleResult, RuleSettings

RULES: dict[str, Rule[Any]] = {
    gpt3.NAME: gpt3.RULE,
    gapped.NAME: gapped.RULE,
    whole.NAME: whole.RULE,
    palm.NAME: palm.RULE,
    llama2.NAME: llama2.RULE,
    gpt4.NAME: gpt4.RULE,
    numbers.NAME: numbers.RULE,
    reworded.NAME: reworded.RULE,
}

__all__ = ["RULES", "Rule", "RuleResult", "RuleSettings"]
