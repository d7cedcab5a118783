"""``contam-guard impact``: does contamination change a score? Clean vs full, with intervals.

``items`` reads the items CSV a scan wrote, ``scores`` an evaluation run's per-item scores,
``analysis`` joins them and computes the report (``stats`` holds the bootstrap and Llama 2's Z
test), ``render`` writes it as JSON and Markdown and ``plot`` as a PNG.
"""

from __future__ import annotations

from contam_guard.rules import RULES

RULE_CHOICES: tuple[str, ...] = (
    *RULES,
    *(name for name in ("numbers", "reworded") if name not in RULES),
    "any",
)
"""``--rule``: the registered rules, the two rewording rules (which an items CSV of a
contam-guard that has them carries), and ``any``."""
