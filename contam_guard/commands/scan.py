"""``contam-guard scan``: check training files against every registered set."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contam_guard.atomic import write_text
from contam_guard.commands.common import display_path, load_manifest
from contam_guard.commands.golden import golden_lookup
from contam_guard.config import LoadedConfig, with_rule_overrides
from contam_guard.engine.index import ManifestIndex
from contam_guard.findings import evaluate
from contam_guard.keys import key_for
from contam_guard.readers import ReadOptions, detect_format
from contam_guard.reporting import console, html, json_report, markdown, tables
from contam_guard.scan import Source, check_readable, scan


@dataclass(frozen=True)
class ScanOutputs:
    review: Path | None = None
    review_json: Path | None = None
    items_csv: Path | None = None
    pairs_csv: Path | None = None
    review_html: Path | None = None


def expand(paths: list[Path]) -> list[Source]:
    """Files as given; folders walked (sorted) for the data files they hold."""
    sources: list[Source] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and detect_format(p) is not None)
            sources += [Source(p, display_path(p)) for p in found]
        else:
            sources.append(Source(path, display_path(path)))
    return sources


def run(
    loaded: LoadedConfig,
    paths: list[Path],
    read: ReadOptions,
    outputs: ScanOutputs,
    *,
    rule_overrides: dict[str, dict[str, object]],
    exit_zero: bool,
    show_golden: bool,
    manifest_path: Path | None = None,
) -> int:
    config = with_rule_overrides(loaded.config, rule_overrides)
    _, manifest = load_manifest(loaded, manifest_path)
    key = key_for(manifest, config.key_env)
    sources = expand(paths)
    check_readable(sources)
    index = ManifestIndex.from_manifest(manifest)
    if not manifest.sets:
        console.notice("no golden sets are registered: nothing to match against")
    with console.progress(None) as bar:
        task = bar.add_task("scan", total=None)
        result = scan(
            index,
            sources,
            read,
            key=key,
            windows=config.rules.gpt4.enabled,
            batch_chars=config.scan.batch_chars,
            on_chars=lambda n: bar.advance(task, n),
        )
    report = evaluate(result, config.rules, exit_zero=exit_zero)
    golden = golden_lookup(manifest, loaded.root, key) if show_golden else None
    if outputs.review:
        write_text(outputs.review, markdown.render(report, golden))
    if outputs.review_json:
        write_text(outputs.review_json, json_report.render(report, golden))
    if outputs.review_html:
        write_text(outputs.review_html, html.render(report, golden))
    if outputs.items_csv:
        write_text(outputs.items_csv, tables.items_csv(report))
    if outputs.pairs_csv:
        write_text(outputs.pairs_csv, tables.pairs_csv(report))
    console.scan_summary(report)
    return int(report.return_code)
