"""The review file for machines: versioned JSON, sorted, deterministic.

``findings`` has one entry per rule that fired (what SARIF, annotations and the allowlist key
on); ``groups`` (added in format version 1, additive) has one per (test item, training record)
pair, as the people's reviews show them, with the status, the rules (``FAIL gpt3, WARN palm``),
each rule's scope (``pair`` or ``item``, see ``report.groups``) and the positions of its
findings in ``findings``. Nothing is capped here: it is the complete record.
"""

from __future__ import annotations

import json
from typing import Any

from contam_guard.core.families import COLUMNS
from contam_guard.core.pairs import Pair
from contam_guard.core.verdicts import Finding, Report, span_digest
from contam_guard.report.groups import Group, groups, is_per_item
from contam_guard.report.markdown import GoldenText
from contam_guard.version import __version__

FORMAT_VERSION = 1


def _pair(pair: Pair) -> dict[str, Any]:
    return {
        "source": pair.source,
        "record": pair.record,
        "line": pair.line,
        "field": pair.field,
        **{c.key: c.shown(pair.value(c.name)) for c in COLUMNS},
        "span": {"start": pair.snippet.start, "end": pair.snippet.start + len(pair.snippet.run)},
        "shared_text": pair.snippet.run,
        "shown_as": pair.snippet.kind,
        "allow_marker": pair.allowed_inline,
    }


def _finding(finding: Finding, golden: GoldenText | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rule": finding.rule,
        "action": finding.action,
        "allowed": finding.allowed,
        "allowed_by": finding.allowed_by,
        "confirmed_leak": finding.confirmed,
        "reason": finding.reason,
        "note": finding.note,
        "span": finding.span,
        "set": finding.target.set_name,
        "view": finding.target.view,
        "set_version": finding.target.version,
        "item_id": finding.item_id,
        "test_index": finding.test_index,
        "detail": finding.detail,
        "records": finding.records,  # every record behind it; ``pairs`` lists up to the cap
        "pairs": [_pair(p) for p in finding.pairs],
    }
    text = golden(finding) if golden is not None else None
    if text is not None:
        out["golden_text"] = text
    return out


def _group(group: Group, position: dict[int, int]) -> dict[str, Any]:
    pair = group.pair
    return {
        "set": group.target.set_name,
        "view": group.target.view,
        "set_version": group.target.version,
        "item_id": group.item_id,
        "test_index": group.test_index,
        "source": pair.source,
        "record": pair.record,
        "line": pair.line,
        "field": pair.field,
        "status": group.status,
        "verdicts": group.verdicts,
        "longest_run": pair.longest_run,
        "rules": [
            {
                "rule": f.rule,
                "status": f.status,
                "scope": "item" if is_per_item(f) else "pair",
                "finding": position[id(f)],
            }
            for f in group.findings
        ],
    }


def render(report: Report, golden: GoldenText | None = None) -> str:
    result = report.result
    position = {id(f): number for number, f in enumerate(report.findings)}
    findings = [_finding(f, golden) for f in report.findings]
    body = {
        "format": "contam-guard-review",
        "format_version": FORMAT_VERSION,
        "tool_version": __version__,
        "summary": {
            "files": result.files,
            "skipped": result.skipped,
            "records": result.records,
            "characters": result.chars,
            "max_pairs_per_item": result.max_pairs,
            "fields_asked": list(result.asked),
            "fields_seen": {name: sorted(result.fields.get(name, ())) for name in result.files},
            "findings": len(report.findings),
            "failing": len(report.failing),
            "exit_code": int(report.return_code),
            "notices": report.notices,
        },
        "findings": findings,
        "groups": [_group(g, position) for g in groups(report)],
    }
    if report.guard is not None:  # --diff/--staged: the range's changes that weaken the guard
        body["guard_changes"] = report.guard.as_dict()
    for entry, finding in zip(findings, report.findings):  # scan --index
        for shown, pair in zip(entry["pairs"], finding.pairs):
            if span_digest(pair) in report.in_training:
                shown["training_records"] = report.in_training[span_digest(pair)]
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
