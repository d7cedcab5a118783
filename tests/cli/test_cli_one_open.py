"""A default scan (every rule) opens each input file once: one read feeds every rule family.

The real command line runs under ``strace -f -e trace=openat`` (every process it starts, too);
each successful ``openat`` that returns a file descriptor for reading is counted by the path the
kernel resolved (``-y``), so a relative name and an absolute one count as the same file. Opens
for a stat only (``O_PATH``) and folders are not reads and do not count.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.conftest import FILLER, Project, leak

STRACE = shutil.which("strace") or ("/usr/bin/strace" if Path("/usr/bin/strace").exists() else None)
pytestmark = pytest.mark.skipif(STRACE is None, reason="strace is not installed (apt-get install strace)")

OPENED = re.compile(r'openat\([^"]*"[^"]*", ([A-Z_|]+)[^)]*\) = \d+<([^>]*)>')


def read_opens(log: Path) -> Counter[str]:
    """How many times each file was opened for reading, by resolved path."""
    opens: Counter[str] = Counter()
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = OPENED.search(line)
        if match is None or "O_PATH" in match[1] or "O_DIRECTORY" in match[1]:
            continue
        opens[match[2]] += 1
    return opens


def test_a_default_scan_opens_each_input_once(registered: Project, tmp_path: Path) -> None:
    question = registered.question_words(0)
    jsonl = registered.training("train.jsonl", [FILLER, leak(question, 0, len(question)), FILLER])
    text = tmp_path / "notes.txt"
    text.write_text(f"{FILLER}\n\n{leak(registered.question_words(1), 2, 14)}\n", encoding="utf-8")
    parquet = tmp_path / "rows.parquet"
    rows = [FILLER, leak(registered.question_words(2), 0, 16), FILLER]
    pq.write_table(pa.table({"text": rows}), parquet, row_group_size=1)
    inputs = [jsonl, text, parquet]
    log = tmp_path / "strace.log"
    assert STRACE is not None  # the module is skipped otherwise
    argv = [STRACE, "-f", "-y", "-e", "trace=openat", "-o", str(log), sys.executable, "-m", "contam_guard"]
    proc = subprocess.run(
        [*argv, "scan", *(p.name for p in inputs)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # every file holds a leak: read and found
    for name in ("train.jsonl", "notes.txt", "rows.parquet"):
        assert name in proc.stdout, proc.stdout
    opens = read_opens(log)
    assert opens, f"strace logged no open: {log.read_text()[:2000]}"
    counts = {p.name: opens[str(p.resolve())] for p in inputs}
    assert counts == {p.name: 1 for p in inputs}
