"""What a failing scan tells its reader to do next (the last lines of its summary).

A refusal that only says "no" leaves a new user stuck; these lines name the commands that
settle each finding: read the review, allowlist a reviewed false positive, scrub a real leak,
and see the golden text where the golden file is at hand.
"""

from __future__ import annotations

import json
import shlex
from pathlib import PurePath
from typing import TYPE_CHECKING

from contam_guard.cli.overlap_guard import registered_golden_files
from contam_guard.core.config import with_rule_overrides
from contam_guard.core.rules import RULES
from contam_guard.errors import ExitCode, InputError
from contam_guard.io.paths import display_path
from contam_guard.report import console

if TYPE_CHECKING:
    from contam_guard.core.config import LoadedConfig
    from contam_guard.core.verdicts import Report
    from contam_guard.engines.pipeline import ScanRequest
    from contam_guard.report.outputs import Outputs


def _quoted(paths: list[str]) -> str:
    return " ".join(shlex.quote(path) for path in paths)


def clean_name(name: str) -> str:
    """``data/train.jsonl.gz`` -> ``data/train.clean.jsonl.gz``: where a scrubbed copy could go."""
    folder, _, base = name.rpartition("/")
    stem, dot, rest = base.partition(".")
    cleaned = f"{stem}.clean{dot}{rest}" if dot and stem else f"{base}.clean"
    return f"{folder}/{cleaned}" if folder else cleaned


def steps(loaded: LoadedConfig, request: ScanRequest, outputs: Outputs, report: Report) -> list[str]:
    """The next steps for a scan that fails (exit 1) on findings; none for any other outcome (a
    scan failing only because the range weakens the guard says what to do in its verdict)."""
    if report.return_code != ExitCode.CONTAMINATED or not report.failing:
        return []
    lines: list[str] = []
    reviews = outputs.reviews()
    if reviews:
        lines.append(f"read each pair in {', '.join(str(p) for p in reviews)}")
    else:
        lines.append("see each pair side by side: add --review review.md (or --review-html review.html)")
    if request.changes is not None:
        scope = "--staged" if request.changes.staged else f"--diff {shlex.quote(request.changes.describe())}"
        args = " ".join(filter(None, [scope, _quoted([str(p) for p in request.paths])]))
    else:
        args = _quoted([str(p) for p in request.paths])
    lines.append(
        f"a false positive (your own worked example, a public quote)? `contam-guard review {args}` "
        f"walks each finding and records your decision in {display_path(loaded.allowlist_path)}; "
        "commit it"
    )
    lines += scrub_steps(sorted({pair.source for finding in report.failing for pair in finding.pairs}))
    if not request.show_golden:
        failing_sets = {finding.target.set_name for finding in report.failing}
        manifest_path = request.manifest_path or loaded.manifest_path
        present = sorted(
            display_path(path)
            for path, name in registered_golden_files(manifest_path, loaded.root).items()
            if name in failing_sets and path.is_file()
        )
        if present:
            lines.append(
                f"compare with the test item itself: add --show-golden (its golden file {present[0]} is here)"
            )
    return lines


def scrub_steps(sources: list[str]) -> list[str]:
    """How to remove a real leak from each of ``sources``: ``scrub`` for the formats it writes
    back; for the others, what scrub would answer, and for tables and JSON arrays a conversion
    to JSONL (with pandas) before scrub, as commands that run as shown."""
    if not sources:
        return []
    # scrub's package is imported only here: a scan with nothing to scrub never needs it
    from contam_guard.core.scrub.lines import pandas_reader, scrub_format

    fine: list[str] = []
    refused: dict[str, list[tuple[str, InputError]]] = {}
    for source in sources:
        try:
            scrub_format(PurePath(source), source)
        except InputError as exc:
            refused.setdefault(exc.problem, []).append((source, exc))
        else:
            fine.append(source)
    lines = []
    if fine:
        lines.append(f"a real leak? remove it before training: {_scrub_command(fine)} (or --in-place)")
    for problem, found in refused.items():
        first, error = found[0]
        names = _listed([source for source, _ in found])
        reader = pandas_reader(PurePath(first))
        if reader is None:
            lines.append(f"a real leak in {names}? {problem}: {error.hint or 'convert it to JSONL first'}")
            continue
        converted = f"{first}.jsonl"
        # Python's double-quoted literals (JSON's are valid Python): the shell quotes stay plain.
        code = (
            f"import pandas as pd; f = {json.dumps(first)}; {reader.replace(chr(39), chr(34))}"
            f'.to_json({json.dumps(converted)}, orient="records", lines=True, force_ascii=False)'
        )
        each = " (the same for each file)" if len(found) > 1 else ""
        lines.append(
            f"a real leak in {names}? {problem}: convert to JSONL first (needs pandas){each}: "
            f"`python -c {shlex.quote(code)}`, then {_scrub_command([converted])}"
        )
    return lines


def _scrub_command(sources: list[str]) -> str:
    target = f"-o {shlex.quote(clean_name(sources[0]))}" if len(sources) == 1 else "-o clean/"
    return f"`contam-guard scrub {_quoted(sources)} {target} --log removed.jsonl`"


def _listed(names: list[str], shown: int = 3) -> str:
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def unreachable_rules(loaded: LoadedConfig, request: ScanRequest, report: Report) -> list[str]:
    """A notice when no enabled rule, or no failing rule, can fire on any registered item (every
    rule disabled, or each asks for more words or characters than the longest item has): such a
    scan finds nothing, or passes, whatever the data holds, and must say so."""
    index = report.result.index
    if index.items == 0:
        return []  # "no golden sets are registered" is said already
    rules = with_rule_overrides(loaded.config, request.rule_overrides).rules
    words, alnum = index.word_counts, index.alnum_counts
    longest = int(words.max())
    reasons = {
        name: (bool(rule.sees(index, rules.of(name)).any()), rule.needs(rules.of(name)))
        for name, rule in RULES.items()
    }
    enabled = rules.enabled()
    failing = [name for name in enabled if rules.of(name).action == "fail"]
    if not enabled:
        return ["every rule is disabled: this scan cannot find anything"]
    longest_item = (
        f"the longest registered item has {longest} words and {int(alnum.max())} letters and digits"
    )
    if not any(reasons[name][0] for name in enabled):
        needs = "; ".join(reasons[name][1] for name in enabled)
        return [f"no enabled rule can fire: {needs}, and {longest_item}; this scan cannot find anything"]
    if failing and not any(reasons[name][0] for name in failing):
        needs = "; ".join(reasons[name][1] for name in failing)
        return [f"no failing rule can fire: {needs}, and {longest_item}; this scan can only pass"]
    return []


def show(lines: list[str], outputs: Outputs) -> None:
    """Print a failing scan's next steps where its summary went (stdout, or stderr when stdout
    carries a machine format)."""
    if lines:
        console.next_steps(lines, to_stderr=outputs.summary_to_stderr)


__all__ = ["clean_name", "scrub_steps", "show", "steps", "unreachable_rules"]
