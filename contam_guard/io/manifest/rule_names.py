"""The rules a golden set can be registered for, as the manifest records them.

The manifest stores rule names (a set registered with ``--rules``) and keeps the 50-character
windows only for a set whose rules read them. It needs those two facts, not the rules
themselves, which live above it (``rules``, reading the statistics of a scan); a test checks
that this list and the rules' registry agree.
"""

from __future__ import annotations

from collections.abc import Sequence

RULE_NAMES = ("gpt3", "gpt4", "llama2", "numbers", "palm", "reworded", "whole")
"""Every rule, sorted: what a set is registered for by default."""
WINDOW_RULES = frozenset({"gpt4"})
"""The rules that read the 50-character windows."""


def uses_windows(rules: Sequence[str]) -> bool:
    """Whether one of ``rules`` reads the 50-character windows (then they are stored)."""
    return any(name in WINDOW_RULES for name in rules)
