"""Outputs never overwrite inputs, nor contam-guard's own files.

Before a command writes anything, every output path it was given is compared with every file it
must not replace: the files the scan reads (the very list it reads, symlinked folders followed),
the registered golden files, the config, the allowlist, and every file of the manifest (its
index, lock and set files). Two paths are the same file when they have the same device and inode
(so a symbolic link or a hard link to an input is caught), or, for an output that does not exist
yet, when they resolve to the same path. An output inside the guard's folder (or the manifest's
``sets`` folder) is refused whatever its name: a new file there is read as part of the manifest.
Two outputs naming one file are refused too (the second would replace the first). A match is
exit 2, naming both, before any work is done.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from contam_guard.errors import ConfigError, ContamGuardError
from contam_guard.io.manifest import store
from contam_guard.io.manifest.names import SETS_DIR
from contam_guard.io.paths import display_path
from contam_guard.io.walk import data_files

if TYPE_CHECKING:
    from contam_guard.core.config import LoadedConfig
    from contam_guard.core.scrub import Job
    from contam_guard.report.outputs import Outputs


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
    return _File(label, path, identity, _realpath(path))


def _realpath(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.abspath(path))


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


def check_outputs(
    outputs: Mapping[str, Path | None],
    protected: Mapping[str, Path],
    folders: Mapping[str, Path] | None = None,
) -> None:
    """Raise ``ConfigError`` (exit 2) when an output is one of the ``protected`` files, lies in
    one of the protected ``folders`` (through any link), or when two outputs are one file. Keys
    name the option (``--review``) or the file's role (``the input data/train.jsonl``); both are
    in the message."""
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
    inside = {label: _realpath(folder) for label, folder in (folders or {}).items()}
    for output in written:
        for label, folder in inside.items():
            if output.resolved.is_relative_to(folder):
                raise ConfigError(
                    f"{output.label} would write {output.path}, which is inside {label} "
                    "(contam-guard reads every file there); nothing was done",
                    hint=f"give {output.label} a file outside {display_path(folder)}",
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


def _guard_folders(loaded: LoadedConfig, manifest_path: Path) -> dict[str, Path]:
    """Folders no output may write into: the guard's own, and the manifest's set files (which
    lie beside a manifest given with ``--manifest``)."""
    return {
        f"contam-guard's folder {display_path(loaded.guard_dir)}": loaded.guard_dir,
        f"the manifest's set files {display_path(manifest_path.parent / SETS_DIR)}": manifest_path.parent
        / SETS_DIR,
    }


def _files_under(folder: Path) -> dict[str, Path]:
    """Every file under ``folder``: an output outside it that is a hard link to one of them is
    the same inode (an output inside it is refused by its path already)."""
    found: dict[str, Path] = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = Path(dirpath) / name
            found[f"the manifest's file {display_path(path)}"] = path
    return found


def _project_files(loaded: LoadedConfig, manifest_path: Path) -> dict[str, Path]:
    """The files of the project that no output may replace."""
    protected = {f"the manifest {display_path(manifest_path)}": manifest_path}
    lock = manifest_path.with_name(manifest_path.name + ".lock")
    protected[f"the manifest's lock {display_path(lock)}"] = lock
    if loaded.source is not None:
        protected[f"the config {display_path(loaded.source)}"] = loaded.source
    protected[f"the allowlist {display_path(loaded.allowlist_path)}"] = loaded.allowlist_path
    for path, name in registered_golden_files(manifest_path, loaded.root).items():
        protected[f"the golden file {display_path(path)} of set {name!r}"] = path
    named = {_realpath(path) for path in protected.values()}
    for folder in _guard_folders(loaded, manifest_path).values():
        for label, path in _files_under(folder).items():
            if _realpath(path) not in named:
                protected[label] = path
    return protected


def _inputs(paths: Iterable[Path]) -> dict[str, Path]:
    """What a scan of ``paths`` reads: files as given, and the data files under folders, found by
    the scan's own walk (symlinked folders followed)."""
    return {f"the input {display_path(path)}": path for path in data_files(list(paths)).files}


def check_scan(loaded: LoadedConfig, manifest_path: Path, outputs: Outputs, read: Mapping[str, Path]) -> None:
    """``scan``: no output may be a file the scan reads (``read``: the very list its sources
    gave, by how to name each), a golden file, a file of the manifest, the config or the
    allowlist."""
    written = outputs.by_option()
    if all(path is None for path in written.values()):
        return
    protected = {**read, **_project_files(loaded, manifest_path)}
    check_outputs(written, protected, _guard_folders(loaded, manifest_path))


def check_scrub(loaded: LoadedConfig, jobs: list[Job], log: Path | None, manifest_path: Path | None) -> None:
    """``scrub``: outputs and the log against the inputs and the project's files. An output that
    is its own input (``--in-place``: the very path) is meant; the log never is an input."""
    written: dict[str, Path | None] = {"--log": log}
    for job in jobs:
        if job.output is not None and job.output != job.path:
            written["--output" if len(jobs) == 1 else f"the output for {job.display}"] = job.output
    protected = {f"the input {job.display}": job.path for job in jobs}
    manifest_path = manifest_path or loaded.manifest_path
    project = _project_files(loaded, manifest_path)
    protected.update(project)
    folders = _guard_folders(loaded, manifest_path)
    check_outputs(written, protected, folders)
    for job in jobs:  # --in-place is meant for training data, never for the project's own files
        if job.output is not None and job.output == job.path:
            check_outputs({f"--in-place ({job.display})": job.path}, project, folders)


def check_command(
    loaded: LoadedConfig, outputs: Mapping[str, Path | None], inputs: Mapping[str, Path]
) -> None:
    """Any other command's output files (``impact``): against its ``inputs`` (by role) and the
    project's files and folders."""
    if all(path is None for path in outputs.values()):
        return
    manifest_path = loaded.manifest_path
    protected = {**inputs, **_project_files(loaded, manifest_path)}
    check_outputs(outputs, protected, _guard_folders(loaded, manifest_path))


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
    manifest_path = manifest_path or loaded.manifest_path
    protected = {**_inputs(paths), **_project_files(loaded, manifest_path)}
    check_outputs(written, protected, _guard_folders(loaded, manifest_path))


__all__ = [
    "check_command",
    "check_outputs",
    "check_scan",
    "check_scrub",
    "check_sweep",
    "registered_golden_files",
]
