"""The search tests' shared fixture: a real ``contam-guard serve`` process over a small index."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import Runner, write_jsonl


@pytest.fixture
def served(cli: Runner, tmp_path: Path) -> Iterator[str]:
    rows = [
        {"text": "the train ride took 3 hours; mail jane.doe@example.com for the tickets"},
        {"text": "a <b>bold</b> claim about the train ride"},
    ]
    write_jsonl(tmp_path / "data.jsonl", rows)
    assert cli("index", tmp_path / "data.jsonl", "--index", tmp_path / "idx").code == 0
    command = [sys.executable, "-m", "contam_guard", "serve", "--index", str(tmp_path / "idx"), "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            assert "serving" in line, line
            yield line.split(" on ", 1)[1].split()[0]
        finally:
            server.terminate()
            server.wait(timeout=30)
