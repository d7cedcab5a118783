"""``contam-guard remove``, ``sets`` and ``verify``: look after the manifest.

None of these hashes text, so none imports the text engine: ``verify`` runs in a pre-commit
hook on every commit and must start fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from contam_guard.cli.commands.common import load_manifest
from contam_guard.core.config import LoadedConfig, Rules
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.rules import RULES, gpt3
from contam_guard.errors import ExitCode, ManifestError
from contam_guard.io.keys import key_for
from contam_guard.io.manifest import disk, store
from contam_guard.io.manifest.model import GoldenSet, Manifest, View, is_derived
from contam_guard.io.manifest.record import set_digest
from contam_guard.report import console


def remove(loaded: LoadedConfig, name: str, manifest_path: Path | None = None) -> int:
    path = manifest_path or loaded.manifest_path
    with store.locked(path):
        path, manifest = load_manifest(loaded, path)
        if name not in manifest.set_names:
            known = ", ".join(manifest.set_names) or "none"
            raise ManifestError(f"{path}: no set named {name!r} (registered: {known})")
        sets = {k: v for k, v in manifest.sets.items() if k != name}
        store.save(path, manifest.model_copy(update={"sets": sets}))
    console.info(f"removed {name}")
    return ExitCode.CLEAN


MEASURED = ("gpt3", "whole", "palm", "llama2", "gpt4")
"""The rules measured on a view's own words and characters, one ``sets`` column each (the
rewording rules read derived views, whose items are the same)."""


@dataclass(frozen=True)
class TooShort:
    """Per view: how many items each rule cannot measure, the GPT-3 rule's N there, and how
    many items no failing rule can measure (a copy of one cannot fail a scan)."""

    counts: dict[str, int]
    n: int | None
    unfailable: int


def too_short(manifest: Manifest, rules: Rules) -> dict[tuple[str, str], TooShort]:
    """How many items of each view each rule cannot see (too few words or characters)."""
    index = ManifestIndex.from_manifest(manifest)
    sees = {name: rule.sees(index, rules.of(name)) for name, rule in RULES.items()}
    any_failing = np.zeros(index.items, dtype=np.bool_)
    for name in _failing(rules):
        any_failing |= sees[name]
    n = gpt3.thresholds(index, gpt3.RULE.settings_of(rules))
    out = {}
    for target in index.targets:
        span = slice(target.first_item, target.first_item + target.items)
        out[(target.set_name, target.view)] = TooShort(
            counts={name: int(np.sum(~seen[span])) for name, seen in sees.items()},
            n=int(n[span][0]) if target.items else None,
            unfailable=int(np.sum(~any_failing[span])),
        )
    return out


def _failing(rules: Rules) -> list[str]:
    return [name for name in rules.enabled() if rules.of(name).action == "fail"]


COLUMNS = [
    "set",
    "version",
    "items",
    "set bytes",
    "view",
    "view bytes",
    "too short: gpt3",
    *MEASURED[1:],
    "template",
    "digest",
]


def sets(loaded: LoadedConfig, manifest_path: Path | None = None) -> int:
    """The sets, their versions, items and bytes on disk (per set and per view), and how many
    items each rule cannot see; of a keyed manifest read without its key, what the index shows."""
    path, manifest = load_manifest(loaded, manifest_path)
    summaries = manifest.summaries
    rows: list[list[str]] = []
    footer: list[str] = []
    if manifest.sealed:
        for name in manifest.set_names:
            s = summaries[name]
            rows.append(
                [
                    name,
                    str(s.version),
                    str(s.items),
                    f"{sum(s.data.values()):,}",
                    "(sealed)",
                    "",
                    *([""] * len(MEASURED)),
                    "",
                    s.digest[:12],
                ]
            )
        footer.append(f"keyed: views, counts and rules are sealed; set ${loaded.config.key_env} to see them")
    else:
        rules = loaded.config.rules
        shorts = too_short(manifest, rules)
        failing = _failing(rules)
        unfailable: list[str] = []
        for name in manifest.set_names:
            golden, s = manifest.sets[name], summaries[name]
            set_bytes = f"{sum(s.data.values()):,}" if s.data else "—"
            for view in sorted(golden.views):
                if is_derived(view):  # a rewording rule's derived view (reword.views)
                    continue
                short = shorts[(name, view)]
                view_bytes = s.views.get(view) if s.views is not None else None
                sizes = [set_bytes, view, f"{view_bytes:,}" if view_bytes is not None else "—"]
                short_counts = [_short_cell(rule, short, golden) for rule in MEASURED]
                if short.unfailable:
                    unfailable.append(
                        f"{name}:{view}: {short.unfailable} item(s) too short for every failing rule "
                        f"({', '.join(failing) or 'none is on'}): a copy of one cannot fail a scan"
                    )
                marks = golden.views[view].templates
                template = f"{marks.ngrams} ({marks.top})" if golden.templates is not None else "not marked"
                rows.append(
                    [
                        name,
                        str(golden.version),
                        str(golden.items),
                        *sizes,
                        *short_counts,
                        template,
                        golden.digest[:12],
                    ]
                )
            if not golden.has_windows:
                listed = ",".join(golden.rules)
                footer.append(
                    f"{name}: registered for {listed}: no window hashes stored, so gpt4 cannot see it "
                    f"(to store them: contam-guard register {name} FILE... --rules {listed},gpt4)"
                )
    if not manifest.sealed and manifest.set_names:
        needs = "; ".join(RULES[rule].needs(rules.of(rule)) for rule in MEASURED)
        footer.append(
            f"too short: the items each rule cannot measure ({needs}; runs are measured through "
            "5-grams, so no run rule measures an item under 5 words); N: the gpt3 rule's N for the view"
        )
        footer.extend(unfailable)
        footer.append(
            "template: the view's template 5-grams (in brackets: how many items the most common is in); "
            "runs of them alone are ignored (contam-guard register NAME FILE... --template-share, "
            "--template-min-items)"
        )
    if rows:
        total = sum(sum(s.data.values()) for s in summaries.values()) + path.stat().st_size
        count = sum(len(s.data) for s in summaries.values())
        footer.append(f"{path}: {total:,} bytes in all (the index and {count} set files)")
    console.sets_table(COLUMNS, rows, footer)
    return ExitCode.CLEAN


def _short_cell(rule: str, short: TooShort, golden: GoldenSet) -> str:
    if rule == "gpt4" and not golden.has_windows:
        return "not stored"
    count = str(short.counts[rule])
    return f"{count} (N={short.n})" if rule == "gpt3" and short.n is not None else count


def verify(loaded: LoadedConfig, manifest_path: Path | None = None) -> int:
    """Load with every check (every command runs those: the index against each set's record, a
    keyed index's MAC), then check every file's digest (xxh3-128 of its bytes) against the
    index, every table's entries, each set's digest against its ids and views, and for a keyed
    manifest that the key in the environment is the one it was built with (a sealed file that
    does not open with it is named)."""
    path, manifest = load_manifest(loaded, manifest_path)
    hint = store.RESTORE_HINT.format(path=path)
    # A keyed manifest is only usable with its key: without this check the verify hook passes
    # while every scan fails (wrong key) or cannot run (no key).
    key_for(manifest, loaded.config.key_env)
    problems = disk.check_files(manifest)
    if problems:
        raise ManifestError(
            f"{problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""), hint=hint
        )
    for name, golden in manifest.sets.items():
        for view_name, view in golden.views.items():
            problem = _view_problem(view, golden)
            if problem is not None:
                raise ManifestError(f"{path}: set {name!r} view {view_name!r}: {problem}", hint=hint)
        views = {view_name: view.digest for view_name, view in golden.views.items()}
        if set_digest(golden.ids, golden.id_field, views, golden.rules) != golden.digest:
            raise ManifestError(
                f"{path}: set {name!r}: the ids and views do not match the set's digest", hint=hint
            )
    for stray in disk.unlisted_files(manifest):
        console.notice(f"{stray}: not part of the manifest (left by an interrupted write?); remove it")
    keyed = f"keyed, ${loaded.config.key_env} matches" if manifest.key_check else "unkeyed"
    files = f", {sum(len(s.data) for s in manifest.summaries.values())} files"
    console.info(
        f"{path}: OK (schema {manifest.schema_version}, {len(manifest.sets)} set(s){files}, {keyed})"
    )
    return ExitCode.CLEAN


def _view_problem(view: View, golden: GoldenSet) -> str | None:
    """What is wrong with a view's stored data (None: nothing)."""
    data = view.data
    windows = view.windows
    for label, table in (("5-gram", data.grams), ("window", windows)):
        problem = table.deep_check() if table is not None else None
        if problem is not None:
            return f"its {label} table: {problem}"
    if view.computed_tables_digest() != view.tables_digest:
        return "its tables do not hold what its index records (the hashes do not match)"
    payloads = data.grams.all_payloads.astype(np.int64)
    if not np.array_equal(np.sort(payloads), np.arange(payloads.size)):
        return "its 5-gram table does not hold each 5-gram once"
    if windows is not None:
        per_item = np.bincount(windows.all_payloads.astype(np.int64), minlength=golden.items)
        if per_item.size != golden.items or not np.array_equal(per_item, view.window_counts):
            return "its window table does not hold each item's windows"
    return None
