"""The manifest's list of rule names agrees with the rules' registry."""

from __future__ import annotations

from contam_guard.core.rules import RULES
from contam_guard.io.manifest.rule_names import RULE_NAMES, WINDOW_RULES


def test_the_manifest_knows_every_rule_and_which_read_windows() -> None:
    assert tuple(sorted(RULES)) == RULE_NAMES
    assert {name for name, rule in RULES.items() if rule.uses_windows} == WINDOW_RULES
