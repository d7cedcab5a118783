"""SARIF 2.1.0 for code scanning (``github/codeql-action/upload-sarif``).

One rule per overlap rule (its description is the first line of the rule module's docstring),
one result per finding: ``error`` for a failing rule, ``warning`` for a warning, ``note`` for an
allowed finding, which also carries a suppression (``external`` for the allowlist, ``inSource``
for the record's marker). ``partialFingerprints`` hold the content key the allowlist uses, so a
finding keeps its identity when its line moves. Messages hold numbers and ids, never the shared
text.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any
from urllib.parse import quote

from contam_guard.core.families import COLUMNS
from contam_guard.core.rules import RULES
from contam_guard.core.spec.hashing import digest
from contam_guard.core.verdicts import ALLOWED_BY_MARKER, Finding, Report
from contam_guard.version import __version__

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/contam-guard/"
LEVELS = {"fail": "error", "warn": "warning"}
SPAN_FINGERPRINT = "contamGuardSpan/v1"
KEY_FINGERPRINT = "contamGuardKey/v1"


def _rule(name: str, action: str) -> dict[str, Any]:
    rule = RULES[name]
    doc = (sys.modules[rule.evaluate.__module__].__doc__ or rule.title).strip()
    return {
        "id": name,
        "name": f"{name}-overlap",
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": doc.split("\n\n", 1)[0].replace("\n", " ")},
        "defaultConfiguration": {"level": LEVELS.get(action, "warning")},
        "properties": {"action": action},
    }


def _message(finding: Finding) -> str:
    target = finding.target
    text = (
        f"Training data overlaps golden item {finding.item_id} (test index {finding.test_index}) of "
        f"{target.label} v{target.version}: {finding.rule}, {finding.detail}."
    )
    if finding.pairs and finding.pairs[0].field:
        text += f" Training field: {finding.pairs[0].field}."
    if finding.records > 1:
        text += f" {finding.records} training records contribute."
    if finding.note:
        text += f" {finding.note[0].upper()}{finding.note[1:]}."
    return text


def _location(finding: Finding) -> list[dict[str, Any]]:
    if not finding.pairs:
        return []
    pair = finding.pairs[0]
    # fsencode: a file name that is not UTF-8 is percent-encoded from its bytes
    physical: dict[str, Any] = {"artifactLocation": {"uri": quote(os.fsencode(pair.source))}}
    if pair.line is not None:
        physical["region"] = {"startLine": pair.line}
    return [{"physicalLocation": physical}]


def _result(finding: Finding, rule_index: dict[str, int]) -> dict[str, Any]:
    target = finding.target
    key = digest(*(s.encode("utf-8") for s in (target.set_name, target.view, finding.item_id, finding.rule)))
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index[finding.rule],
        "level": "note" if finding.allowed else LEVELS.get(finding.action, "warning"),
        "message": {"text": _message(finding)},
        "locations": _location(finding),
        "partialFingerprints": {
            SPAN_FINGERPRINT: finding.span,
            KEY_FINGERPRINT: digest(key.encode("ascii"), finding.span.encode("ascii")),
        },
        "properties": {
            "set": target.set_name,
            "view": target.view,
            "setVersion": target.version,
            "itemId": finding.item_id,
            "testIndex": finding.test_index,
            "records": [
                {
                    "source": p.source,
                    "record": p.record,
                    "line": p.line,
                    "field": p.field,
                    **{c.key: c.shown(p.value(c.name)) for c in COLUMNS},
                }
                for p in finding.pairs
            ],
        },
    }
    if finding.allowed:
        marker = finding.allowed_by == ALLOWED_BY_MARKER
        result["suppressions"] = [
            {
                "kind": "inSource" if marker else "external",
                "status": "accepted",
                "justification": finding.note,
            }
        ]
    return result


def render(report: Report) -> str:
    """The SARIF log as deterministic JSON (sorted keys, trailing newline)."""
    names = [name for name in RULES if name in report.actions] or list(RULES)
    rule_index = {name: i for i, name in enumerate(names)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "contam-guard",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_rule(name, report.actions.get(name, "warn")) for name in names],
            }
        },
        "results": [_result(f, rule_index) for f in report.findings if f.rule in rule_index],
        "columnKind": "unicodeCodePoints",
        "invocations": [
            {
                "executionSuccessful": True,
                "exitCode": int(report.return_code),
                "toolExecutionNotifications": [
                    {"level": "note", "message": {"text": text}}
                    for text in [*report.result.skipped, *report.notices]
                ],
            }
        ],
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
