"""Outputs never overwrite inputs.

Before a command writes anything, every output path it was given is compared with every file it
must not replace: its inputs, the registered golden files, the manifest, the config and the
allowlist. Two paths are the same file when they have the same device and inode (so a symbolic
link or a hard link to an input is caught), or, for an output that does not exist yet, when
they resolve to the same path. Two outputs naming one file are refused too (the second would
replace the first). A match is exit 2, naming both, before any work is done.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from contam_guard.commands.common import display_path
from contam_guard.errors import ConfigError, ContamGuardError
from contam_guard.manifest import store
from contam_guard.readers import detect_format

if TYPE_CHECKING:
    from contam_guard.config import LoadedConfig
    from contam_guard.pipeline import ScanRequest
    from contam_guard.reporting.outputs import Outputs
    from contam_guard.scrub import Job


@dataclass(frozen=True)
class _File:
    label: str
    path: Path
    identity: tuple[int, int] | None
    """(device, inode) when the file exists."""
    resolved: Path


def _file(label: str, path: Path) -> _File:
    try:
        info = os.stat(path)
        identity: tuple[int, int] | None = (info.st_dev, info.st_ino)
    except (OSError, ValueError):  # missing, a dangling link, a loop, a NUL in the name
        identity = None
    return _File(label, path, identity, Path(os.path.realpath(path)))


def _same(a: _File, b: _File) -> bool:
    if a.identity is not None and b.identity is not None:
        return a.identity == b.identity
    return a.resolved == b.resolved


def _how(output: _File, other: _File) -> str:
    if output.resolved != other.resolved:
        return "the same file, through a hard link"
    if output.resolved != Path(os.path.abspath(output.path)):
        return "the same file, through a symbolic link"
    return "the same file"


def check_outputs(outputs: Mapping[str, Path | None], protected: Mapping[str, Path]) -> None:
    """Raise ``ConfigError`` (exit 2) when an output is one of the ``protected`` files, or when two
    outputs are one file. Keys name the option (``--review``) or the file's role (``the input
    data/train.jsonl``); both are in the message."""
    written = [_file(option, path) for option, path in outputs.items() if path is not None]
    if not written:
        return
    guarded = [_file(role, path) for role, path in protected.items()]
    for output in written:
        for other in guarded:
            if _same(output, other):
                raise ConfigError(
                    f"{output.label} would write {output.path}, which is {other.label} "
                    f"({_how(output, other)}); nothing was done",
                    hint=f"give {output.label} another file name",
                )
    for number, output in enumerate(written):
        for other in written[number + 1 :]:
            if _same(output, other):
                raise ConfigError(
                    f"{output.label} and {other.label} would both write {output.path}; nothing was done"
                )


def registered_golden_files(manifest_path: Path, root: Path) -> dict[Path, str]:
    """Each registered golden file (as a path under ``root``) and its set, read leniently from
    the manifest's JSON: a broken manifest gives none here (loading it reports the problem)."""
    try:
        raw = json.loads(store.read(manifest_path))
    except (ContamGuardError, ValueError, RecursionError):
        return {}
    found: dict[Path, str] = {}
    sets = raw.get("sets") if isinstance(raw, dict) else None
    for name, golden in (sets or {}).items() if isinstance(sets, dict) else ():
        files = golden.get("files") if isinstance(golden, dict) else None
        for entry in files if isinstance(files, list) else ():
            relative = entry.get("path") if isinstance(entry, dict) else None
            if isinstance(relative, str) and relative:
                found[root / relative] = str(name)
    return found


def _project_files(loaded: LoadedConfig, manifest_path: Path) -> dict[str, Path]:
    """The files of the project that no output may replace."""
    protected = {f"the manifest {display_path(manifest_path)}": manifest_path}
    if loaded.source is not None:
        protected[f"the config {display_path(loaded.source)}"] = loaded.source
    protected[f"the allowlist {display_path(loaded.allowlist_path)}"] = loaded.allowlist_path
    for path, name in registered_golden_files(manifest_path, loaded.root).items():
        protected[f"the golden file {display_path(path)} of set {name!r}"] = path
    return protected


def _inputs(paths: Iterable[Path]) -> dict[str, Path]:
    """Files as given, and the data files under folders (what a scan of them reads)."""
    found: dict[str, Path] = {}
    for path in paths:
        if path.is_dir():
            for inner in path.rglob("*"):
                if detect_format(inner) is not None and inner.is_file():
                    found[f"the input {display_path(inner)}"] = inner
        else:
            found[f"the input {display_path(path)}"] = path
    return found


def _changed_files(request: ScanRequest) -> dict[str, Path]:
    """For ``--staged``/``--diff``: the files the range changes (their working-tree copies). When
    git cannot answer, none: the scan itself then stops with git's message and its fix."""
    rng = request.changes
    if rng is None:
        return {}
    from contam_guard import git  # noqa: PLC0415 (a scan of paths runs no git)

    try:
        root = git.repo_root(Path.cwd())
        if rng.staged:
            ends = ["--cached"]
        else:
            ends = [f"{rng.base}...{rng.head}"] if rng.merge_base else [rng.base, rng.head]
        raw = git.run_git(root, ["diff", "--name-only", "-z", "--no-renames", *ends, "--"])
    except ContamGuardError:
        return {}
    names = [os.fsdecode(name) for name in raw.split(b"\0") if name]
    return {f"the input {name} (changed in {rng.describe()})": root / name for name in names}


def check_scan(loaded: LoadedConfig, request: ScanRequest, outputs: Outputs) -> None:
    """``scan``: no output may be an input, a golden file, the manifest, the config or the
    allowlist (nothing is read or walked when no output file was asked for)."""
    written = outputs.by_option()
    if all(path is None for path in written.values()):
        return
    manifest_path = request.manifest_path or loaded.manifest_path
    protected = {
        **_inputs(request.paths),
        **_changed_files(request),
        **_project_files(loaded, manifest_path),
    }
    check_outputs(written, protected)


def check_scrub(loaded: LoadedConfig, jobs: list[Job], log: Path | None, manifest_path: Path | None) -> None:
    """``scrub``: outputs and the log against the inputs and the project's files. An output that
    is its own input (``--in-place``: the very path) is meant; the log never is an input."""
    written: dict[str, Path | None] = {"--log": log}
    for job in jobs:
        if job.output is not None and job.output != job.path:
            written["--output" if len(jobs) == 1 else f"the output for {job.display}"] = job.output
    protected = {f"the input {job.display}": job.path for job in jobs}
    protected.update(_project_files(loaded, manifest_path or loaded.manifest_path))
    check_outputs(written, protected)


def check_sweep(
    loaded: LoadedConfig,
    paths: list[Path],
    manifest_path: Path | None,
    **outputs: Path | None,
) -> None:
    """``sweep`` (and ``dupes``, with no ``paths``): its files against the inputs and the project."""
    written = {f"--{name.replace('_', '-')}": path for name, path in outputs.items()}
    if all(path is None for path in written.values()):
        return
    protected = {**_inputs(paths), **_project_files(loaded, manifest_path or loaded.manifest_path)}
    check_outputs(written, protected)


__all__ = [
    "check_outputs",
    "check_scan",
    "check_scrub",
    "check_sweep",
    "registered_golden_files",
]
