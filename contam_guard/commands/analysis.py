"""``contam-guard sweep`` and ``contam-guard dupes``: the numbers behind the verdicts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from contam_guard.analysis import DEFAULT_NS, sweep, sweep_csv
from contam_guard.atomic import write_bytes, write_text
from contam_guard.commands.common import load_manifest
from contam_guard.commands.scan import expand
from contam_guard.config import LoadedConfig
from contam_guard.dupes import self_match
from contam_guard.engine.index import ManifestIndex
from contam_guard.errors import ContamGuardError, ExitCode, ManifestError
from contam_guard.findings import evaluate
from contam_guard.keys import key_for
from contam_guard.overlap_guard import check_sweep
from contam_guard.readers import ReadOptions
from contam_guard.reporting import console, markdown, tables
from contam_guard.scan import ScanResult, check_readable, scan


def _write_sweep(
    result: ScanResult,
    loaded: LoadedConfig,
    ns: tuple[int, ...],
    title: str,
    csv_path: Path | None,
    plot_path: Path | None,
) -> None:
    rows = sweep(result, loaded.config.rules, ns)
    console.sweep_table(rows, title)
    if csv_path:
        write_text(csv_path, sweep_csv(rows))
    if plot_path:
        from contam_guard.reporting.plot import sweep_png  # noqa: PLC0415 (the optional [plot] extra)

        write_bytes(plot_path, sweep_png(rows))
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
    paths: list[Path],
    read: ReadOptions,
    ns: tuple[int, ...] = DEFAULT_NS,
    *,
    csv_path: Path | None = None,
    plot_path: Path | None = None,
    manifest_path: Path | None = None,
) -> int:
    """Scan once and print the any-hit-at-n shares and each rule's flagged share per view."""
    _check_plotting(plot_path)
    check_sweep(loaded, paths, manifest_path, csv=csv_path, plot=plot_path)  # issue 11: outputs vs inputs
    _, manifest = load_manifest(loaded, manifest_path)
    key = key_for(manifest, loaded.config.key_env)
    sources = expand(paths)
    check_readable(sources)
    result = scan(
        ManifestIndex.from_manifest(manifest),
        sources,
        read,
        key=key,
        batch_chars=loaded.config.scan.batch_chars,
    )
    title = f"Share of test items flagged ({result.records} records scanned)"
    _write_sweep(result, loaded, ns, title, csv_path, plot_path)
    return ExitCode.CLEAN


def run_dupes(
    loaded: LoadedConfig,
    name: str,
    view: str | None,
    ns: tuple[int, ...] = DEFAULT_NS,
    *,
    review: Path | None = None,
    items_csv: Path | None = None,
    pairs_csv: Path | None = None,
    csv_path: Path | None = None,
    plot_path: Path | None = None,
    manifest_path: Path | None = None,
) -> int:
    """A registered set against its own other items; lists the pairs each rule flags."""
    _check_plotting(plot_path)
    outputs = dict(csv=csv_path, plot=plot_path, review=review, items_csv=items_csv, pairs_csv=pairs_csv)
    check_sweep(loaded, [], manifest_path, **outputs)  # issue 11: outputs never replace inputs
    _, manifest = load_manifest(loaded, manifest_path)
    if name not in manifest.sets:
        known = ", ".join(sorted(manifest.sets)) or "none"
        raise ManifestError(f"no set named {name!r} (registered: {known})")
    golden = manifest.sets[name]
    views = [view] if view else sorted(golden.views)
    rules = loaded.config.rules
    for view_name in views:
        result = self_match(name, golden, view_name)
        report = evaluate(result, rules, exit_zero=True)
        _write_sweep(
            result, loaded, ns, f"{name}:{view_name} against its own other items", csv_path, plot_path
        )
        for finding in report.findings:
            if finding.rule == "gpt3":
                pair = finding.pairs[0]
                console.info(
                    f"item {finding.item_id} (#{finding.test_index}) and {pair.source} "
                    f"(#{pair.record}): shared run of {pair.longest_run} words"
                )
        if review:
            write_text(review, markdown.render(report))
        if items_csv:
            write_text(items_csv, tables.items_csv(report))
        if pairs_csv:
            write_text(pairs_csv, tables.pairs_csv(report))
    return ExitCode.CLEAN
