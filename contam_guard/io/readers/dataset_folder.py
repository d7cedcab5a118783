"""A folder written by Hugging Face ``datasets``' ``Dataset.save_to_disk``: one dataset.

Such a folder holds the dataset's rows in Arrow IPC stream shards (``data-00000-of-00002.arrow``
...), listed in order in ``state.json`` (``_data_files``), beside ``dataset_info.json`` (the
features and a description). It is read as the one dataset ``datasets.load_from_disk`` gives:
its shards in that order, rows numbered on across them, findings naming the folder. A
``DatasetDict``'s folder (``dataset_dict.json``) holds one such folder per split, each read as
a dataset of its own. This module only recognises the folder (no pyarrow: the folder walk uses
it); ``io.readers.arrow_ipc`` reads it.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from contam_guard.errors import InputError

STATE = "state.json"
DICT = "dataset_dict.json"


def is_dataset_folder(folder: Path) -> bool:
    """Whether ``folder`` was written by ``Dataset.save_to_disk`` (its ``state.json`` lists data
    files)."""
    state = folder / STATE
    try:
        if not state.is_file() or state.stat().st_size > (64 << 20):
            return False
        data = json.loads(state.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("_data_files"), list)


def is_dataset_dict_file(path: Path) -> bool:
    """Whether ``path`` is a ``DatasetDict``'s ``dataset_dict.json``: the names of its splits,
    each a dataset folder beside it (read as such), so the file itself is not data."""
    if path.name != DICT:
        return False
    try:
        data = json.loads(path.read_bytes()) if path.stat().st_size < (1 << 20) else None
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict) or set(data) != {"splits"} or not isinstance(data["splits"], list):
        return False
    return all(isinstance(s, str) and is_dataset_folder(path.parent / s) for s in data["splits"])


def shards(folder: Path, display: str) -> list[Path]:
    """The dataset's Arrow shards, in order; an ``InputError`` naming ``state.json`` when it
    does not list them as ``save_to_disk`` writes it, or a shard is missing."""
    where = f"{display}/{STATE}"
    try:
        data = json.loads((folder / STATE).read_bytes())
    except (OSError, ValueError) as exc:
        raise InputError(where, f"cannot read the dataset's state: {exc}") from exc
    entries = data.get("_data_files") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise InputError(where, "no _data_files list: not a folder written by Dataset.save_to_disk")
    found: list[Path] = []
    for entry in entries:
        name = entry.get("filename") if isinstance(entry, dict) else None
        if not isinstance(name, str) or PurePosixPath(name).name != name or name in ("", ".", ".."):
            raise InputError(where, f"a data file entry that is not a file name in the folder: {entry!r}")
        path = folder / name
        if not path.is_file():
            raise InputError(f"{display}/{name}", "listed in state.json but missing")
        found.append(path)
    return found
