"""Scrub on Spark against the local scrub on the same records: the same rows out (untouched
records, pieces with where they came from, dropped records gone) and the same log."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from contam_guard.core import scrub
from contam_guard.core.config import ScrubSettings
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.register.views import hash_view
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import GoldenFile, GoldenSet, Manifest, SetVersion
from contam_guard.io.readers import ReadOptions

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")

from contam_guard.engines.spark.scrub import scrub_dataframe

from .conftest import LOCAL, on_masters

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def local_scrub(
    path: Path, manifest: Manifest, options: scrub.ScrubOptions
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], scrub.ScrubPlan]:
    """The local scrub of a JSONL file: its output records and its log, parsed."""
    out, log = path.with_suffix(".out.jsonl"), path.with_suffix(".log.jsonl")
    job = scrub.Job(path, path.name, "jsonl", out)
    plan = scrub.plan(ManifestIndex.from_manifest(manifest), [job], options, None)
    scrub.apply(plan, log)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    for entry in entries:
        entry["line"] = None  # a DataFrame has no lines
    return rows, entries, plan


def spark_scrub(
    spark: SparkSession,
    rows: list[dict[str, Any]],
    manifest: Manifest,
    options: scrub.ScrubOptions,
    name: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    data = [(r["id"], r["text"]) for r in rows]
    df = spark.createDataFrame(spark.sparkContext.parallelize(data, 3), "id string, text string")
    scrubbed, log = scrub_dataframe(df, manifest, id_col="id", source=name, options=options)
    out = []
    for row in scrubbed.collect():
        record = {"id": row.id, "text": row.text}
        if row.contam_guard_piece is not None:
            record["contam_guard_piece"] = row.contam_guard_piece.asDict()
        out.append(record)
    return out, [json.loads(r.entry) for r in log.collect()]


@on_masters(LOCAL)  # on the cluster too, scrub runs in the several-rounds test below
def test_spark_scrub_matches_local_on_the_example(
    spark: SparkSession, project: Path, examples: Path, tmp_path: Path
) -> None:
    path = tmp_path / "train.jsonl"
    path.write_bytes((examples / "data" / "train.jsonl").read_bytes())
    manifest = store.load(project / ".contam-guard" / "manifest.json")
    options = scrub.ScrubOptions(
        ScrubSettings(window=20, min_piece_chars=50), read=ReadOptions(fields=("text",), id_field="id")
    )
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    expected, log, plan = local_scrub(path, manifest, options)
    got, got_log = spark_scrub(spark, rows, manifest, options, "train.jsonl")

    assert got == expected
    assert got_log == log
    assert plan.stats.touched == 4 and plan.stats.pieces > 0  # pieces, and records dropped


VOCAB = ["a", "b", "ab", "ba", "c"]


def corpus(seed: int) -> tuple[list[str], list[str]]:
    """Records of a few short words with shared phrases (collisions, common n-grams and cuts
    through words are frequent), and golden items cut from them."""
    rng = random.Random(seed)
    phrases = [[rng.choice(VOCAB) for _ in range(rng.randint(7, 12))] for _ in range(3)]
    records = []
    for _ in range(8):
        words: list[str] = []
        for _ in range(rng.randint(1, 4)):
            words += rng.choice(phrases) if rng.random() < 0.5 else [rng.choice(VOCAB) for _ in range(5)]
        records.append("".join(w + rng.choice([" ", "  ", ", ", ". ", " ("]) for w in words).strip())
    items = [" ".join(rng.choice(phrases)[: rng.randint(7, 12)]) for _ in range(3)]
    return records, items


def manifest_of(items: list[str]) -> Manifest:
    view = hash_view("text", items, None)
    golden = GoldenSet(
        version=1,
        digest="synthetic",
        id_field=None,
        files=[GoldenFile(path="gold.jsonl", items=len(items))],
        ids=[f"i{g}" for g in range(len(items))],
        views={"text": view},
        history=[SetVersion(version=1, digest="synthetic", items=len(items))],
    )
    return Manifest(sets={"gold": golden})


def test_spark_scrub_matches_local_over_several_rounds(spark: SparkSession, tmp_path: Path) -> None:
    options = scrub.ScrubOptions(
        ScrubSettings(mode="pieces", n=5, window=4, min_piece_chars=4, max_pieces=3, max_doc_freq=3),
        read=ReadOptions(fields=("text",), id_field="id"),
        batch_chars=256,
    )
    # The first corpus (in a fixed order of seeds) whose local scrub needs a second round.
    for seed in range(200):
        records, items = corpus(seed)
        manifest = manifest_of(items)
        rows = [{"id": f"r{i}", "text": t} for i, t in enumerate(records)]
        path = tmp_path / f"corpus{seed}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        expected, log, plan = local_scrub(path, manifest, options)
        if plan.stats.rounds >= 2 and plan.stats.pieces:
            break
    else:
        pytest.fail("no corpus needed a second round")

    got, got_log = spark_scrub(spark, rows, manifest, options, path.name)

    assert got == expected
    assert got_log == log
    assert max(r["round"] for e in got_log for r in e["removed"]) >= 2
    assert np.unique([e["mode"] for e in got_log]).tolist() == ["pieces"]
