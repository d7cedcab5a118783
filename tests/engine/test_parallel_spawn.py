"""``--jobs`` with spawned workers (macOS and Windows start workers so; Linux forks): each worker
maps the manifest's files from their path and checks the index's digest; only the path, the
digest and the seal key (for a keyed manifest) reach it, never the manifest's content.

The start method is chosen from ``sys.platform``; here ``engines.parallel.sys`` is replaced by a
stand-in naming another platform, so the real spawn start runs on Linux.
"""

from __future__ import annotations

import json
import pickle
import types
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from contam_guard.core.register.build import GoldenSource, build_set
from contam_guard.core.spec.hashing import HashKey
from contam_guard.engines import parallel
from contam_guard.errors import ManifestError
from contam_guard.io.keys import key_for, unlocked
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest, Spec
from contam_guard.io.manifest.sealing import SealKey, new_salt
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.sources import Source
from tests.engine.test_parallel import QUESTIONS
from tests.helpers import scan, scan_jobs

SECRET = "a-long-secret-for-the-spawned-worker-tests-0123456789"


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """Workers are spawned; returns the pool initializer's arguments, as each call gave them."""
    monkeypatch.setattr(parallel, "sys", types.SimpleNamespace(platform="darwin"))
    calls: list[tuple[object, ...]] = []

    def recording(*args: Any, **kwargs: Any) -> ProcessPoolExecutor:
        calls.append(tuple(kwargs["initargs"]))
        return ProcessPoolExecutor(*args, **kwargs)  # the one engines.parallel imports

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", recording)
    return calls


def make(tmp_path: Path, keyed: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Source]]:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"question": q}) + "\n" for q in QUESTIONS))
    key = HashKey(SECRET) if keyed else None
    if keyed:
        monkeypatch.setenv("CONTAM_GUARD_KEY", SECRET)
    else:
        monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    built = build_set([GoldenSource(golden, "golden.jsonl")], ["question"], None, key, None)
    manifest = Manifest(sets={"g": built})
    if key is not None:
        salt = new_salt()
        seal = SealKey.derive(SECRET, salt)
        manifest = Manifest(
            sets={"g": built}, spec=Spec.current(keyed=True), key_check=key.check, salt=salt, seal=seal
        )
    path = tmp_path / "manifest.json"
    store.save(path, manifest)
    rows = [
        json.dumps(
            {"text": f"record {n} about gardens" + (f" and {QUESTIONS[n % 2]}" if n % 301 == 5 else "")}
        )
        for n in range(2000)
    ]
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(rows) + "\n")
    return path, [Source(train, "train.jsonl")]


@pytest.mark.parametrize("keyed", [False, True], ids=["unkeyed", "keyed"])
def test_spawned_workers_map_the_files_and_give_the_one_process_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[tuple[object, ...]], keyed: bool
) -> None:
    path, sources = make(tmp_path, keyed, monkeypatch)
    assert store.load(path).sealed == keyed  # without the key, a keyed one shows nothing
    manifest = unlocked(store.load(path), "CONTAM_GUARD_KEY")
    options = ReadOptions(fields=("text",))
    key = key_for(manifest, "CONTAM_GUARD_KEY")
    one = scan(manifest, sources, options, key=key)
    two = scan_jobs(path, "CONTAM_GUARD_KEY", sources, options, jobs=2, min_window_bytes=10_000)
    assert len(one.pairs) >= 6 and one.pairs == two.pairs
    assert np.array_equal(one.totals.run, two.totals.run)
    assert np.array_equal(one.totals.window_found, two.totals.window_found)
    # What went to the workers: a token (the index's digest), the index's path, the seal key, the
    # settings and the spawn flag; nothing of the manifest's content.
    [(spec, is_spawned)] = spawned
    assert (spec.token, spec.manifest_path, is_spawned) == (manifest.digest, str(path), True)  # type: ignore[attr-defined]
    assert (spec.seal is not None) == keyed  # type: ignore[attr-defined]
    sent = pickle.dumps(spawned[0])
    assert len(sent) < 8000
    for blob in (p.read_bytes() for p in (tmp_path / "sets").rglob("*.bin")):
        assert blob[-64:] not in sent


def test_a_spawned_worker_refuses_a_manifest_changed_since_the_parent_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[tuple[object, ...]]
) -> None:
    path, sources = make(tmp_path, False, monkeypatch)
    loaded = store.load(path)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(
        json.dumps({"question": "An owl counted nine lanterns along the quiet harbour wall"}) + "\n"
    )
    more = build_set([GoldenSource(extra, "extra.jsonl")], ["question"], None, None, None)
    store.save(path, loaded.model_copy(update={"sets": {**loaded.sets, "x": more}}))  # a register meanwhile
    with pytest.raises(ManifestError, match="changed after the scan started"):
        scan_jobs(
            path,
            "CONTAM_GUARD_KEY",
            sources,
            ReadOptions(fields=("text",)),
            jobs=2,
            min_window_bytes=10_000,
            manifest=loaded,
        )
