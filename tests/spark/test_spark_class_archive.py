"""A local Spark scan saves Spark's classes once, and later JVMs map them (the real JVM).

The command line, in processes of its own (each starts its own JVM): the first scan on a local
master says that it saves the archive and leaves exactly one archive, finished, in the folder
``CONTAM_GUARD_SPARK_CLASS_ARCHIVE`` names; a session started after it has the archive mapped
into its JVM (``/proc/<pid>/maps``: the JVM would silently start without one it cannot use); the
next scan says nothing of it, leaves the archive as it was, and prints the same report and writes
the same items and pairs CSVs as the first scan (and the same CSVs as the local engine). An
archive damaged on disk (cut short: the JVM crashes as it maps it) is removed and the scan runs
without it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contam_guard.engines.spark.class_archive import ARCHIVE_ENV
from tests.helpers import REPO

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the JVM's /proc/<pid>/maps"),
    pytest.mark.skipif(
        shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="Spark needs Java"
    ),
]

EXAMPLES = REPO / "examples"
SAVES = "saves Spark's classes"

MAPPED = """
import sys
from pyspark import SparkContext
from contam_guard.engines.spark.session import local_archive, session
archive = local_archive("local[1]")
assert archive is not None and archive.writing is None, archive
spark = session("local[1]", archive=archive)
with open(f"/proc/{SparkContext._gateway.proc.pid}/maps") as maps:
    print(str(archive.path) in maps.read())
spark.stop()
"""


def _run(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _scan(project: Path, env: dict[str, str], name: str, *engine: str) -> subprocess.CompletedProcess[str]:
    csvs = ("--items-csv", f"{name}-items.csv", "--pairs-csv", f"{name}-pairs.csv")
    return _run(project, env, "-m", "contam_guard", "scan", "train.jsonl", *csvs, *engine)


def _same_csvs(project: Path, one: str, other: str) -> bool:
    return all(
        (project / f"{one}-{kind}.csv").read_bytes() == (project / f"{other}-{kind}.csv").read_bytes()
        for kind in ("items", "pairs")
    )


@pytest.mark.slow
def test_a_local_scan_saves_the_classes_once_and_later_jvms_map_them(tmp_path: Path) -> None:
    # A space in the folder's name: Spark splits the JVM options as a shell would.
    project, archives = tmp_path / "project", tmp_path / "class archives"
    project.mkdir()
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", project / "golden.jsonl")
    shutil.copy(EXAMPLES / "data" / "train.jsonl", project / "train.jsonl")
    env = {**os.environ, ARCHIVE_ENV: str(archives)}
    assert _run(project, env, "-m", "contam_guard", "init").returncode == 0
    registered = _run(
        project, env, "-m", "contam_guard", "register", "am", "golden.jsonl", "--field", "question"
    )
    assert registered.returncode == 0, registered.stderr
    assert _scan(project, env, "local").returncode == 1
    spark = ("--engine", "spark", "--master", "local[1]")

    first = _scan(project, env, "first", *spark)
    assert first.returncode == 1, first.stderr[-2000:]
    assert SAVES in first.stderr
    saved = sorted(archives.iterdir())
    assert len(saved) == 1 and saved[0].suffix == ".jsa", saved
    assert saved[0].stat().st_size > 1 << 20
    written = saved[0].stat().st_mtime_ns

    mapped = _run(project, env, "-c", MAPPED)
    assert mapped.returncode == 0, mapped.stderr[-2000:]
    assert mapped.stdout.strip().splitlines()[-1] == "True"

    second = _scan(project, env, "second", *spark)
    assert second.returncode == 1, second.stderr[-2000:]
    assert SAVES not in second.stderr
    assert first.stdout == second.stdout  # nothing of the JVM's archive work reaches the output
    assert sorted(archives.iterdir()) == saved and saved[0].stat().st_mtime_ns == written
    assert _same_csvs(project, "first", "second") and _same_csvs(project, "first", "local")

    # Damaged on disk (cut short): the JVM crashes as it maps it; the scan starts Spark again
    # without it, removes it, and its crash log is not left in the project.
    whole = saved[0].read_bytes()
    saved[0].chmod(0o644)
    saved[0].write_bytes(whole[: len(whole) // 2])
    third = _scan(project, env, "third", *spark)
    assert third.returncode == 1, third.stderr[-2000:]
    assert "could not start with the classes saved" in third.stderr
    assert not any(archives.iterdir())
    assert not list(project.glob("hs_err*"))
    assert _same_csvs(project, "first", "third")
