"""Fixtures for the CLI tests: an in-process runner, a subprocess runner and a small project.

Every test runs in its own tmp folder (the current folder is changed to it) with
``CONTAM_GUARD_KEY`` unset, so nothing reads or writes the repository's own files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from contam_guard.core.spec.normalise import words
from tests.helpers import Result, Runner, write_jsonl

# Original text (not from any benchmark), with distinctive long words.
GOLDEN: list[dict[str, str]] = [
    {
        "id": "lx-01",
        "question": "The glassblower of Vennick Harbour shaped fourteen turquoise lanterns on Monday and "
        "twice as many amber lanterns on Tuesday. How many lanterns did the glassblower shape "
        "across both mornings?",
        "answer": "Tuesday brought 2 x 14 = 28 amber lanterns, so the workshop finished 14 + 28 = 42 "
        "lanterns altogether. #### 42",
    },
    {
        "id": "lx-02",
        "question": "A beekeeper named Ottoline collected honey from nine wooden hives, gathering eleven "
        "jars from each hive before the thunderstorm arrived over the orchard. How many jars did "
        "Ottoline fill?",
        "answer": "Nine hives times eleven jars makes 99 jars of honey for Ottoline. #### 99",
    },
    {
        "id": "lx-03",
        "question": "During the lantern festival, a cartographer sold forty-two parchment maps in the "
        "morning and eighteen fewer maps after lunch. How many parchment maps did the "
        "cartographer sell that day?",
        "answer": "After lunch the stall sold 42 - 18 = 24 maps, giving 42 + 24 = 66 parchment maps. #### 66",
    },
    {
        "id": "lx-04",
        "question": "Quillon the ferryman carries seven passengers on each crossing of the Marrowdale "
        "river and completes thirteen crossings every weekday. How many passengers ride his ferry "
        "in a single weekday?",
        "answer": "Seven passengers on each of thirteen crossings is 7 x 13 = 91 passengers. #### 91",
    },
    {
        "id": "lx-05",
        "question": "A greenhouse keeper planted rows of saffron crocuses, thirty bulbs per row across "
        "twelve rows, and then a hailstorm destroyed fifty-five bulbs overnight. How many saffron "
        "bulbs survived the hailstorm?",
        "answer": "Twelve rows of thirty give 360 bulbs, and 360 - 55 = 305 bulbs survived. #### 305",
    },
]

FILLER = "notes from the allotment society say the compost heap needs turning before winter"
"""Training prose that shares no run of five words with any golden item."""

GOLDEN_REL = "golden/bench.jsonl"
MANIFEST_REL = ".contam-guard/manifest.json"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)


@pytest.fixture
def cg_proc() -> Callable[..., Result]:
    """Run ``python -m contam_guard ARGS`` in a fresh process (``cwd``, ``env`` keywords)."""

    def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> Result:
        base = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
        proc = subprocess.run(
            [sys.executable, "-m", "contam_guard", *(os.fspath(arg) for arg in args)],
            cwd=cwd,
            env={**base, **(env or {})},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


class Project:
    """A tmp project: ``init`` done, the golden file written at ``golden/bench.jsonl``."""

    def __init__(self, root: Path, cli: Runner) -> None:
        self.root = root
        self.cli = cli
        self.items = [dict(item) for item in GOLDEN]
        self.golden = write_jsonl(root / GOLDEN_REL, self.items)
        self.manifest = root / MANIFEST_REL

    def register(self, *fields: str, name: str = "bench", extra: tuple[str, ...] = ()) -> Result:
        field_args = [arg for f in fields or ("question",) for arg in ("--field", f)]
        return self.cli("register", name, GOLDEN_REL, *field_args, "--id-field", "id", *extra)

    def training(self, name: str, texts: Iterable[str]) -> Path:
        return write_jsonl(self.root / name, ({"text": t} for t in texts))

    def question_words(self, index: int) -> list[str]:
        return words(self.items[index]["question"])

    def manifest_json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.manifest.read_text(encoding="utf-8"))
        return data


@pytest.fixture
def project(tmp_path: Path, cli: Runner) -> Project:
    result = cli("init")
    assert result.code == 0, result.output
    return Project(tmp_path, cli)


@pytest.fixture
def registered(project: Project) -> Project:
    """The project with ``bench`` registered (view ``question``, ids from ``id``)."""
    result = project.register()
    assert result.code == 0, result.output
    return project


LeakText = Callable[[list[str], int, int], str]
"""The ``leak_text`` fixture's type (``leak``)."""


def leak(tokens: list[str], start: int, count: int) -> str:
    """A training text holding exactly ``tokens[start:start + count]`` between unrelated words."""
    return f"{FILLER} zanzibar {' '.join(tokens[start : start + count])} quibble {FILLER}"


@pytest.fixture
def leak_text() -> LeakText:
    return leak
