"""``contam-guard serve``: a real server process, real HTTP requests, and the page rendered by
headless Chromium (skipped with a reason where no Chromium is installed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import Runner, write_jsonl

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


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


def test_the_api_answers_like_search_json_with_pii_masked(served: str) -> None:
    with urllib.request.urlopen(f"{served}api/search?q=train+ride&mode=exact", timeout=30) as answer:
        body = json.loads(answer.read())
    assert (body["mode"], body["count"], body["documents"]) == ("exact", 2, 2)
    first = body["hits"][0]
    assert (first["record"], first["line"]) == (0, 1)
    assert "«train ride»" in first["snippet"]
    assert "[EMAIL]" in first["snippet"] and "jane.doe" not in first["snippet"]
    with urllib.request.urlopen(f"{served}api/search?q=train+ride", timeout=30) as answer:
        assert json.loads(answer.read())["mode"] == "bm25"


def test_it_is_read_only(served: str) -> None:
    for method in ("POST", "PUT", "DELETE"):
        request = urllib.request.Request(f"{served}?q=x", data=b"x", method=method)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=30)
        info.value.close()
        assert info.value.code == 405


PAGES = [("exact", "2 occurrences in 2 records"), ("bm25", "ranked by BM25")]


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
@pytest.mark.parametrize(("mode", "summary"), PAGES)
def test_the_page_in_headless_chromium(served: str, mode: str, summary: str) -> None:
    url = f"{served}?q=train+ride&mode={mode}&limit=5"
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
    assert summary in dom
    assert dom.count('<div class="hit">') == 2
    assert "data.jsonl record 0 line 1" in dom and "data.jsonl record 1 line 2" in dom
    assert "<mark>train ride</mark>" in dom
    assert '<span class="pii">[EMAIL]</span>' in dom and "jane.doe" not in dom
    assert "&lt;b&gt;bold&lt;/b&gt;" in dom  # training text is escaped, never markup
    assert f'value="{mode}" checked' in dom
