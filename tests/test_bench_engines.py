"""The benchmark's Spark rows: the row with the class archive saves it with an untimed run of its
own scan (the Spark scan, never another row's command) before its first timed run, and the other
row has the archive off."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks import ours

pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")
pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")


def test_the_archive_row_saves_with_its_own_scan_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = {job.config: job for job in ours.engine_jobs(tmp_path / "corpus.jsonl", tmp_path / "m.json", 1, 1)}
    saving, off = rows[ours.SPARK], rows[ours.SPARK_NO_ARCHIVE]
    assert off.env is not None and off.env[ours.CLASS_ARCHIVE_ENV] == "off" and off.prepare is None
    assert saving.env is not None and saving.prepare is not None
    archives = Path(saving.env[ours.CLASS_ARCHIVE_ENV])
    ran: list[list[str]] = []

    def run(argv: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        ran.append(argv)
        assert options["env"][ours.CLASS_ARCHIVE_ENV] == str(archives)
        archives.mkdir(parents=True, exist_ok=True)
        (archives / "spark-x.jsa").write_bytes(b"classes")
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(subprocess, "run", run)  # benchmarks.ours calls subprocess.run
    run_dir = tmp_path / "run"
    saving.prepare(run_dir)
    saving.prepare(run_dir)  # the archive is there: nothing runs
    assert ran == [[arg.replace("{run}", str(run_dir)) for arg in saving.steps[0]]]
    assert "spark" in ran[0] and "ray" not in ran[0]
