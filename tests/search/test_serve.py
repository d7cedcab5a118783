"""``contam-guard serve``: a real server process and real HTTP requests (the page in a real
browser: test_serve_chromium.py, an end-to-end test)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest


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
