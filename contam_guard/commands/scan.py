"""``contam-guard scan``: check training files (or what a commit adds) against every registered set.

``execute`` does the work and returns the report (``review`` reuses it); ``run`` writes the
requested files and formats and returns the exit code.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from contam_guard.allowlist import Allowlist, apply
from contam_guard.atomic import write_text
from contam_guard.commands.common import display_path, load_manifest
from contam_guard.config import LoadedConfig, with_rule_overrides
from contam_guard.engine.index import ManifestIndex
from contam_guard.errors import GitError
from contam_guard.findings import Report, evaluate
from contam_guard.keys import key_for
from contam_guard.manifest.model import Manifest
from contam_guard.readers import ReadOptions
from contam_guard.reporting import console
from contam_guard.scan import Snippet, Source, check_readable, scan

if TYPE_CHECKING:
    # Imported where used: a plain scan needs neither git nor the file formats it was not
    # asked for, and every module is start-up time a pre-commit hook pays.
    from contam_guard import git
    from contam_guard.reporting.markdown import GoldenText

FORMATS = ("text", "json", "markdown", "sarif", "github")


@dataclass(frozen=True)
class ScanOutputs:
    review: Path | None = None
    review_json: Path | None = None
    items_csv: Path | None = None
    pairs_csv: Path | None = None
    review_html: Path | None = None
    sarif: Path | None = None
    summary: Path | None = None
    """A Markdown job summary (verdict and table, under 1 MiB) for ``$GITHUB_STEP_SUMMARY``."""
    format: str = "text"
    output: Path | None = None
    """Where ``format`` goes (default stdout)."""


@dataclass(frozen=True)
class ScanRequest:
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


@dataclass(frozen=True)
class ScanRun:
    report: Report
    golden: GoldenText | None
    allowlist: Allowlist


@dataclass(frozen=True)
class _Excluded:
    """Files a walk or a diff never scans: the guard's own folder and the golden files."""

    guard_dir: Path
    golden: dict[Path, str]
    """Resolved path of each registered golden file (inside the project) -> its set."""

    def why(self, path: Path) -> str | None:
        resolved = path.resolve()
        if resolved.is_relative_to(self.guard_dir):
            return "contam-guard's own folder"
        if resolved in self.golden:
            return f"a golden file of set {self.golden[resolved]!r}"
        return None


def excluded_paths(loaded: LoadedConfig, manifest: Manifest) -> _Excluded:
    golden: dict[Path, str] = {}
    for name, golden_set in manifest.sets.items():
        for golden_file in golden_set.files:
            path = (loaded.root / golden_file.path).resolve()
            if path.is_file():
                golden[path] = name
    return _Excluded(loaded.guard_dir.resolve(), golden)


def expand(
    paths: list[Path], excluded: _Excluded | None = None, notices: list[str] | None = None
) -> list[Source]:
    """Files as given; folders walked (sorted, symlinks followed: ``contam_guard.walk``) for the
    data files they hold, leaving out the guard's folder and registered golden files (each golden
    file, loop and broken link with a notice)."""
    from contam_guard.walk import data_files

    found = data_files(paths, excluded.why if excluded is not None else None)
    if notices is not None:
        notices += [f"{display_path(notice.path)}: {notice.reason}" for notice in found.notices]
    return [Source(path, display_path(path)) for path in found.files]


@contextmanager
def _changed_sources(
    rng: git.Range, paths: list[Path], read: ReadOptions, excluded: _Excluded, notices: list[str]
) -> Iterator[list[Source]]:
    """Sources for what ``rng`` adds (under ``paths`` when given). A file named in ``paths``
    that the range does not touch is scanned whole, so `pre-commit run --all-files` audits."""
    from contam_guard import git

    root = git.repo_root(Path.cwd())
    selection = git.select(root, rng, whole_file=read.whole_file)
    notices += selection.notices
    named_files, folders = _relative(root, paths)
    keep: list[git.Change] = []
    for change in selection.changes:
        if paths and change.path not in named_files and not _under(change.path, folders):
            continue
        why = excluded.why(root / change.path)
        if why is not None:
            notices.append(f"{change.path}: {why}; not scanned")
            continue
        keep.append(change)
    whole = sorted(name for name in named_files if name not in selection.touched)
    whole = [name for name in whole if excluded.why(root / name) is None]
    if not keep and not whole and not selection.same_commit:
        notices.append(f"no data file changed in {rng.describe()}: nothing to scan")
    with git.exported(root, keep) as files:
        sources = [Source(files[c.path], c.path, c.lines) for c in keep]
        sources += [Source(root / name, name) for name in whole]
        yield sources


def _relative(root: Path, paths: list[Path]) -> tuple[set[str], list[str]]:
    """Named files and folders as POSIX paths relative to the repository root."""
    files: set[str] = set()
    folders: list[str] = []
    for path in paths:
        try:
            rel = path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise GitError(f"{path}: outside the git work tree {root}") from None
        if path.is_dir():
            folders.append("" if rel == "." else rel)
        else:
            files.add(rel)
    return files, folders


def _under(path: str, folders: list[str]) -> bool:
    return any(folder == "" or path.startswith(folder + "/") for folder in folders)


@contextmanager
def _sources(request: ScanRequest, excluded: _Excluded, notices: list[str]) -> Iterator[list[Source]]:
    if request.changes is None:
        yield expand(request.paths, excluded, notices)
        return
    with _changed_sources(request.changes, request.paths, request.read, excluded, notices) as sources:
        yield sources


def execute(loaded: LoadedConfig, request: ScanRequest) -> ScanRun:
    """Scan, evaluate the rules and apply the allowlist; prints only progress and notices."""
    config = with_rule_overrides(loaded.config, request.rule_overrides)
    _, manifest = load_manifest(loaded, request.manifest_path)
    key = key_for(manifest, config.key_env)
    index = ManifestIndex.from_manifest(manifest)
    if not manifest.sets:
        console.notice("no golden sets are registered: nothing to match against")
    notices: list[str] = []
    with _sources(request, excluded_paths(loaded, manifest), notices) as sources:
        check_readable(sources)
        if request.jobs > 1 and request.changes is not None:
            console.notice("--jobs applies to whole files; a --staged/--diff scan runs in one process")
        if request.jobs > 1 and request.changes is None:
            from contam_guard.parallel import scan_parallel  # multiprocessing: only when asked for

            result = scan_parallel(
                request.manifest_path or loaded.manifest_path,
                config.key_env,
                sources,
                request.read,
                jobs=request.jobs,
                windows=config.rules.gpt4.enabled,
                batch_chars=config.scan.batch_chars,
                skip_unreadable=request.skip_unreadable,
                loaded=(manifest, index),
            )
        else:
            from contam_guard.readers import meter  # issue 12 (ux): a bar in bytes, with a total

            with console.progress(meter.input_bytes(s.path for s in sources), meter.bytes_read) as advance:
                result = scan(
                    index,
                    sources,
                    request.read,
                    key=key,
                    windows=config.rules.gpt4.enabled,
                    batch_chars=config.scan.batch_chars,
                    on_chars=advance,
                    skip_unreadable=request.skip_unreadable,
                )
    if request.redact_pii:
        result.pairs = [replace(p, snippet=redacted(p.snippet)) for p in result.pairs]
    markers = request.use_allowlist and config.allowlist.markers
    report = evaluate(result, config.rules, exit_zero=request.exit_zero, honour_markers=markers)
    report.notices += notices
    allowlist = Allowlist(loaded.allowlist_path, {})
    if request.use_allowlist:
        allowlist = Allowlist.load(loaded.allowlist_path)
        apply(report, allowlist, dt.date.today(), check_stale=request.changes is None, root=loaded.root)
    golden = None
    if request.show_golden:
        from contam_guard.commands.golden import golden_lookup

        golden = golden_lookup(manifest, loaded.root, key)
    return ScanRun(report, golden, allowlist)


def redacted(snippet: Snippet) -> Snippet:
    from contam_guard.reporting.redact import redact

    return replace(
        snippet, before=redact(snippet.before), run=redact(snippet.run), after=redact(snippet.after)
    )


def render(report: Report, fmt: str, golden: GoldenText | None = None) -> str:
    """``report`` in one of ``FORMATS``."""
    from contam_guard.reporting import github, json_report, markdown, sarif

    if fmt == "json":
        return json_report.render(report, golden)
    if fmt == "markdown":
        return markdown.render(report, golden)
    if fmt == "sarif":
        return sarif.render(report)
    if fmt == "github":
        return github.render(report)
    return console.summary_text(report)


def run(loaded: LoadedConfig, request: ScanRequest, outputs: ScanOutputs) -> int:
    from contam_guard import next_steps, overlap_guard

    overlap_guard.check_scan(loaded, request, outputs)  # issue 11: no output may replace an input
    done = execute(loaded, request)
    done.report.notices += next_steps.unreachable_rules(loaded, request, done.report)  # issue 11
    code = write_outputs(done.report, done.golden, outputs)
    next_steps.after_scan(loaded, request, outputs, done.report)  # issue 11: a failure says what next
    return code


def write_outputs(report: Report, golden: GoldenText | None, outputs: ScanOutputs) -> int:
    """Write every requested file and format (any engine's report); returns the exit code."""
    _write_files(report, golden, outputs)
    if outputs.output is not None:
        write_text(outputs.output, render(report, outputs.format, golden))
        console.scan_summary(report)
    elif outputs.format == "text":
        console.scan_summary(report)
    else:
        # stdout carries the machine format; the people's summary goes to stderr
        console.raw(render(report, outputs.format, golden))
        console.scan_summary(report, to_stderr=True)
    return int(report.return_code)


def _write_files(report: Report, golden: GoldenText | None, outputs: ScanOutputs) -> None:
    """The review files asked for (their writers are imported only then)."""
    paths = (
        outputs.review,
        outputs.review_json,
        outputs.review_html,
        outputs.items_csv,
        outputs.pairs_csv,
        outputs.sarif,
        outputs.summary,
    )
    if all(path is None for path in paths):
        return
    from contam_guard.reporting import html, json_report, markdown, sarif, tables

    makers: list[Callable[[], str]] = [
        lambda: markdown.render(report, golden),
        lambda: json_report.render(report, golden),
        lambda: html.render(report, golden),
        lambda: tables.items_csv(report),
        lambda: tables.pairs_csv(report),
        lambda: sarif.render(report),
        lambda: markdown.summary(report),
    ]
    for path, make in zip(paths, makers):
        if path is not None:
            write_text(path, make())
