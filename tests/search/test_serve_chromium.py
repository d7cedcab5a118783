"""The page ``contam-guard serve`` answers, rendered by Debian's headless Chromium (skipped with a
reason where it is not installed): an end-to-end test (``make test-e2e``)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
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
