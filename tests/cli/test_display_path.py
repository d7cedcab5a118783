"""How a path is named to a person: relative inside the working folder, as given outside it,
with ``a/../`` folded (a golden file registered from outside the project was shown as
``/tmp/project/../../../data/test.jsonl``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contam_guard.io.paths import display_path


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/work/project/data/train.jsonl", "data/train.jsonl"),
        ("/work/project/../../shared/gsm8k/test.jsonl", "/shared/gsm8k/test.jsonl"),
        ("/elsewhere/test.jsonl", "/elsewhere/test.jsonl"),
        ("../test.jsonl", "../test.jsonl"),
    ],
)
def test_display_path(path: str, shown: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")
    assert display_path(Path(path), Path("/work/project")) == shown
