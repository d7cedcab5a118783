"""Words glued together: a leaked item copied in camelCase, or with U+180E for every space.

Normalisation reads ``ALamplighterInTheHarbourTown...`` as one word and GPT-4's character rule
keeps case, so before the second reading of glued words (``core.spec.glued``, decision E6) no
rule saw such a copy: exit 0 (``was``). The scan now reads a glued token again with its joins as
word boundaries, and the item's word runs fail GPT-3's rule on both paths (the compiled
prefilter, which sends the line to the exact path, and the numpy kernels), in JSON Lines with
escaped capitals and in plain text, naming the copy's own line. Text with long tokens that are
not glued words (base64, hex digests, identifiers) stays clean.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.security.hostile import CLEAN, LONG, SHORT, Row, cli, copy_project, make_project, put, run_row

WORDS = LONG.split()
CAMEL = WORDS[0] + "".join(w[:1].upper() + w[1:] for w in WORDS[1:])


def _jsonl(*texts: str, ensure_ascii: bool = False) -> Callable[[Path], list[str]]:
    def build(root: Path) -> list[str]:
        put(
            root,
            "train.jsonl",
            "".join(json.dumps({"text": t}, ensure_ascii=ensure_ascii) + "\n" for t in texts),
        )
        return ["scan", "train.jsonl"]

    return build


def _escaped_capitals(root: Path) -> list[str]:
    """Every capital written as a JSON escape (``\\u0054``): the prefilter's byte test must
    still send the line to the exact path."""
    escaped = "".join(f"\\u{ord(c):04x}" if c.isupper() else c for c in CAMEL)  # CAMEL needs no other escape
    put(root, "train.jsonl", '{"text": "' + escaped + '"}\n')
    return ["scan", "train.jsonl"]


def _text(content: str) -> Callable[[Path], list[str]]:
    def build(root: Path) -> list[str]:
        put(root, "notes.txt", content)
        return ["scan", "notes.txt"]

    return build


NOT_GLUED = " ".join(
    [
        base64.b64encode(hashlib.sha512(b"contam-guard").digest() * 8).decode(),
        hashlib.sha256(b"x").hexdigest(),
        "AbstractAnnotationConfigDispatcherServletInitializerFactoryBeanPostProcessor",
        CLEAN,
    ]
)

ROWS = [
    Row(
        name="camelCase copy in a JSONL line (the compiled prefilter)",
        build=_jsonl(CLEAN, CLEAN, CAMEL),
        code=1,
        was=0,
        says=("FAIL gpt3", "train.jsonl:3"),
    ),
    Row(
        name="camelCase copy, numpy kernels (CONTAM_GUARD_PURE=1)",
        build=_jsonl(CLEAN, CAMEL),
        code=1,
        was=0,
        says=("FAIL gpt3", "train.jsonl:2"),
        env={"CONTAM_GUARD_PURE": "1"},
    ),
    Row(
        name="camelCase copy after other text in the same string",
        build=_jsonl(CLEAN + ". " + CAMEL + " " + CLEAN),
        code=1,
        was=0,
        says=("FAIL gpt3",),
    ),
    Row(
        name="camelCase copy with every capital a JSON escape",
        build=_escaped_capitals,
        code=1,
        was=0,
        says=("FAIL gpt3",),
    ),
    Row(
        name="camelCase copy in a plain-text paragraph",
        build=_text(CLEAN + "\n\n" + CLEAN + "\n" + CAMEL + "\n"),
        code=1,
        was=0,
        says=("FAIL gpt3", "notes.txt:4"),
    ),
    Row(
        name="a verbatim copy of one item and a camelCase copy of another in one line",
        build=_jsonl(CLEAN, SHORT + ". " + CAMEL),
        code=1,
        was=1,
        says=("item g-long", "item g-short"),
    ),
    Row(
        name="base64, a hex digest and a long identifier (not glued words)",
        build=_jsonl(NOT_GLUED),
        code=0,
        was=0,
    ),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("glued"))


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(template: Path, tmp_path: Path, row: Row) -> None:
    run_row(row, copy_project(template, tmp_path / "project"))


@pytest.mark.parametrize("pure", ["0", "1"])
def test_the_finding_shows_the_copy_where_it_is(template: Path, tmp_path: Path, pure: str) -> None:
    """The pair's span and snippet are the copy's place in the string as written (the second
    reading's offsets mapped back), on the compiled path and with the numpy kernels.
    Before: no finding (exit 0)."""
    root = copy_project(template, tmp_path / "project")
    text = CLEAN + ". " + CAMEL + " " + CLEAN
    put(root, "train.jsonl", json.dumps({"text": CLEAN}) + "\n" + json.dumps({"text": text}) + "\n")
    done = cli(root, "scan", "train.jsonl", "--review-json", "review.json", env={"CONTAM_GUARD_PURE": pure})
    assert done.returncode == 1, done.stdout + done.stderr
    review = json.loads((root / "review.json").read_text(encoding="utf-8"))
    pairs = [p for f in review["findings"] if f["rule"] == "gpt3" for p in f["pairs"]]
    assert [(p["record"], p["line"]) for p in pairs] == [(1, 2)]
    start = text.index(CAMEL)
    # a run ends at its last word's last kept character: "quay", not "quay?"
    assert (pairs[0]["span"]["start"], pairs[0]["span"]["end"]) == (start, start + len(CAMEL.rstrip("?")))


def test_scrub_removes_a_camel_case_copy(template: Path, tmp_path: Path) -> None:
    """Scrub cuts the golden n-grams the second reading finds, so the scrubbed file scans clean.
    Before: nothing removed (the copy was one word to scrub as to the scan)."""
    root = copy_project(template, tmp_path / "project")
    put(root, "train.jsonl", json.dumps({"text": CLEAN}) + "\n" + json.dumps({"text": CAMEL}) + "\n")
    done = cli(root, "scrub", "train.jsonl", "-o", "clean.jsonl", "--log", "removed.jsonl")
    assert done.returncode == 0, done.stdout + done.stderr
    removed = [json.loads(line) for line in (root / "removed.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["record"], r["line"]) for r in removed] == [(1, 2)]
    kept = (root / "clean.jsonl").read_text(encoding="utf-8")
    assert CLEAN in kept and "Lamplighter" not in kept
    assert cli(root, "scan", "clean.jsonl").returncode == 0
