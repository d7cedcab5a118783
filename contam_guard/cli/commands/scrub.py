"""``contam-guard scrub``: remove colliding text from training files (GPT-3's filter), with a log.

Where the outputs go: one input, ``--output`` is the output file (or an existing folder, keeping
the input's name); several inputs, ``--output`` is a folder and each output keeps its input's
name. ``--in-place`` replaces each input instead (atomically). ``--dry-run`` writes nothing.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import stat
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import ValidationError

from contam_guard.cli import overlap_guard
from contam_guard.cli.commands.common import display_path, load_manifest
from contam_guard.core.allowlist import FALSE_POSITIVE, Allowlist
from contam_guard.core.config import LoadedConfig, ScrubSettings
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.scrub import Job, ScrubOptions, ScrubStats, apply, plan, scrub_format
from contam_guard.core.scrub.allowed import NOTHING, Kept, kept_records
from contam_guard.core.scrub.commit import check_keepable
from contam_guard.errors import ConfigError, InputError
from contam_guard.io.keys import key_for
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from contam_guard.report import console


@dataclass(frozen=True)
class ScrubRequest:
    """What the command line asked for; ``None`` settings fall back to the config."""

    inputs: list[Path]
    output: Path | None = None
    log: Path | None = None
    dry_run: bool = False
    in_place: bool = False
    fields: list[str] = field(default_factory=list)
    id_field: str | None = None
    settings: dict[str, object] = field(default_factory=dict)
    """Scrub settings given on the command line (``core.config.ScrubSettings`` names); the rest are
    the config's."""
    use_allowlist: bool = True
    """Keep the records whose every pair is allowlisted as a false positive (``core.scrub.allowed``);
    False (``--no-allowlist``): scrub every collision."""


def settings_for(loaded: LoadedConfig, request: ScrubRequest) -> ScrubSettings:
    """The config's scrub settings with the command line's on top, validated alike."""
    try:
        return ScrubSettings.model_validate({**loaded.config.scrub.model_dump(), **request.settings})
    except ValidationError as exc:
        problems = [
            f"--{'-'.join(str(p) for p in error['loc']).replace('_', '-')}: {error['msg']}"
            for error in exc.errors()
        ]
        raise ConfigError(f"command line: {'; '.join(problems)}") from None


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def _check_input(source: Source) -> None:
    """A file scrub can read and replace, or ``InputError``/``ConfigError`` saying what it is
    (checked before anything is opened: opening a FIFO blocks, /dev/zero never ends)."""
    path = source.path
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            target = os.readlink(path)
            raise InputError(
                source.display, f"a broken symlink (its target {target} does not exist)"
            ) from None
        raise InputError(source.display, "no such file or directory") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(source.display, "a symlink loop (the link leads back to itself)") from None
        raise InputError(source.display, f"cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(
            f"{source.display}: is a folder; scrub takes files",
            hint=f"pass the files themselves, e.g. {source.display}/*.jsonl",
        )
    if not stat.S_ISREG(info.st_mode):
        raise InputError(
            source.display, "not a regular file (a FIFO, socket or device); scrub reads and rewrites files"
        )


def _other_links(job: Job) -> str | None:
    """A notice when ``--in-place`` replaces one name of a file that has others (hard links):
    they keep the original text, leaks included."""
    links = os.stat(job.path).st_nlink
    if job.output != job.path or links < 2:
        return None
    return (
        f"{job.display} has {links - 1} other hard link(s): --in-place replaced this name only, "
        "the other names still hold the original text, with what was removed here; scrub them "
        "too, or remove them (`find -samefile` lists them)"
    )


def plan_jobs(request: ScrubRequest) -> list[Job]:
    """Check the inputs and map each to its output; usage errors raise ``ConfigError``."""
    sources = [Source(p, display_path(p)) for p in request.inputs]
    for source in sources:
        _check_input(source)
    resolved = [s.path.resolve() for s in sources]
    if len(set(resolved)) < len(resolved):
        raise ConfigError("the same input is given twice")
    formats = [scrub_format(s.path, s.display) for s in sources]
    if request.in_place and request.output is not None:
        raise ConfigError("give either --output or --in-place, not both")
    if request.dry_run:
        return [Job(s.path, s.display, f, None) for s, f in zip(sources, formats)]
    if request.in_place:
        return [Job(s.path, s.display, f, s.path) for s, f in zip(sources, formats)]
    if request.output is None:
        raise ConfigError(
            "say where the scrubbed data goes: --output FILE (a folder for several inputs), "
            "--in-place, or --dry-run to only count"
        )
    out = request.output
    if len(sources) == 1 and not out.is_dir():
        outputs = [out]
    else:
        if out.exists() and not out.is_dir():
            raise ConfigError(f"{out}: with several inputs --output must be a folder, and this is a file")
        names = [s.path.name for s in sources]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(f"several inputs are named {', '.join(twice)}: their outputs would collide")
        outputs = [out / name for name in names]
    for output in outputs:
        if any(_same(output, s.path) for s in sources):
            raise ConfigError(
                f"{display_path(output)}: the output would overwrite an input",
                hint="pass --in-place to replace the input on purpose",
            )
    return [Job(s.path, s.display, f, o) for s, f, o in zip(sources, formats, outputs)]


def _check_owners(jobs: list[Job]) -> None:
    """Every file to be replaced keeps its owner, or nothing is done."""
    for job in jobs:
        if job.output is not None:
            check_keepable(job.output, display_path(job.output))


def run(loaded: LoadedConfig, request: ScrubRequest, manifest_path: Path | None = None) -> int:
    started = time.perf_counter()
    settings = settings_for(loaded, request)
    fields = tuple(request.fields or loaded.config.scan.fields)
    if settings.mode == "pieces" and (len(fields) > 1 or any("[]" in f for f in fields)):
        raise ConfigError(
            f"--mode pieces cuts one string field into pieces, not {', '.join(fields)}",
            hint="use --mode drop (the default for several or list fields), or one --field",
        )
    jobs = plan_jobs(request)
    if request.log is not None and any(_same(request.log, p) for j in jobs for p in (j.path, j.output) if p):
        raise ConfigError(f"{display_path(request.log)}: the log would overwrite an input or an output")
    overlap_guard.check_scrub(loaded, jobs, request.log, manifest_path)  # outputs vs inputs
    if not request.dry_run:
        _check_owners(jobs)
        if request.log is not None:
            check_keepable(request.log, display_path(request.log))
    _, manifest = load_manifest(loaded, manifest_path)
    key = key_for(manifest, loaded.config.key_env)
    if not manifest.sets:
        console.notice("no golden sets are registered: nothing to remove")
    options = ScrubOptions(
        settings=settings,
        read=ReadOptions(fields=fields, id_field=request.id_field),
        batch_chars=loaded.config.scan.batch_chars,
    )
    kept = NOTHING
    if request.use_allowlist and _allowlist_applies(loaded):
        kept = _kept(loaded, jobs, options, settings.n, manifest_path)
        jobs = [replace(job, keep=kept.of(job.display)) for job in jobs]
    scrub_plan = plan(ManifestIndex.from_manifest(manifest), jobs, options, key)
    if request.dry_run:
        if request.log is not None:
            console.notice("--dry-run: the log was not written either")
    else:
        linked = [notice for job in jobs if (notice := _other_links(job)) is not None]
        apply(scrub_plan, request.log)
        for notice in linked:
            console.notice(notice)
    if kept.count:
        console.info(
            f"  kept {kept.count:,} record(s) unchanged: their {kept.pairs:,} (test item, training "
            f"record) pair(s) are allowlisted as false positives in "
            f"{display_path(loaded.allowlist_path)} (--no-allowlist scrubs them too)"
        )
    _summary(scrub_plan.stats, settings, time.perf_counter() - started, request.dry_run)
    return 0


def _allowlist_applies(loaded: LoadedConfig) -> bool:
    """Whether the allowlist has a live false-positive entry a person decided (a baseline entry
    is not a review: ``core.scrub.allowed``): only then is the scan that finds the allowed pairs
    worth its time. Any entry may apply to any input (entries are keyed by content: the same
    reviewed text in another file is allowed there too)."""
    today = dt.date.today()
    return any(
        entry.decision == FALSE_POSITIVE and entry.baseline is None and not entry.expired(today)
        for entry in Allowlist.load(loaded.allowlist_path).entries.values()
    )


def _kept(
    loaded: LoadedConfig, jobs: list[Job], options: ScrubOptions, n: int, manifest_path: Path | None
) -> Kept:
    """Scan the inputs as ``scan`` would, every pair listed, and find the allowed records."""
    from contam_guard.engines.pipeline import ScanRequest, execute  # noqa: PLC0415 (only with an allowlist)

    request = ScanRequest(
        paths=[job.path for job in jobs], read=options.read, manifest_path=manifest_path, max_pairs_per_item=0
    )
    return kept_records(execute(loaded, request).report, n)


def _summary(stats: ScrubStats, settings: ScrubSettings, seconds: float, dry_run: bool) -> None:
    for label, records in stats.by_view.items():
        set_name, view = label.split(":", 1)
        # Not "set:view": rich would read ":question:" as an emoji code.
        console.info(f"  set {set_name}, view {view}: {records:,} record(s) touched")
    for reason, (records, chars) in stats.by_reason.items():
        if records:
            console.info(f"  {reason}: {records:,} record(s), {chars:,} characters")
    if stats.left_alone:
        console.info(
            f"  {stats.left_alone:,} colliding {settings.n}-gram(s) left alone: each is in more than "
            f"{settings.max_doc_freq} records"
        )
    if stats.rounds > 1:
        console.info(f"  {stats.rounds} rounds (later rounds remove what earlier cuts left colliding)")
    megabytes = stats.bytes / 1e6
    rate = megabytes / seconds if seconds > 0 else 0.0
    prefix = "Dry run, nothing written; scrubbing would give: " if dry_run else "Scrubbed: "
    console.info(
        f"{prefix}{stats.records:,} records read in {stats.files} file(s), {stats.touched:,} touched, "
        f"{stats.dropped:,} dropped, {stats.pieces:,} pieces written, "
        f"{stats.chars_removed:,} characters removed; "
        f"{megabytes:.1f} MB in {seconds:.2f} s ({rate:.1f} MB/s)."
    )
