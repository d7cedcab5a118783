"""``contam-guard impact``: does contamination change a score? Clean vs full, with intervals.

``items`` reads the items CSV a scan wrote, ``scores`` an evaluation run's per-item scores,
``analysis`` joins them and computes the report (``stats`` holds the bootstrap and Llama 2's Z
test), ``render`` writes it as JSON and Markdown and ``plot`` as a PNG.
"""

from __future__ import annotations

from contam_guard.core.rules import RULES

RULE_CHOICES: tuple[str, ...] = (*RULES, "any")
"""``--rule``: a registered rule, or ``any`` (flagged by any of them)."""
