"""What makes the guard weaker: an old and a new manifest, config and allowlist compared.

Each function returns one plain sentence per change that lets more contamination through (or may:
a change whose direction cannot be told is listed too, so a reviewer looks at it). Changes that
only make the guard stricter (a rule enabled, a threshold lowered, a set added) are not listed.
Nothing here reads files or git: ``guard_changes`` gives it the two sides.

- Manifest: a set or view removed, fewer items in a set, a set registered for fewer rules, a
  set's own GPT-3 N raised, a view reading another field, looser template settings, two sets
  pointing at the same golden or binary files (or holding the same content), and for a keyed
  manifest read without its key, any change of a set's sealed settings.
- Config: a rule disabled, a failing rule made to warn, a threshold raised (a number that lets
  more through: N, a share, a run length; a probability lowered), any other rule setting changed,
  fewer fields read, inline allow markers turned on, the guard's folder or allowlist moved.
- Allowlist: more than ``BULK`` entries added (or made to allow, or renewed) in one change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from contam_guard.core.allowlist import FALSE_POSITIVE, Allowlist, Entry
from contam_guard.core.config import Config
from contam_guard.core.rules import gpt3
from contam_guard.io.manifest.model import GoldenSet, Manifest, is_derived

BULK = 10
"""Allowlist entries one change may add before a reviewer must look (a triage of a few findings
is the usual flow; dozens at once is how a leak is waved through)."""
RAISED_WEAKENS = frozenset({"n", "threshold", "min_run", "dirty", "not_clean"})
"""Rule settings that let more through when raised."""
LOWERED_WEAKENS = frozenset({"probability"})
"""... and when lowered (GPT-4's share of windows drawn)."""
STRICTER = {("enabled", False, True), ("action", "warn", "fail")}
"""(setting, old, new) changes that only make a rule stricter."""


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _weakens(name: str, old: object, new: object) -> bool:
    """Whether changing a rule setting from ``old`` to ``new`` may let more through."""
    if old == new or (name, old, new) in STRICTER:
        return False
    low, high = _number(old), _number(new)
    if low is not None and high is not None:
        if name in RAISED_WEAKENS:
            return high > low
        if name in LOWERED_WEAKENS:
            return high < low
    return True  # a mode, "auto", or a setting without a known direction: a reviewer decides


def config_changes(old: Config, new: Config) -> list[str]:
    found: list[str] = []
    old_rules, new_rules = old.rules.model_dump(), new.rules.model_dump()
    for rule, settings in old_rules.items():
        changed = new_rules.get(rule, {})
        for name, before in settings.items():
            after = changed.get(name)
            if not _weakens(name, before, after):
                continue
            if name == "enabled":
                found.append(f"rule {rule} disabled")
            elif name == "action":
                found.append(f"rule {rule} no longer fails a scan (action {before} -> {after})")
            else:
                verb = "raised" if _number(before) is not None and name in RAISED_WEAKENS else "changed"
                verb = "lowered" if name in LOWERED_WEAKENS and verb == "raised" else verb
                found.append(f"rule {rule}: {name} {verb} from {before} to {after}")
    if old.scan.fields != new.scan.fields and new.scan.fields:
        was = ", ".join(old.scan.fields) or "every string of every record"
        found.append(f"scan reads only the fields {', '.join(new.scan.fields)} (was {was})")
    if new.allowlist.markers and not old.allowlist.markers:
        found.append('records marked "contam_guard": "allow" are now allowed (allowlist.markers turned on)')
    if new.allowlist.file != old.allowlist.file:
        found.append(f"the allowlist moved from {old.allowlist.file} to {new.allowlist.file}")
    if new.guard_dir != old.guard_dir:
        found.append(
            f"the guard's folder moved from {old.guard_dir} to {new.guard_dir} (its manifest with it)"
        )
    return found


def allowlist_changes(old: Allowlist, new: Allowlist, bulk: int = BULK) -> list[str]:
    """One sentence when more than ``bulk`` entries allow more than before, or when any of them
    is a baseline entry (``contam-guard baseline``: findings allowed without a review, however
    few)."""
    opened = [entry for key, entry in sorted(new.entries.items()) if _opens(old.entries.get(key), entry)]
    baseline = [entry for entry in opened if entry.baseline is not None]
    if len(opened) <= bulk and not baseline:
        return []
    shown = ", ".join(entry.describe() for entry in opened[:5])
    more = f" and {len(opened) - 5} more" if len(opened) > 5 else ""
    why = f"{len(baseline)} of them baseline entries, not reviewed" if baseline else f"more than {bulk}"
    return [f"{len(opened)} allowlist entries added or widened in one change ({why}): {shown}{more}"]


def _opens(before: Entry | None, after: Entry) -> bool:
    """Whether ``after`` allows what ``before`` did not: new, turned into a false positive, or
    valid for longer."""
    if after.decision != FALSE_POSITIVE:
        return False
    if before is None or before.decision != FALSE_POSITIVE:
        return True
    return before.until is not None and (after.until is None or after.until > before.until)


def _setting_n(config: Config, golden: GoldenSet) -> object:
    """The GPT-3 N the config gives a set without its own: a number, or under ``auto`` the
    set's own 5th-percentile length (the smallest over its views, the N its items meet first)."""
    n = config.rules.of("gpt3").model_dump().get("n")
    if n != "auto":
        return n
    counts = [view.word_counts for name, view in golden.views.items() if not is_derived(name)]
    return min((gpt3.auto_n(c) for c in counts), default=gpt3.AUTO_MAX)


def manifest_changes(
    old: Manifest,
    new: Manifest | None,
    raw: tuple[Mapping[str, Any], Mapping[str, Any]],
    configs: tuple[Config, Config],
) -> list[str]:
    """Compare two manifests (``raw``: their index JSON; ``configs``: the config beside each, for
    the GPT-3 N a set without its own uses)."""
    if new is None:
        return ["the manifest was removed (every registered set with it)"]
    found: list[str] = []
    old_sets, new_sets = _sets(raw[0]), _sets(raw[1])
    summaries = new.summaries
    for name, before in old.summaries.items():
        after = summaries.get(name)
        if after is None:
            found.append(f"set {name!r} removed ({before.items} items)")
            continue
        if after.items < before.items:
            found.append(f"set {name!r} holds fewer items ({before.items} -> {after.items})")
        if old.sealed or new.sealed:
            if old_sets.get(name, {}).get("sealed") != new_sets.get(name, {}).get("sealed"):
                found.append(
                    f"set {name!r}: its sealed settings changed (views, rules, N or files); set the "
                    "manifest's key to list what changed"
                )
            continue
        found += _set_changes(name, old.sets[name], new.sets[name], configs)
    found += _shared(new, new_sets, old, old_sets)
    return found


def _sets(raw: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    sets = raw.get("sets")
    if not isinstance(sets, dict):
        return {}
    return {str(k): v for k, v in sets.items() if isinstance(v, dict)}


def _set_changes(name: str, old: GoldenSet, new: GoldenSet, configs: tuple[Config, Config]) -> list[str]:
    # Derived views follow their field, the rules and the spec (``upgrade`` renames them): the
    # set's own views and rules are what a reviewer must see.
    views = ({v for v in old.views if not is_derived(v)}, {v for v in new.views if not is_derived(v)})
    found = [f"set {name!r}: view {view!r} removed" for view in sorted(views[0] - views[1])]
    for view in sorted(views[0] & views[1]):
        if old.views[view].field != new.views[view].field:
            found.append(
                f"set {name!r}: view {view!r} reads field {new.views[view].field!r} "
                f"(was {old.views[view].field!r})"
            )
    dropped = sorted(set(old.rules) - set(new.rules))
    if dropped:
        found.append(f"set {name!r} no longer registered for rule(s) {', '.join(dropped)}")
    if old.n != new.n:
        before = old.n if old.n is not None else _setting_n(configs[0], old)
        after = new.n if new.n is not None else _setting_n(configs[1], new)
        if _weakens("n", before, after):
            found.append(f"set {name!r}: GPT-3 N raised from {before} to {after}")
    if old.templates is not None and new.templates is not None:
        share, items = (
            (old.templates.share, new.templates.share),
            (old.templates.min_items, new.templates.min_items),
        )
        if share[1] < share[0] or items[1] < items[0]:
            found.append(
                f"set {name!r}: more n-grams count as template and are ignored (share {share[0]} -> "
                f"{share[1]}, min items {items[0]} -> {items[1]})"
            )
    return found


def _shared(
    new: Manifest, new_raw: Mapping[str, Any], old: Manifest, old_raw: Mapping[str, Any]
) -> list[str]:
    """Sets of ``new`` pointing at the same files or content that did not in ``old``."""
    before = _sharing(old, old_raw)
    return [
        f"sets {', '.join(repr(n) for n in names)} point at the same {what}"
        for (what, names) in sorted(_sharing(new, new_raw).items())
        if (what, names) not in before.items()
    ]


def _sharing(manifest: Manifest, raw: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """What several sets share -> their names: golden files, binary files, content digests."""
    owners: dict[str, set[str]] = defaultdict(set)
    for name, entry in raw.items():
        data = entry.get("data")
        for path in data if isinstance(data, dict) else ():
            owners[f"binary file {path}"].add(name)
    for name, summary in manifest.summaries.items():
        owners[f"content (digest {summary.digest[:12]})"].add(name)
    if not manifest.sealed:
        for name, golden in manifest.sets.items():
            for golden_file in golden.files:
                owners[f"golden file {golden_file.path}"].add(name)
    return {what: tuple(sorted(names)) for what, names in owners.items() if len(names) > 1}


def listed(changes: Iterable[str], file: str) -> list[tuple[str, str]]:
    """``changes`` of ``file`` as (file, change) pairs."""
    return [(file, change) for change in changes]


__all__ = ["BULK", "allowlist_changes", "config_changes", "listed", "manifest_changes"]
