"""The HTML review renders in a real browser (Debian's headless Chromium)."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
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


GOLDEN_TEXT = "Puzzle seven <easy>: " + LEAK + "? Show your work & explain."
"""The golden item: the leak with text around it (and characters HTML must escape)."""
# The training side copies the leak with other case and punctuation: the golden side's mark is
# found by normalised words, as the match was, and shows the golden item's own characters.
COPIED = LEAK.upper().replace(", ", " -- ")


def _project(tmp_path: Path) -> tuple[Path, str]:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "lh-1", "question": GOLDEN_TEXT}) + "\n")
    train = tmp_path / "train.jsonl"
    rows = [
        {"text": "Nothing to see here, a clean record about <b>tags</b> & ampersands."},
        {"text": "Copied into a forum post: " + COPIED + "! Answer below."},
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
    return train, manifest


@pytest.fixture
def review(tmp_path: Path) -> Path:
    train, manifest = _project(tmp_path)
    out = tmp_path / "review.html"
    assert run(["scan", str(train), "--review-html", str(out), "--manifest", manifest]) == 1
    return out


@pytest.fixture
def golden_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The same review with ``--show-golden`` (run from the project root, where the golden
    file's registered path resolves)."""
    monkeypatch.chdir(tmp_path)
    train, manifest = _project(tmp_path)
    out = tmp_path / "review-golden.html"
    args = ["scan", str(train), "--review-html", str(out), "--manifest", manifest, "--show-golden"]
    assert run(args) == 1
    return out


class _Marks(HTMLParser):
    """The text of every <mark>, and whether it sits in the golden item's block."""

    def __init__(self) -> None:
        super().__init__()
        self.marks: list[tuple[bool, str]] = []
        self._golden_depth = 0
        self._depth = 0
        self._mark: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "div":
            self._depth += 1
            if ("class", "golden") in attrs:
                self._golden_depth = self._depth
        if tag == "mark":
            self._mark = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            if self._depth == self._golden_depth:
                self._golden_depth = 0
            self._depth -= 1
        if tag == "mark" and self._mark is not None:
            self.marks.append((self._golden_depth > 0, "".join(self._mark)))
            self._mark = None

    def handle_data(self, data: str) -> None:
        if self._mark is not None:
            self._mark.append(data)


def marks(page: str) -> list[tuple[bool, str]]:
    parser = _Marks()
    parser.feed(page)
    return parser.marks


def chromium_dom(page: Path, profile: Path) -> str:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def highlighted_pixels(page: Path, shot: Path, profile: Path) -> int:
    """Pixels painted in the <mark> colour (#ffe082) in a 1000x1000 screenshot of ``page``."""
    assert CHROMIUM is not None
    chrome = [CHROMIUM, *FLAGS]
    subprocess.run(
        [
            *chrome,
            f"--user-data-dir={profile}",
            f"--screenshot={shot}",
            "--window-size=1000,1000",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    pixels = matplotlib.image.imread(shot)[..., :3]
    colour = np.array([0xFF, 0xE0, 0x82]) / 255
    return int(np.count_nonzero(np.all(np.abs(pixels - colour) < 0.02, axis=-1)))


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
    assert "<mark>" + COPIED[:40] in dom.replace("\n", " ")
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


def test_golden_side_marks_the_shared_run_when_shown(review: Path, golden_review: Path) -> None:
    # Without --show-golden: one mark, the training side's (as copied: upper case).
    assert marks(review.read_text()) == [(False, COPIED)]
    # With it: the golden item's own characters of the same run are marked too.
    page = golden_review.read_text()
    assert marks(page) == [(False, COPIED), (True, LEAK)]
    assert "Puzzle seven &lt;easy&gt;: <mark>" in page and "</mark>? Show your work &amp; explain." in page


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_golden_side_mark_renders_in_headless_chromium(
    review: Path, golden_review: Path, tmp_path: Path
) -> None:
    profile = tmp_path / "profile"
    # The browser's own parse of the page: the golden block holds a <mark> with the shared run.
    assert marks(chromium_dom(golden_review, profile)) == [(False, COPIED), (True, LEAK)]
    # And it paints it: the golden side adds about as much highlight as the training side has.
    plain = highlighted_pixels(review, tmp_path / "plain.png", profile)
    shown = highlighted_pixels(golden_review, tmp_path / "shown.png", profile)
    assert plain > 1000 and shown > 1.6 * plain, (plain, shown)
