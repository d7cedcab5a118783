"""The manifest's list of rule names agrees with the rules' registry."""

from __future__ import annotations

from contam_guard.core.rules import RULES
from contam_guard.io.manifest.rule_names import RULE_NAMES, WINDOW_RULES


def test_the_manifest_knows_every_rule_and_which_read_windows() -> None:
    # a rule reading another's registration (the gapped rule, gpt3's hashes) is not one of them
    assert tuple(sorted(name for name, rule in RULES.items() if rule.registered_as is None)) == RULE_NAMES
    assert {rule.registered_as for rule in RULES.values()} - {None} <= set(RULE_NAMES)
    assert {name for name, rule in RULES.items() if rule.uses_windows} == WINDOW_RULES
