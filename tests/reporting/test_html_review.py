"""The HTML review renders in a real browser (Debian's headless Chromium)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

from contam_guard.cli import main

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
]
LEAK = (
    "A lighthouse keeper polished 14 brass lamps every evening, and each lamp took "
    "exactly nine minutes, so how many minutes did the keeper spend polishing in a week"
)


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    return int(exit_info.value.code or 0)


@pytest.fixture
def review(tmp_path: Path) -> Path:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "lh-1", "question": LEAK + "?"}) + "\n")
    train = tmp_path / "train.jsonl"
    rows = [
        {"text": "Nothing to see here, a clean record about <b>tags</b> & ampersands."},
        {"text": "Copied into a forum post: " + LEAK + "! Answer below."},
    ]
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run(["init", str(tmp_path)]) == 0
    manifest = str(tmp_path / ".contam-guard" / "manifest.json")
    assert (
        run(
            ["register", "lh", str(golden), "--field", "question", "--id-field", "id", "--manifest", manifest]
        )
        == 0
    )
    out = tmp_path / "review.html"
    assert run(["scan", str(train), "--review-html", str(out), "--manifest", manifest]) == 1
    return out


def test_html_review_is_escaped_and_self_contained(review: Path) -> None:
    page = review.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<mark>" in page and "http://" not in page and "<script" not in page
    assert page.count('class="finding ') >= 1


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_html_review_renders_in_headless_chromium(review: Path, tmp_path: Path) -> None:
    assert CHROMIUM is not None
    profile = ["--user-data-dir=" + str(tmp_path / "profile")]
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, *profile, "--dump-dom", review.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "contam-guard review" in dom
    assert "<mark>" + LEAK[:40] in dom.replace("\n", " ")
    shot = tmp_path / "review.png"
    subprocess.run(
        [CHROMIUM, *FLAGS, *profile, f"--screenshot={shot}", "--window-size=1000,800", review.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[0] == 800 and pixels.shape[1] == 1000
    # The page drew something: text, the highlight and the coloured border are not all white.
    assert float(np.mean(pixels[..., :3] < 0.9)) > 0.01
