"""The tutorial (docs/tutorial.md) as a newcomer follows it: every command of its steps 2 to 7,
run as written in one shell (the golden set and data copied from examples/), each with the exit
code the page gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.shell_blocks import blocks, check, commands, run
from tests.helpers import REPO

pytest.importorskip("tantivy", reason="the search step needs the [search] extra")


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    page = REPO / "docs" / "tutorial.md"
    steps = [b for b in blocks(page) if "git clone" not in b]  # step 1 clones and runs make demo
    assert len(steps) == 6
    swaps = {"/tmp/guarded": str(tmp_path / "guarded"), "path/to/contam-guard": str(REPO)}
    results = run([c for block in steps for c in commands(block, swaps)], tmp_path, tmp_path)
    check(results)
    out = dict((c.line, text) for c, _, text in results)
    blocked = next(text for line, text in out.items() if line == "contam-guard scan --staged")
    shown = [b.strip() for b in blocks(page, "text")]
    assert shown[1] in blocked  # the refused commit's line, as the page shows it
    assert (tmp_path / "guarded" / "data" / "new.clean.jsonl").read_text() == ""
    assert (
        "1 occurrence(s) in 1 record(s)" in out['contam-guard search --index corpus.idx "piggy bank" --exact']
    )
