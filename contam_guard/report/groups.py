"""The findings of a report grouped by (test item, training record): what a reviewer reads.

A reviewer looks at one training record beside one test item and decides; every rule that fired
on that pair is evidence about the same text. So the Markdown, HTML and console reviews show one
group per (test item, training record) with every rule that fired on it, never the same snippet
once per rule.

- GPT-3's rule is decided per pair (``PER_PAIR_RULES``): its finding is in exactly one group.
- PaLM's, Llama 2's and GPT-4's rules are decided per item over everything scanned
  (``contam_guard.core.verdicts``): their finding is listed in the group of *each* record that
  contributes to it, marked "per item", with the other contributing records named.

Every group with a per-pair finding is shown. A record that only contributes to per-item rules
is shown while its item has fewer than ``MAX_RECORDS_SHOWN`` groups; the rest are counted
(``ItemGroups.hidden``), and every one of them is in the JSON review. Records beyond
``--max-pairs-per-item`` are in no group (the scan kept their counts, not the records): the
findings that count them are noted per item (``ItemGroups.unlisted``). The findings list itself
(JSON ``findings``, SARIF results, GitHub annotations, the allowlist) stays one per rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from contam_guard.core.match.index import Target
from contam_guard.core.pairs import Pair
from contam_guard.core.rules import RULES
from contam_guard.core.verdicts import Finding, Report

PER_PAIR_RULES = frozenset(name for name, rule in RULES.items() if rule.per_pair)
"""Rules decided per (item, record) pair (``Rule.per_pair``); every other rule is decided per item."""
MAX_RECORDS_SHOWN = 5
"""Records shown per test item when they only contribute to per-item rules."""
MAX_OTHERS_NAMED = 5
"""Other contributing records named on a per-item rule's line."""
STATUS_ORDER = ("fail", "warn", "allowed")


@dataclass(frozen=True)
class Group:
    """One (test item, training record) pair and every finding it is part of."""

    target: Target
    item_id: str
    test_index: int
    pair: Pair
    findings: tuple[Finding, ...]
    """Ordered by status (fail, warn, allowed), then by the report's rule order."""

    @property
    def status(self) -> str:
        """The most severe status of its findings: ``fail``, ``warn`` or ``allowed``."""
        return next(s for s in STATUS_ORDER if any(f.status == s for f in self.findings))

    @property
    def verdicts(self) -> str:
        """The rules by status: ``FAIL gpt3, WARN palm llama2 gpt4``."""
        parts = []
        for status in STATUS_ORDER:
            names = [f.rule for f in self.findings if f.status == status]
            if names:
                parts.append(f"{status.upper()} {' '.join(names)}")
        return ", ".join(parts)

    @property
    def where(self) -> str:
        """``data/train.jsonl:6 record 5, field text``."""
        return where(self.pair)

    def others(self, finding: Finding) -> list[Pair]:
        """The other records contributing to ``finding`` (a per-item rule), strongest first."""
        return [p for p in finding.pairs if (p.source, p.record) != (self.pair.source, self.pair.record)]

    def per_item_notes(self, quote: str = "", limit: int = MAX_OTHERS_NAMED) -> list[str]:
        """What a section says of its per-item rules, once for the rules that share the same
        records: ``palm, llama2, gpt4 are decided per item over everything scanned: only this
        record contributes`` or ``...: 2 other record(s) contribute too: A, B`` (each name in
        ``quote``; the first ``limit`` named, the rest counted)."""
        shared: dict[tuple[tuple[str, int], ...], list[str]] = {}
        others: dict[tuple[tuple[str, int], ...], list[Pair]] = {}
        for finding in self.findings:
            if is_per_item(finding):
                rest = self.others(finding)
                key = tuple((p.source, p.record) for p in rest)
                shared.setdefault(key, []).append(finding.rule)
                others[key] = rest
        notes = []
        for key, rules in shared.items():
            verb = "is" if len(rules) == 1 else "are"
            head = f"{', '.join(rules)} {verb} decided per item over everything scanned"
            rest = others[key]
            if not rest:
                notes.append(f"{head}: only this record contributes")
                continue
            names = ", ".join(f"{quote}{where(p)}{quote}" for p in rest[:limit])
            more = f" and {len(rest) - limit} more" if len(rest) > limit else ""
            notes.append(f"{head}: {len(rest)} other record(s) contribute too: {names}{more}")
        return notes

    @property
    def pair_detail(self) -> str | None:
        """The numbers of the first rule decided on this pair alone (``shared run of 50 words >=
        N = 13``), or None."""
        return next((f.detail for f in self.findings if not is_per_item(f)), None)

    @property
    def per_pair(self) -> bool:
        """Whether a rule decided on this pair alone fired on it."""
        return any(f.rule in PER_PAIR_RULES for f in self.findings)


@dataclass(frozen=True)
class ItemGroups:
    """The groups shown for one test item, and how many more records only contribute to its
    per-item rules (in the JSON review)."""

    target: Target
    item_id: str
    test_index: int
    groups: tuple[Group, ...]
    hidden: int
    hidden_rules: tuple[str, ...]
    """The per-item rules the hidden records contribute to."""
    unlisted: tuple[Finding, ...] = ()
    """The item's findings that count records listed nowhere (``--max-pairs-per-item``): a
    per-pair rule's records beyond the cap, summed per shared run, and per-item rules."""


def is_per_item(finding: Finding) -> bool:
    return finding.rule not in PER_PAIR_RULES


def where(pair: Pair) -> str:
    """``data/train.jsonl:6 record 5, field text``."""
    line = f":{pair.line}" if pair.line is not None else ""
    return f"{pair.source}{line} record {pair.record}{pair.in_field}"


def _pair_key(pair: Pair) -> tuple[int, str, int]:
    return (pair.item, pair.source, pair.record)


def groups(report: Report) -> list[Group]:
    """Every (item, record) group of the report's findings, in report order: by set, view and
    test index, then strongest pair first (longest run, then windows, then file and record)."""
    rank = {name: number for number, name in enumerate(report.actions)}
    members: dict[tuple[int, str, int], list[Finding]] = {}
    pairs: dict[tuple[int, str, int], Pair] = {}
    for finding in report.findings:
        for pair in finding.pairs:
            key = _pair_key(pair)
            members.setdefault(key, []).append(finding)
            pairs.setdefault(key, pair)
    out = []
    for key, found in members.items():
        first = found[0]
        found.sort(key=lambda f: (STATUS_ORDER.index(f.status), rank.get(f.rule, len(rank)), f.rule))
        out.append(Group(first.target, first.item_id, first.test_index, pairs[key], tuple(found)))
    out.sort(key=_group_order)
    return out


def _group_order(group: Group) -> tuple[str, str, int, tuple[float, ...], str, int]:
    pair, target = group.pair, group.target
    most_telling_first = tuple(-value for value in pair.rank())
    return (target.set_name, target.view, group.test_index, most_telling_first, pair.source, pair.record)


def by_item(
    all_groups: Iterable[Group], limit: int = MAX_RECORDS_SHOWN, findings: Iterable[Finding] = ()
) -> list[ItemGroups]:
    """``all_groups`` (in ``groups`` order) per test item, with records that only contribute to
    per-item rules cut to ``limit`` groups per item (groups with a per-pair finding always stay);
    with the report's ``findings``, those counting unlisted records noted on their item."""
    beyond: dict[tuple[str, str, int], list[Finding]] = {}
    for finding in findings:
        if finding.records > len(finding.pairs):  # (an item with such a finding has groups)
            key = (finding.target.set_name, finding.target.view, finding.test_index)
            beyond.setdefault(key, []).append(finding)
    items: dict[tuple[str, str, int], list[Group]] = {}
    for group in all_groups:
        items.setdefault((group.target.set_name, group.target.view, group.test_index), []).append(group)
    out = []
    for key, members in items.items():
        room = max(limit - sum(g.per_pair for g in members), 0)
        shown: list[Group] = []
        hidden: list[Group] = []
        for group in members:
            if group.per_pair:
                shown.append(group)
            elif room > 0:
                shown.append(group)
                room -= 1
            else:
                hidden.append(group)
        rules = tuple(dict.fromkeys(f.rule for g in hidden for f in g.findings))
        first = members[0]
        unlisted = tuple(beyond.get(key, ()))
        out.append(
            ItemGroups(
                first.target, first.item_id, first.test_index, tuple(shown), len(hidden), rules, unlisted
            )
        )
    return out


def hidden_note(item: ItemGroups) -> str:
    """``… and 3 more record(s) contribute to palm, gpt4 of item q-01``, then what the cap left
    unlisted: ``FAIL gpt3: and 180 more record(s) not listed ...`` (empty when none)."""
    notes = []
    if item.hidden:
        notes.append(
            f"… and {item.hidden} more record(s) contribute to {', '.join(item.hidden_rules)} of item "
            f"{item.item_id}; the JSON review lists them"
        )
    for finding in item.unlisted:
        if finding.pairs:  # a per-item rule
            more = finding.records - len(finding.pairs)
            text = f"{more} more contributing record(s) counted, not listed (--max-pairs-per-item)"
        else:
            text = finding.detail
        notes.append(f"{finding.status.upper()} {finding.rule} of item {item.item_id}: {text}")
    return "; ".join(notes)
