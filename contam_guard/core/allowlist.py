"""The allowlist: reviewed findings, keyed by content, committed beside the manifest.

An entry names a finding by what it is, never by where it is: the golden set, view and item
id, the rule, and ``span``, a digest of the normalised words the training side shares
(``Finding.span``). The same leak moved to another line or file keeps matching; another leak
in the same record has another key and still fails.

``decision: false-positive`` (``review`` answer ``n``) allows the finding, with a required
``reason``; ``decision: leak`` (answer ``y``) records a confirmed leak so that ``review`` does
not ask again: it still fails the scan. ``until`` (an ISO date) makes an entry expire: from the
day after, it no longer applies and every scan says so. The file is written sorted, without
timestamps, so the same decisions always give the same bytes.

``files`` (written by ``review``) names the training files, relative to the project root, where
the finding was seen. It is never part of the key (a moved leak still matches); it only tells
whether a scan read the entry's data: an entry that matches nothing is reported as stale only
when every file it names was scanned (or no longer exists), so scanning one file does not call
the entries for every other file stale. An entry without ``files`` (written by hand, or by an
older contam-guard) cannot say, and is reported stale when a full scan matches nothing, with
that caveat.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from contam_guard.core.rules import RULES
from contam_guard.core.verdicts import ALLOWED_BY_ALLOWLIST, Finding, Report
from contam_guard.errors import ConfigError
from contam_guard.io.atomic import write_text
from contam_guard.io.safe_read import load_yaml

FORMAT_VERSION = 1
Decision = Literal["false-positive", "leak"]
FALSE_POSITIVE: Decision = "false-positive"
LEAK: Decision = "leak"

HEADER = """\
# contam-guard allowlist: reviewed findings, keyed by content (set, view, item, rule and a
# digest of the shared words), never by line or commit. `contam-guard review` writes it; you may
# edit reasons, `by` and `until` (YYYY-MM-DD) by hand. Comments other than this header are not kept.
# decision: false-positive allows the finding; leak records a confirmed leak (it still fails).
"""

Key = tuple[str, str, str, str, str]
"""(set, view, item, rule, span)."""


class Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    set_name: str = Field(alias="set", min_length=1)
    view: str = Field(min_length=1)
    item: str = Field(min_length=1)
    rule: str
    span: str = Field(pattern=r"^[0-9a-f]{32}$")
    decision: Decision = FALSE_POSITIVE
    reason: str = Field(min_length=1)
    by: str | None = None
    until: dt.date | None = None
    files: tuple[str, ...] = ()
    """Where the finding was seen (POSIX paths relative to the project root), sorted; not part
    of the key."""
    baseline: dt.date | None = None
    """Set by ``contam-guard baseline``: the day the finding was recorded because it was in the
    data when the guard was adopted, not reviewed one by one (``review --baseline`` walks these).
    A person's decision replaces the entry without it."""

    @field_validator("rule")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        # any registered rule's findings can be reviewed (whole's, the rewording rules')
        if value not in RULES:
            raise ValueError(f"unknown rule {value!r} (the rules: {', '.join(RULES)})")
        return value

    @field_validator("reason")
    @classmethod
    def _reason_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a reason is required")
        return value.strip()

    @property
    def key(self) -> Key:
        return (self.set_name, self.view, self.item, self.rule, self.span)

    def expired(self, today: dt.date) -> bool:
        return self.until is not None and today > self.until

    def describe(self) -> str:
        return f"{self.set_name}:{self.view} item {self.item} {self.rule} (span {self.span[:12]})"

    @property
    def kind(self) -> str:
        """How notices name the entry: ``false-positive entry`` or ``confirmed-leak entry``."""
        if self.decision == LEAK:
            return "confirmed-leak entry"
        return "false-positive entry" if self.baseline is None else "baseline entry"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "set": self.set_name,
            "view": self.view,
            "item": self.item,
            "rule": self.rule,
            "span": self.span,
            "decision": self.decision,
            "reason": self.reason,
        }
        if self.by:
            out["by"] = self.by
        if self.until is not None:
            out["until"] = self.until.isoformat()
        if self.files:
            out["files"] = sorted(self.files)
        if self.baseline is not None:
            out["baseline"] = self.baseline.isoformat()
        return out


def key_of(finding: Finding) -> Key:
    """The allowlist key of a finding."""
    target = finding.target
    return (target.set_name, target.view, finding.item_id, finding.rule, finding.span)


def project_path(display: str, root: Path) -> str | None:
    """A report's file name (relative to the current folder, or absolute) as a POSIX path
    relative to ``root``; None outside it (an absolute path is never committed)."""
    try:
        return Path(os.path.abspath(display)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return None


def seen_in(findings: Iterable[Finding], key: Key, root: Path) -> tuple[str, ...]:
    """The files (relative to ``root``, sorted) of every pair of the findings with ``key``: one
    decision covers them all."""
    names = {p.source for f in findings if key_of(f) == key for p in f.pairs}
    return tuple(sorted({path for name in names if (path := project_path(name, root)) is not None}))


def entry_for(
    finding: Finding,
    decision: Decision,
    reason: str,
    *,
    by: str | None = None,
    until: dt.date | None = None,
    files: tuple[str, ...] = (),
) -> Entry:
    """The allowlist entry recording ``decision`` on ``finding`` (keyed by its content)."""
    set_name, view, item, rule, span = key_of(finding)
    return Entry.model_validate(
        {
            "set": set_name,
            "view": view,
            "item": item,
            "rule": rule,
            "span": span,
            "decision": decision,
            "reason": reason,
            "by": by,
            "until": until,
            "files": files,
        }
    )


@dataclass(frozen=True)
class Allowlist:
    path: Path
    entries: dict[Key, Entry]

    @classmethod
    def load(cls, path: Path) -> Allowlist:
        """Read ``path``; a missing file is an empty allowlist. Problems are ``ConfigError``."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(path, {})
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the allowlist ({exc.strerror or exc})") from exc
        data = load_yaml(text, path, ConfigError)
        if data is None:
            return cls(path, {})
        if not isinstance(data, dict) or not isinstance(data.get("entries", []), list):
            raise ConfigError(f"{path}: expected a mapping with a list of `entries`")
        if data.get("version", FORMAT_VERSION) != FORMAT_VERSION:
            raise ConfigError(
                f"{path}: allowlist format version {data.get('version')!r} is not {FORMAT_VERSION}",
                hint="it was written by another contam-guard version",
            )
        unknown = sorted(set(data) - {"version", "entries"})
        if unknown:
            raise ConfigError(f"{path}: unknown key {unknown[0]!r} (expected version, entries)")
        entries: dict[Key, Entry] = {}
        for number, raw in enumerate(data.get("entries") or [], 1):
            entry = _entry(path, number, raw)
            if entry.key in entries:
                raise ConfigError(f"{path}: entry {number} repeats an earlier entry for {entry.describe()}")
            entries[entry.key] = entry
        return cls(path, entries)

    def with_entry(self, entry: Entry) -> Allowlist:
        """A copy with ``entry`` added (replacing any entry with the same key)."""
        return Allowlist(self.path, {**self.entries, entry.key: entry})

    def render(self) -> str:
        """Deterministic YAML: entries sorted by key, no timestamps, trailing newline."""
        body = {
            "version": FORMAT_VERSION,
            "entries": [self.entries[key].as_dict() for key in sorted(self.entries)],
        }
        dumped = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=1_000_000)
        return HEADER + dumped

    def save(self) -> None:
        write_text(self.path, self.render())


def _entry(path: Path, number: int, raw: object) -> Entry:
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: entry {number} must be a mapping")
    try:
        return Entry.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'entry'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"{path}: entry {number}: {problems}") from None


def allowed_by_baseline(finding: Finding, allowlist: Allowlist) -> bool:
    """Whether ``finding`` is allowed only through an entry ``contam-guard baseline`` wrote: not
    reviewed (``review --baseline`` walks these; scrub removes what they allow)."""
    if not finding.allowed or finding.allowed_by != ALLOWED_BY_ALLOWLIST:
        return False
    entry = allowlist.entries.get(key_of(finding))
    return entry is not None and entry.baseline is not None


def apply(
    report: Report, allowlist: Allowlist, today: dt.date, *, check_stale: bool, root: Path | None = None
) -> None:
    """Mark allowlisted findings allowed (and confirmed leaks confirmed); note expired and stale
    entries in ``report.notices``. ``check_stale`` is off for diff scans, which see only part of
    the data; with it on, an unused entry is called stale only when this scan read its files
    (``stale_notice``). ``root`` is the project root the entries' ``files`` are relative to
    (default: the current folder)."""
    used: set[Key] = set()
    updated: list[Finding] = []
    for finding in report.findings:
        entry = allowlist.entries.get(key_of(finding))
        if entry is None or entry.expired(today):
            updated.append(finding)
            continue
        used.add(entry.key)
        if entry.decision == LEAK:
            updated.append(replace(finding, confirmed=True, reason=entry.reason))
        elif finding.allowed:  # already allowed by the record's marker: keep that reason
            updated.append(finding)
        else:
            allowed = replace(finding, allowed=True, allowed_by=ALLOWED_BY_ALLOWLIST, reason=entry.reason)
            updated.append(allowed)
    report.findings = allow_pairs(updated)
    name = allowlist.path.name
    base = Path.cwd() if root is None else root
    scanned = {path for shown in report.result.files if (path := project_path(shown, base)) is not None}
    for entry in _sorted(allowlist.entries.values()):
        if entry.expired(today):
            after = (
                "`contam-guard review` asks about it again"
                if entry.decision == LEAK
                else "it no longer applies, and the finding is reported again"
            )
            report.notices.append(
                f"{name}: the {entry.kind} for {entry.describe()} expired on {entry.until}; {after}"
            )
        elif check_stale and entry.key not in used:
            notice = stale_notice(entry, scanned, base)
            if notice is not None:
                report.notices.append(f"{name}: {notice}")


PairId = tuple[int, str, int]
"""A (test item, training record) pair within one report: (item, source, record)."""


def pairs_of(finding: Finding) -> set[PairId]:
    return {(finding.item, pair.source, pair.record) for pair in finding.pairs}


def allowlisted_pairs(findings: Iterable[Finding]) -> dict[PairId, str]:
    """Every pair of a finding the allowlist allows as a false positive, with its reason."""
    found: dict[PairId, str] = {}
    for finding in findings:
        if finding.allowed and finding.allowed_by == ALLOWED_BY_ALLOWLIST:
            for pair in sorted(pairs_of(finding)):
                found.setdefault(pair, finding.reason or "")
    return found


def covered(finding: Finding, pairs: Mapping[PairId, str]) -> bool:
    """Whether ``finding`` is a warning about pairs that are all allowlisted already: its every
    listed pair, and no record it only counts (beyond ``--max-pairs-per-item``)."""
    mine = pairs_of(finding)
    unlisted = finding.unlisted is not None and finding.unlisted.records > 0
    return finding.action != "fail" and bool(mine) and not unlisted and mine <= pairs.keys()


def allow_pairs(findings: list[Finding]) -> list[Finding]:
    """Warnings on allowlisted pairs allowed too.

    A reviewer who marks a (test item, training record) pair a false positive has judged the
    text, not one rule: the other rules' warnings about the very same pair (a reworded score, a
    per-item rule this record alone feeds) would only repeat it on every scan, as warnings and
    annotations nobody acts on. Only warnings follow the pair: a failing rule's finding keeps its
    own entry, so a stricter rule turned on later is still reviewed; and a per-item warning that
    a new record feeds is about new data and shows again.
    """
    pairs = allowlisted_pairs(findings)
    if not pairs:
        return findings
    return [
        replace(f, allowed=True, allowed_by=ALLOWED_BY_ALLOWLIST, reason=pairs[min(pairs_of(f))])
        if not f.allowed and not f.confirmed and covered(f, pairs)
        else f
        for f in findings
    ]


def stale_notice(entry: Entry, scanned: set[str], root: Path) -> str | None:
    """What to say of an entry that matched nothing, or None when this scan did not read its
    data: some file it names was not scanned and still exists (the leak may be there).

    ``scanned``: the files read, relative to ``root``. A file named by the entry that no longer
    exists counts as read (its data is gone); an entry naming only such files says so.
    """
    what = f"the {entry.kind} for {entry.describe()}"
    fix = (
        "if the leak was removed (scrubbed), remove the entry"
        if entry.decision == LEAK
        else "remove it if the data it allowed is gone"
    )
    found = "is no longer found" if entry.decision == LEAK else "matches nothing"
    if not entry.files:
        return (
            f"{what} {found} in this scan (stale); the entry names no file, so it may belong to data "
            f"this scan did not read; {fix}"
        )
    gone = [name for name in entry.files if name not in scanned and not (root / name).exists()]
    if len(gone) == len(entry.files):
        return f"{what} names only files that no longer exist ({', '.join(gone)}) (stale); {fix}"
    if any(name not in scanned and name not in gone for name in entry.files):
        return None
    read = ", ".join(name for name in entry.files if name in scanned)
    return f"{what} {found} in {read} (stale); {fix}"


def _sorted(entries: Iterable[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: e.key)
