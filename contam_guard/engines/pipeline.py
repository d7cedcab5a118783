"""One pipeline for every front end: ``prepare``, read the sources, scan, ``finish``.

``scan``, ``review`` and ``sweep`` (and ``--engine spark`` and ``--engine ray``, which swap only the
scan step, and ``report-merge``, whose scan step merges a datatrove pipeline's ranks) run the same
steps in the same order, so that they read the same files and reach the same verdicts:

1. ``prepare``: the settings with the command line's rule overrides, the manifest (loaded once),
   its key and index, and the files never to scan (the guard's folder, the golden files);
2. ``sources``: the files to read (``contam_guard.io.sources``: paths walked, or a git range);
3. an engine feeds them to the scanner's accumulator (``scan_local``: one process or
   ``--jobs``; ``cli.commands.spark_scan.spark_engine``; ``cli.commands.ray_scan.ray_engine``);
4. ``finish``: ``Scanner.finish`` (redaction, the rules, the records' markers, the allowlist),
   then the search index's counts and golden text when asked (``--show-golden``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.allowlist import Allowlist
from contam_guard.core.config import Config, LoadedConfig, with_rule_overrides
from contam_guard.core.opening import manifest_notices
from contam_guard.core.scanner import FinishOptions, Scanner
from contam_guard.core.verdicts import Report, span_digest
from contam_guard.engines.local import scan_sources
from contam_guard.errors import ConfigError
from contam_guard.io.keys import key_for, unlocked
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Excluded, Source, check_readable, sources
from contam_guard.report import console

if TYPE_CHECKING:
    from contam_guard.io import git
    from contam_guard.report.markdown import GoldenText


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
    scanner: Scanner
    """The manifest opened with its key, the settings with the command line's rule overrides."""
    excluded: Excluded

    @property
    def config(self) -> Config:
        return self.scanner.config  # type: ignore[no-any-return]

    @property
    def manifest(self) -> Manifest:
        return self.scanner.manifest  # type: ignore[no-any-return]

    @property
    def manifest_path(self) -> Path:
        assert self.scanner.manifest_path is not None
        return self.scanner.manifest_path


@dataclass(frozen=True)
class ScanRun:
    report: Report
    golden: GoldenText | None
    allowlist: Allowlist


Engine = Callable[[Prepared, ScanRequest, list[Source]], Accumulator]


def prepare(loaded: LoadedConfig, request: ScanRequest) -> Prepared:
    """Settings, manifest, key and exclusions (step 1)."""
    config = with_rule_overrides(loaded.config, request.rule_overrides)
    path = request.manifest_path or loaded.manifest_path
    manifest = unlocked(store.load(path), config.key_env)
    scanner = Scanner(
        manifest,
        config,
        key_for(manifest, config.key_env),
        root=loaded.root,
        manifest_path=path,
        max_pairs=request.max_pairs(config),
        allowlist_path=loaded.allowlist_path,
        notices=manifest_notices(path, manifest),
    )
    return Prepared(
        loaded=loaded,
        scanner=scanner,
        excluded=Excluded.of(loaded.root, loaded.guard_dir, manifest, loaded.config.scan.exclude),
    )


def scan_local(prepared: Prepared, request: ScanRequest, found: list[Source]) -> Accumulator:
    """The local engine: one process, or ``--jobs`` worker processes (step 3)."""
    from contam_guard.engines import policy

    check_readable(found)
    if request.jobs > 1 and request.changes is not None:
        console.notice("--jobs applies to whole files; a --staged/--diff scan runs in one process")
    if request.jobs > 1 and request.changes is None:
        try:
            at_least = policy.min_seconds()
        except ValueError as bad:
            raise ConfigError(
                f"{policy.MIN_SECONDS_ENV}={bad}: not a number of seconds (0 or more)"
            ) from None
        reason = policy.one_process_reason(prepared.scanner, found, request.read, min_seconds=at_least)
        if reason is None:
            from contam_guard.engines.parallel import scan_parallel  # multiprocessing: only when asked for

            skip = request.skip_unreadable
            return scan_parallel(
                prepared.scanner, found, request.read, jobs=request.jobs, skip_unreadable=skip
            )
        console.notice(f"--jobs {request.jobs}: {reason}; scanned in one process (as fast, or faster)")
    try:
        prepared.scanner.use_threads(policy.threads())
    except ValueError as bad:
        raise ConfigError(
            f"{policy.THREADS_ENV}={bad}: not a number of threads (1 to {policy.MOST_THREADS})"
        ) from None
    from contam_guard.io.readers import meter, totals  # a bar in bytes, with a total(file sizes)

    with console.progress(totals.input_bytes(s.path for s in found), meter.bytes_read) as advance:
        return scan_sources(
            prepared.scanner, found, request.read, skip_unreadable=request.skip_unreadable, progress=advance
        )


def finish(prepared: Prepared, request: ScanRequest, acc: Accumulator, notices: list[str]) -> ScanRun:
    """The scanner's one post-scan step, then what only the command line does: the search
    index's counts (``--index``) and golden text (``--show-golden``) (step 4)."""
    options = FinishOptions(
        exit_zero=request.exit_zero,
        use_allowlist=request.use_allowlist,
        check_stale=request.changes is None,
        redact_pii=request.redact_pii,
    )
    report = prepared.scanner.finish(acc, options)
    report.notices += notices
    if request.index is not None:
        report.in_training = _in_training(request.index, report)
    golden = None
    if request.show_golden:
        from contam_guard.report.golden import golden_lookup

        golden = golden_lookup(prepared.manifest, prepared.loaded.root, prepared.scanner.key)
    allowlist = report.allowlist or Allowlist(prepared.loaded.allowlist_path, {})
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
        acc = engine(prepared, request, found)
    return finish(prepared, request, acc, notices)


def _in_training(index: Path, report: Report) -> dict[str, int]:
    """Records of the search index at ``index`` holding each pair's shared run (the run as it is
    in the data: a redacted snippet keeps the digest of the original)."""
    from contam_guard.search.query import SearchIndex  # tantivy and the index: only when asked

    return SearchIndex(index).records_per_span({span_digest(p): p.snippet.run for p in report.result.pairs})
