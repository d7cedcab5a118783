"""A scan whose parts ran apart (each rank of a datatrove pipeline): each part's ``ScanState``
saved to a folder, and the parts merged into one accumulator for ``Scanner.finish``.

Each part is saved as one file per rank (``RANK.contam-guard-state``, written whole or not at
all) holding its state with what the merge must check: the manifest's digest, the rule settings
and pair limit the part was scanned with, and how many ranks the run had. The merge refuses a
folder that lacks a rank (a task that did not finish: a guard never reports on part of what it
was asked to check), parts of another manifest or settings, and files that are not parts.

The files are pickles: read only a folder your own pipeline wrote (as with any pickle).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.scanner import FinishOptions, Scanner
from contam_guard.core.state import ScanState
from contam_guard.errors import ConfigError, InputError, ManifestError

FINDINGS_KEY = "contam_guard_findings"
"""The metadata key under which the datatrove step puts a document's failing findings."""
SUFFIX = ".contam-guard-state"
_MAGIC = b"contam-guard rank state 1\n"


@dataclass(frozen=True)
class RankState:
    """What one rank found, and what its merge with the other ranks must check."""

    rank: int
    world_size: int
    digest: str
    """The manifest's digest: every rank scanned against the same manifest as the merge."""
    rules: Any
    """The rule settings (``core.config.Rules``) the rank scanned with."""
    max_pairs: int
    fields: tuple[str, ...]
    state: ScanState
    notices: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return state_name(self.rank)

    def dumps(self) -> bytes:
        return _MAGIC + pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)


def state_name(rank: int) -> str:
    """The file of rank ``rank``'s state in the folder."""
    return f"{rank:05d}{SUFFIX}"


def loads(data: bytes, where: str) -> RankState:
    """A part read back (``where``: its file, for errors)."""
    if not data.startswith(_MAGIC):
        raise InputError(where, "not a rank state written by contam-guard's datatrove step")
    try:
        part = pickle.loads(data[len(_MAGIC) :])  # our own step's output (see the module's docstring)
    except Exception as exc:  # a truncated or foreign pickle: the file, not a bug here
        raise InputError(where, f"cannot read this rank state ({type(exc).__name__}: {exc})") from None
    if not isinstance(part, RankState):
        raise InputError(where, "not a rank state written by contam-guard's datatrove step")
    return part


def load_folder(folder: Any) -> list[RankState]:
    """Every part in ``folder`` (a local path, a URL or a datatrove ``DataFolder``)."""
    from datatrove.io import get_datafolder  # noqa: PLC0415 (the optional extra: fsspec folders)

    where = get_datafolder(local_absolute(folder))
    if not where.isdir(""):
        raise InputError(str(folder), "no such folder")
    names = sorted(name for name in where.list_files() if name.endswith(SUFFIX))
    if not names:
        raise InputError(str(folder), f"no rank states (*{SUFFIX}) here: did the pipeline run?")
    parts = []
    for name in names:
        with where.open(name, "rb") as handle:
            parts.append(loads(handle.read(), f"{where.path.rstrip('/')}/{name}"))
    return parts


def local_absolute(folder: Any) -> Any:
    """A local folder by its absolute path (else as given): fsspec reuses the folder object made
    with the same arguments, so a relative path would stay the one first made in this process."""
    if isinstance(folder, os.PathLike) or (isinstance(folder, str) and "://" not in folder):
        return os.path.abspath(folder)
    return folder


def scan_order(names: Iterable[str]) -> list[str]:
    """Input names in the order a folder walk reads them (``contam_guard.io.walk``: each folder's
    entries by name, depth first, which is the order of their path components)."""
    return sorted(set(names), key=lambda name: PurePosixPath(name).parts)


def merge(scanner: Scanner, parts: Sequence[RankState], where: str) -> Accumulator:
    """The parts (one per rank, checked: see the module's docstring) as one accumulator, its
    inputs in scan order (``scan_order``), as one process would have filled it."""
    _check(scanner, parts, where)
    acc = scanner.accumulator()
    names = scan_order(name for part in parts for name in part.state.census.files)
    for name in names:  # every rank's pairs are ranked by this order
        acc.note_input(name)
    census = acc.state.census
    for part in sorted(parts, key=lambda p: p.rank):
        acc.state.merge(part.state)
    census.files = names
    census.asked = parts[0].fields
    return acc


def _check(scanner: Scanner, parts: Sequence[RankState], where: str) -> None:
    sizes = {part.world_size for part in parts}
    if len(sizes) != 1:
        raise InputError(
            where,
            f"rank states of runs with different task counts ({sorted(sizes)})",
            hint="clear the folder and run the pipeline again",
        )
    size = sizes.pop()
    missing = sorted(set(range(size)) - {part.rank for part in parts})
    if missing:
        shown = ", ".join(str(rank) for rank in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise InputError(
            where,
            f"{len(missing)} of {size} ranks have no state (rank {shown}): their tasks did not finish, "
            "so the scan is incomplete",
            hint="run the pipeline again (datatrove runs only the unfinished tasks)",
        )
    digest = scanner.manifest.digest
    if any(part.digest != digest for part in parts):
        raise ManifestError(
            f"{where}: the ranks scanned against another manifest than {scanner.manifest_path} (a "
            "register or remove ran since)",
            hint="run the pipeline again",
        )
    first = parts[0]
    if any((p.rules, p.max_pairs, p.fields) != (first.rules, first.max_pairs, first.fields) for p in parts):
        raise InputError(
            where,
            "the ranks scanned with different settings (rules, pair limit or fields)",
            hint="run the pipeline again with one ContamGuardFilter for every rank",
        )
    if parts[0].rules != scanner.rules or parts[0].max_pairs != scanner.max_pairs:
        raise ConfigError(
            f"{where}: the ranks scanned with other rule settings or pair limit than this merge's scanner"
        )


def report(
    folder: Any,
    manifest: str | os.PathLike[str] = ".contam-guard",
    *,
    config: str | os.PathLike[str] | None = None,
    options: FinishOptions | None = None,
) -> Any:
    """The report of the ranks' scans saved in ``folder``, against the manifest at ``manifest``
    (settings found as ``Scanner.open`` finds them; the rule settings and pair limit are the
    ranks'): what ``contam-guard report-merge FOLDER`` reports."""
    parts = load_folder(folder)
    scanner = Scanner.open(manifest, config=config, max_pairs=parts[0].max_pairs).with_rules(parts[0].rules)
    acc = merge(scanner, parts, str(folder))
    scanner.notices += notices(parts)
    return scanner.finish(acc, options)


def notices(parts: Sequence[RankState]) -> list[str]:
    """What the ranks said about their inputs (each once)."""
    return list(dict.fromkeys(text for part in sorted(parts, key=lambda p: p.rank) for text in part.notices))


def rule_overrides(part: RankState) -> dict[str, dict[str, object]]:
    """The part's rule settings as the command line's overrides (every setting of every rule)."""
    return {name: dict(values) for name, values in part.rules.model_dump().items()}
