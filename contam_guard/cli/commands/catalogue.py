"""``contam-guard benchmarks``: the catalogue, and where each benchmark's data would come from."""

from __future__ import annotations

import importlib.util

from contam_guard.catalogue import BENCHMARKS, Benchmark
from contam_guard.catalogue.fetch import RECORD_FORMATS, golden_folder
from contam_guard.core.config import LoadedConfig
from contam_guard.errors import ExitCode
from contam_guard.io.readers import detect_format
from contam_guard.report import console


def run(loaded: LoadedConfig) -> int:
    rows = [("key", "benchmark", "source", "split", "id", "views", "data")]
    have_datasets = importlib.util.find_spec("datasets") is not None
    for b in BENCHMARKS:
        views = ", ".join(f"{v.kind}={v.field}" for v in b.views)
        data = _data(b, loaded, have_datasets)
        rows.append((b.key, b.title, b.source, b.split, b.id_field or "-", views, data))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]) - 1)]
    for row in rows:
        console.info("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
    console.info(
        "register one: contam-guard register NAME --benchmark KEY [PATH] (PATH: a file or folder of "
        "the split; without it, golden/KEY/ in the project, an installed package, or the datasets library)"
    )
    return ExitCode.CLEAN


def _data(benchmark: Benchmark, loaded: LoadedConfig, have_datasets: bool) -> str:
    """Where ``register --benchmark`` would take the data from, here and now."""
    folder = golden_folder(benchmark, loaded.root)
    if folder.is_dir() and any(detect_format(f) in RECORD_FORMATS for f in folder.rglob("*")):
        return f"{folder.relative_to(loaded.root).as_posix()}/"
    package = benchmark.package
    if package is not None and importlib.util.find_spec(package.module) is not None:
        return f"package {package.pip}"
    if have_datasets:
        return "datasets (Hugging Face cache or Hub)"
    return f"none: put {benchmark.local} in {folder.relative_to(loaded.root).as_posix()}/"
