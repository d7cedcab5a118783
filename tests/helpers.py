"""Helpers several test folders share (test modules and conftests import them as ``tests.helpers``)."""

from __future__ import annotations

import gzip
import importlib
import io
import json
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import zstandard

from contam_guard.core.config import MAX_PAIRS_PER_ITEM, Config, Rules
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.result import ScanResult
from contam_guard.core.scanner import Scanner
from contam_guard.core.spec.hashing import HashKey
from contam_guard.engines.local import scan_sources
from contam_guard.errors import InputError
from contam_guard.io.keys import unlocked
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest, View
from contam_guard.io.manifest.names import stem_of
from contam_guard.io.readers import ReadOptions, Record, read_records
from contam_guard.io.sources import Source

REPO = Path(__file__).resolve().parents[1]
GSM8K = REPO.parent / "shared" / "data" / "gsm8k"
"""GSM8K as ../shared/data/gsm8k holds it (read there, never copied into the project)."""
needs_gsm8k = [
    pytest.mark.gsm8k,
    pytest.mark.skipif(not (GSM8K / "train.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}"),
]
"""``pytestmark`` of a module that reads GSM8K: it skips with a reason where GSM8K is absent."""


def benchmark_module(name: str) -> Any:
    """``benchmarks.<name>``: benchmarks/ is a folder of the repository, not an installed package."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    return importlib.import_module(f"benchmarks.{name}")


@dataclass(frozen=True)
class Result:
    """What a contam-guard command gave: exit code, stdout and stderr."""

    code: int
    out: str
    err: str

    @property
    def output(self) -> str:
        return self.out + self.err


Runner = Callable[..., Result]


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write(path: Path, data: bytes) -> Path:
    """Write ``data``, compressed when the name ends in .gz or .zst."""
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    elif path.name.endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


def read(path: Path, field: str | None = None, *, every: bool = False, **opts: Any) -> list[Record]:
    """The records of ``path``: its ``field``; or without one, the usual shapes' one text (as
    a golden set is read), or with ``every`` every string (as a scan reads training data)."""
    opts.setdefault("names", every)  # a table's header and column names: training data only
    options = ReadOptions(
        fields=() if field is None else (field,),
        detect_shape=field is None and not every,
        **opts,
    )
    return list(read_records(path, path.name, options))


def fail(path: Path, field: str | None = None, **opts: Any) -> InputError:
    """The InputError reading ``path`` raises (it must name the file as given)."""
    with pytest.raises(InputError) as info:
        read(path, field, **opts)
    assert info.value.path == path.name
    return info.value


def load_manifest(path: Path, key_env: str = "CONTAM_GUARD_KEY") -> Manifest:
    """The manifest at ``path`` (either format), opened with the key in ``$key_env`` if keyed."""
    return unlocked(store.load(path), key_env)


def manifest_view(path: Path, set_name: str, view: str, key_env: str = "CONTAM_GUARD_KEY") -> View:
    """One view of a registered set, read through the library (format 2 keeps it in binary files)."""
    return load_manifest(path, key_env).sets[set_name].views[view]


def scanner_over(
    index_or_manifest: ManifestIndex | Manifest,
    *,
    key: HashKey | None = None,
    windows: bool = True,
    batch_chars: int = 1 << 20,
    max_pairs: int = MAX_PAIRS_PER_ITEM,
    rules: Rules | None = None,
) -> Scanner:
    """A scanner over a manifest (every rule family), or over an n-gram index alone (no
    rewording rules: they read the manifest's derived views)."""
    rules = rules or Rules()
    if not windows:
        rules = rules.model_copy(update={"gpt4": rules.of("gpt4").model_copy(update={"enabled": False})})
    config = Config(rules=rules)
    config = config.model_copy(update={"scan": config.scan.model_copy(update={"batch_chars": batch_chars})})
    if isinstance(index_or_manifest, ManifestIndex):
        return Scanner(None, config, key, root=Path.cwd(), max_pairs=max_pairs, index=index_or_manifest)
    return Scanner(index_or_manifest, config, key, root=Path.cwd(), max_pairs=max_pairs)


def scan(
    index_or_manifest: ManifestIndex | Manifest,
    sources: list[Source],
    read: ReadOptions,
    *,
    skip_unreadable: bool = False,
    **settings: Any,
) -> ScanResult:
    """The local engine in one process, finished (no allowlist): what the scan read and found."""
    scanner = scanner_over(index_or_manifest, **settings)
    report = scanner.finish(scan_sources(scanner, sources, read, skip_unreadable=skip_unreadable))
    return report.result  # type: ignore[no-any-return]


def scan_jobs(
    manifest_path: Path,
    key_env: str,
    sources: list[Source],
    read: ReadOptions,
    *,
    jobs: int,
    min_window_bytes: int | None = None,
    skip_unreadable: bool = False,
    manifest: Manifest | None = None,
    **settings: Any,
) -> ScanResult:
    """``--jobs``: the local engine over ``jobs`` worker processes, finished (no allowlist);
    ``manifest``: the one the parent holds (default: read from ``manifest_path`` now)."""
    from contam_guard.engines.parallel import MIN_WINDOW_BYTES, scan_parallel  # noqa: PLC0415
    from contam_guard.io.keys import key_for  # noqa: PLC0415

    manifest = manifest or unlocked(store.load(manifest_path), key_env)
    scanner = scanner_over(manifest, key=key_for(manifest, key_env), **settings)
    window = MIN_WINDOW_BYTES if min_window_bytes is None else min_window_bytes
    acc = scan_parallel(
        scanner, sources, read, jobs=jobs, min_window_bytes=window, skip_unreadable=skip_unreadable
    )
    return scanner.finish(acc).result  # type: ignore[no-any-return]


def set_file(folder: Path, stem: str) -> Path:
    """The file in a set's folder whose stem is ``stem`` (``q.bin``, ``q.windows.bin``,
    ``_ids.bin``, ``part-0.bin``): set files are named by their stem and their bytes' digest."""
    found = [path for path in folder.iterdir() if stem_of(path.name) == stem]
    assert len(found) == 1, (stem, sorted(p.name for p in folder.iterdir()))
    return found[0]


# A small golden set of our own, with a copy whose numbers changed and two rewordings: what the
# engines' tests scan with every rule on (tests/spark/test_spark_reword.py,
# tests/engines/test_engines_agree.py).
REWORD_GOLDEN = [
    "A lighthouse keeper on Brackwater Point polishes 14 brass lamps every evening and trims 6 wicks "
    "before the fog rolls in. How many lamps and wicks does she tend in a week?",
    "Marisol bakes 36 cinnamon rolls for the village fair and sells them in boxes of 4. She gives "
    "away 3 boxes to her neighbours. How many boxes does she have left to sell at the fair?",
    "A ferry crosses the wide grey river 9 times each day, carrying 27 passengers on every crossing. "
    "On Sundays it makes 2 extra trips. How many passengers does it carry on a Sunday?",
    "The orchard has 120 apple trees planted in rows of 15. A storm knocks down 8 trees. How many "
    "full rows of trees are still standing in the orchard after the storm?",
]
NUMBERS_CHANGED = (
    "Marisol bakes 48 cinnamon rolls for the village fair and sells them in boxes of 6. She gives "
    "away five boxes to her neighbours. How many boxes does she have left to sell at the fair?"
)
REWORDED_LAMPS = (
    "Every evening before the fog arrives, the keeper of the Brackwater Point lighthouse trims 6 "
    "wicks and shines 14 lamps made of brass. In a week, how many wicks and lamps does she tend?"
)
REWORDED_FERRY = (
    "Each day a ferry makes 9 crossings of the broad grey river with 27 people aboard every time; "
    "on a Sunday it adds 2 more trips. On Sundays, how many people ride the ferry?"
)


# Archives in memory, for the readers' tests and the hostile rows.
def zip_bytes(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return sink.getvalue()


def tar_bytes(members: dict[str, bytes], mode: str = "w") -> bytes:
    sink = io.BytesIO()
    with tarfile.open(fileobj=sink, mode=mode) as archive:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return sink.getvalue()
