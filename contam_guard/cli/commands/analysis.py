"""``contam-guard sweep`` and ``contam-guard dupes``: the numbers behind the verdicts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from contam_guard.cli.commands.common import load_manifest
from contam_guard.cli.overlap_guard import check_sweep
from contam_guard.core.config import LoadedConfig, Rules, with_rule_overrides
from contam_guard.core.dupes import self_match, template_note
from contam_guard.core.result import ScanResult
from contam_guard.core.rules import RULES
from contam_guard.core.verdicts import evaluate
from contam_guard.engines.pipeline import ScanRequest, execute
from contam_guard.errors import ConfigError, ContamGuardError, ExitCode, ManifestError
from contam_guard.io.atomic import write_bytes, write_text
from contam_guard.report import console
from contam_guard.report.analysis import DEFAULT_NS, sweep, sweep_csv
from contam_guard.report.outputs import OUTPUTS, Outputs


def _write_sweep(
    result: ScanResult,
    rules: Rules,
    ns: tuple[int, ...],
    title: str,
    csv_path: Path | None,
    plot_path: Path | None,
) -> None:
    rows = sweep(result, rules, ns)
    console.sweep_table(rows, title)
    if csv_path:
        write_text(csv_path, sweep_csv(rows))
    if plot_path:
        from contam_guard.report.plot import sweep_png  # noqa: PLC0415 (the optional [plot] extra)

        marks = [RULES[name].mark(rules.of(name)) for name in RULES]
        write_bytes(plot_path, sweep_png(rows, sorted(mark for mark in marks if mark is not None)))
        console.info(f"wrote {plot_path}")


def _check_plotting(plot_path: Path | None) -> None:
    """``--plot`` needs matplotlib (the ``[plot]`` extra): say so before the scan, not after it."""
    if plot_path is not None and importlib.util.find_spec("matplotlib") is None:
        raise ContamGuardError(
            "--plot needs matplotlib, which is not installed",
            hint="pip install 'contam-guard[plot]'",
        )


def run_sweep(
    loaded: LoadedConfig,
    request: ScanRequest,
    ns: tuple[int, ...] = DEFAULT_NS,
    *,
    csv_path: Path | None = None,
    plot_path: Path | None = None,
) -> int:
    """Scan once, as ``scan`` would (the same files, options and rules), and print the
    any-hit-at-n shares and each rule's flagged share per view."""
    _check_plotting(plot_path)
    check_sweep(loaded, request.paths, request.manifest_path, csv=csv_path, plot=plot_path)
    result = execute(loaded, request).report.result
    title = f"Share of test items flagged ({result.records} records scanned)"
    rules = with_rule_overrides(loaded.config, request.rule_overrides).rules
    _write_sweep(result, rules, ns, title, csv_path, plot_path)
    return ExitCode.CLEAN


def run_dupes(
    loaded: LoadedConfig,
    name: str,
    view: str | None,
    ns: tuple[int, ...] = DEFAULT_NS,
    *,
    outputs: Outputs | None = None,
    csv_path: Path | None = None,
    plot_path: Path | None = None,
    manifest_path: Path | None = None,
) -> int:
    """A registered set against its own other items; lists the pairs each rule flags."""
    outputs = outputs or Outputs()
    _check_plotting(plot_path)
    files = {option: path for option, path in outputs.by_option().items() if option != "--output"}
    check_sweep(loaded, [], manifest_path, csv=csv_path, plot=plot_path, **files)
    _, manifest = load_manifest(loaded, manifest_path)
    if name not in manifest.sets:
        known = ", ".join(sorted(manifest.sets)) or "none"
        raise ManifestError(f"no set named {name!r} (registered: {known})")
    golden = manifest.sets[name]
    views = [view] if view else sorted(v for v in golden.views if "~" not in v)  # not derived
    if len(views) > 1 and (outputs.files or csv_path or plot_path):
        raise ConfigError(
            f"set {name!r} has {len(views)} views ({', '.join(views)}); its files are one view's",
            hint="pass --view to choose one",
        )
    rules = loaded.config.rules
    for view_name in views:
        result = self_match(name, golden, view_name)
        console.info(template_note(name, golden, view_name))
        report = evaluate(result, rules, exit_zero=True)
        _write_sweep(
            result, rules, ns, f"{name}:{view_name} against its own other items", csv_path, plot_path
        )
        for finding in report.findings:
            if finding.rule == "gpt3":  # the pairs themselves: one problem asked twice
                pair = finding.pairs[0]
                console.info(
                    f"item {finding.item_id} (#{finding.test_index}) and {pair.source} "
                    f"(#{pair.record}): shared run of {pair.longest_run} words"
                )
        for output_name, path in outputs.files.items():
            write_text(path, OUTPUTS[output_name].render(report, None))
    return ExitCode.CLEAN
