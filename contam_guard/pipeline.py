"""One pipeline for every front end: ``prepare``, read the sources, scan, ``finish``.

``scan``, ``review`` and ``sweep`` (and ``--engine spark``, which swaps only the scan step) run
the same steps in the same order, so that they read the same files and reach the same verdicts:

1. ``prepare``: the settings with the command line's rule overrides, the manifest (loaded once),
   its key and index, and the files never to scan (the guard's folder, the golden files);
2. ``sources``: the files to read (``contam_guard.sources``: paths walked, or a git range);
3. an engine turns them into a ``ScanResult`` (``scan_local``: one process or ``--jobs``;
   ``commands.spark_scan.scan_on_spark``);
4. ``finish``: redact the snippets, apply the rules, the records' markers and the allowlist,
   and look up golden text when asked (``--show-golden``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from contam_guard.allowlist import Allowlist, apply
from contam_guard.commands.common import load_manifest
from contam_guard.config import Config, LoadedConfig, with_rule_overrides
from contam_guard.engine.index import ManifestIndex
from contam_guard.engine.pairs import run_span
from contam_guard.engine.scanner import ScanResult, Snippet, Source, cap_pairs, check_readable, scan
from contam_guard.keys import key_for
from contam_guard.manifest.model import Manifest
from contam_guard.readers import ReadOptions
from contam_guard.reporting import console
from contam_guard.sources import Excluded, sources
from contam_guard.text.hashing import HashKey
from contam_guard.verdicts import Report, evaluate, span_digest

if TYPE_CHECKING:
    from contam_guard import git
    from contam_guard.reporting.markdown import GoldenText


@dataclass(frozen=True)
class ScanRequest:
    """What a scan was asked to do (the command line's options, gathered)."""

    paths: list[Path]
    read: ReadOptions
    rule_overrides: dict[str, dict[str, object]] = field(default_factory=dict)
    exit_zero: bool = False
    show_golden: bool = False
    manifest_path: Path | None = None
    changes: git.Range | None = None
    """Scan what this range (or the index) adds instead of whole files."""
    use_allowlist: bool = True
    """False (``--no-allowlist``): ignore the allowlist and the records' inline markers."""
    jobs: int = 1
    """Worker processes (``--jobs``); large JSONL/text files are split into windows."""
    skip_unreadable: bool = False
    """Note unreadable files in the summary and go on, instead of exit 2 (``--skip-unreadable``)."""
    redact_pii: bool = False
    """Mask e-mail addresses, phone numbers, IPs and keys in training-side snippets."""
    index: Path | None = None
    """``--index DIR``: count the records of that search index holding each shared run."""
    max_pairs_per_item: int | None = None
    """Training records listed per test item, the rest counted (``--max-pairs-per-item``; 0: all;
    None: the ``scan.max_pairs_per_item`` setting)."""

    def max_pairs(self, config: Config) -> int:
        given = self.max_pairs_per_item
        return config.scan.max_pairs_per_item if given is None else given


@dataclass(frozen=True)
class Prepared:
    """Everything a scan needs before it reads a byte."""

    loaded: LoadedConfig
    config: Config
    """The settings with the command line's rule overrides."""
    manifest_path: Path
    manifest: Manifest
    key: HashKey | None
    index: ManifestIndex
    excluded: Excluded


@dataclass(frozen=True)
class ScanRun:
    report: Report
    golden: GoldenText | None
    allowlist: Allowlist


Engine = Callable[[Prepared, ScanRequest, list[Source]], ScanResult]


def prepare(loaded: LoadedConfig, request: ScanRequest) -> Prepared:
    """Settings, manifest, key, index and exclusions (step 1)."""
    config = with_rule_overrides(loaded.config, request.rule_overrides)
    path, manifest = load_manifest(loaded, request.manifest_path)
    if not manifest.sets:
        console.notice("no golden sets are registered: nothing to match against")
    return Prepared(
        loaded=loaded,
        config=config,
        manifest_path=path,
        manifest=manifest,
        key=key_for(manifest, config.key_env),
        index=ManifestIndex.from_manifest(manifest),
        excluded=Excluded.of(loaded, manifest),
    )


def scan_local(prepared: Prepared, request: ScanRequest, found: list[Source]) -> ScanResult:
    """The local engine: one process, or ``--jobs`` worker processes (step 3)."""
    config = prepared.config
    check_readable(found)
    if request.jobs > 1 and request.changes is not None:
        console.notice("--jobs applies to whole files; a --staged/--diff scan runs in one process")
    if request.jobs > 1 and request.changes is None:
        from contam_guard.parallel import scan_parallel  # multiprocessing: only when asked for

        return scan_parallel(
            prepared.manifest_path,
            config.key_env,
            found,
            request.read,
            jobs=request.jobs,
            windows=config.rules.windows,
            batch_chars=config.scan.batch_chars,
            skip_unreadable=request.skip_unreadable,
            loaded=(prepared.manifest, prepared.index),
            max_pairs=request.max_pairs(config),
        )
    from contam_guard.readers import meter  # a bar in bytes, with a total (file sizes)

    with console.progress(meter.input_bytes(s.path for s in found), meter.bytes_read) as advance:
        return scan(
            prepared.index,
            found,
            request.read,
            key=prepared.key,
            windows=config.rules.windows,
            batch_chars=config.scan.batch_chars,
            on_chars=advance,
            skip_unreadable=request.skip_unreadable,
            max_pairs=request.max_pairs(config),
        )


def finish(prepared: Prepared, request: ScanRequest, result: ScanResult, notices: list[str]) -> ScanRun:
    """Redaction, the rules, markers, allowlist and golden text (step 4)."""
    config, loaded = prepared.config, prepared.loaded
    cap_pairs(result, request.max_pairs(config))  # as the local scan listed them, whatever the engine
    from contam_guard.reword.step import add_pairs  # issue 15: pairs only the rewording rules found

    add_pairs(result, request.max_pairs(config))
    in_training = _in_training(request.index, result) if request.index is not None else {}
    if request.redact_pii:
        result.pairs = [replace(p, snippet=redacted(p.snippet)) for p in result.pairs]
    markers = request.use_allowlist and config.allowlist.markers
    report = evaluate(result, config.rules, exit_zero=request.exit_zero, honour_markers=markers)
    report.notices += notices
    report.in_training = in_training
    allowlist = Allowlist(loaded.allowlist_path, {})
    if request.use_allowlist:
        allowlist = Allowlist.load(loaded.allowlist_path)
        apply(report, allowlist, dt.date.today(), check_stale=request.changes is None, root=loaded.root)
    golden = None
    if request.show_golden:
        from contam_guard.commands.golden import golden_lookup

        golden = golden_lookup(prepared.manifest, loaded.root, prepared.key)
    return ScanRun(report, golden, allowlist)


def execute(
    loaded: LoadedConfig,
    request: ScanRequest,
    engine: Engine = scan_local,
    before_scan: Callable[[Prepared, list[Source]], None] | None = None,
) -> ScanRun:
    """Every step: what ``scan``, ``review`` and ``sweep`` run (``engine``: which one scans).
    ``before_scan`` sees the very list of sources the engine will read, before it reads them
    (``scan`` checks its outputs against it)."""
    prepared = prepare(loaded, request)
    notices: list[str] = []
    with sources(
        request.paths, request.changes, request.read, prepared.excluded, notices, request.skip_unreadable
    ) as found:
        if before_scan is not None:
            before_scan(prepared, found)
        result = engine(prepared, request, found)
        from contam_guard.reword.step import registered_before, run_pass  # issue 15: the rewording rules

        if result.reword is None:
            notices += run_pass(prepared, request, found, result)
        else:  # the engine ran the pass where it read the records (Spark's tasks)
            rules = prepared.config.rules
            notices += registered_before(prepared.manifest, prepared.index, result.reword.index, rules)
    return finish(prepared, request, result, notices)


def _in_training(index: Path, result: ScanResult) -> dict[str, int]:
    """Records of the search index at ``index`` holding each pair's shared run (before any
    redaction: the run as it is in the data)."""
    from contam_guard.search.query import SearchIndex  # tantivy and the index: only when asked

    return SearchIndex(index).records_per_span({span_digest(p): p.snippet.run for p in result.pairs})


def redacted(snippet: Snippet) -> Snippet:
    """A training-side snippet with e-mail addresses, phone numbers, IPs and keys masked."""
    from contam_guard.reporting.redact import redact

    return replace(
        snippet,
        before=redact(snippet.before),
        run=redact(snippet.run),
        after=redact(snippet.after),
        span=snippet.span or run_span(snippet.run),  # the allowlist key of what was shared
    )
