"""Every page of the built docs site renders in Debian's headless Chromium, served over loopback
HTTP as a reader would open it: the theme's scripts run (they mark the document ``js``), the
page's article and its title are there, and the browser logs no uncaught script error. An
end-to-end test (``make test-e2e``); skipped with a reason where Chromium is not installed."""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_every_page_renders_in_headless_chromium(site: Path, served: str, tmp_path: Path) -> None:
    assert CHROMIUM is not None
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) >= 30
    failures: list[str] = []
    for page in pages:
        done = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", f"{served}/{page}"],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        dom, log = done.stdout, done.stderr
        title = re.search(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
        problems = [
            "exit " + str(done.returncode) if done.returncode else "",
            "" if re.search(r'<html[^>]* class="[^"]*\bjs\b', dom) else "the theme's scripts did not run",
            "" if 'class="md-content__inner' in dom else "no article",
            "" if title and re.sub(r"<[^>]+>", "", title.group(1)).strip() else "no title",
            "script error: " + log[log.find("Uncaught") :][:200] if "Uncaught" in log else "",
        ]
        failures += [f"{page}: {p}" for p in problems if p]
    assert not failures, "\n".join(failures)
