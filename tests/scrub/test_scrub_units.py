"""The pieces of scrub in isolation: cutting, merging, shapes, settings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import yaml

from contam_guard.config import DEFAULT_CONFIG_TEXT, Config, ScrubSettings
from contam_guard.readers.shapes import detect_text
from contam_guard.scrub.cuts import CutSettings, Removal, decide, merge
from contam_guard.scrub.lines import detected_target, field_target

SETTINGS = CutSettings(window=200, min_piece_chars=200, max_pieces=10)


def windows(*spans: tuple[int, int]) -> list[Removal]:
    return [Removal(s, e, "window") for s, e in spans]


# (merged windows, length, mode, settings) -> (kept, removed as (start, end, reason))
CASES: list[
    tuple[list[tuple[int, int]], int, str, CutSettings, list[tuple[int, int]], list[tuple[int, int, str]]]
] = [
    # A window in the middle: two pieces of exactly 200 characters survive.
    ([(200, 600)], 800, "pieces", SETTINGS, [(0, 200), (600, 800)], [(200, 600, "window")]),
    # 199 characters is a short piece, discarded.
    ([(199, 600)], 800, "pieces", SETTINGS, [(600, 800)], [(0, 199, "short piece"), (199, 600, "window")]),
    # A window covering everything leaves nothing (no pieces: not "too many").
    ([(0, 800)], 800, "pieces", SETTINGS, [], [(0, 800, "window")]),
    # Windows at both ends: one piece.
    (
        [(0, 100), (700, 800)],
        800,
        "pieces",
        SETTINGS,
        [(100, 700)],
        [(0, 100, "window"), (700, 800, "window")],
    ),
    # max_pieces 1: two pieces (even short ones count) drop the record whole.
    ([(300, 400)], 800, "pieces", CutSettings(200, 200, 1), [], [(0, 800, "too many pieces")]),
    ([(0, 400)], 800, "pieces", CutSettings(200, 200, 1), [(400, 800)], [(0, 400, "window")]),
    # Drop mode: any window drops the record.
    ([(0, 10)], 800, "drop", SETTINGS, [], [(0, 800, "drop mode")]),
]


@pytest.mark.parametrize(("spans", "length", "mode", "settings", "kept", "removed"), CASES)
def test_decide(
    spans: list[tuple[int, int]],
    length: int,
    mode: Any,
    settings: CutSettings,
    kept: list[tuple[int, int]],
    removed: list[tuple[int, int, str]],
) -> None:
    outcome = decide(windows(*spans), length, mode, settings)
    assert list(outcome.kept) == kept
    assert [(r.start, r.end, r.reason) for r in outcome.removed] == removed


def test_merge_joins_overlapping_and_adjacent_spans_per_group_only() -> None:
    group = np.array([0, 0, 0, 1, 1, 0])
    start = np.array([0, 5, 20, 5, 0, 40])
    end = np.array([5, 9, 30, 9, 5, 41])
    g, s, e, of_row = merge(group, start, end)
    assert list(zip(g.tolist(), s.tolist(), e.tolist())) == [(0, 0, 9), (0, 20, 30), (0, 40, 41), (1, 0, 9)]
    assert of_row.tolist() == [0, 0, 1, 3, 3, 2]


SHAPES: list[dict[str, object]] = [
    {"text": "a b"},
    {"messages": [{"role": "user", "content": "a"}]},
    {"instruction": "do", "input": "", "output": "x"},
    {"conversations": [{"from": "human", "value": "a"}]},
    {"question": "q"},
    {"prompt": "p", "content": "c"},
    {"content": "c"},
    {"text": 5, "question": "q"},
    {"messages": "not a list", "prompt": "p"},
]


@pytest.mark.parametrize("obj", SHAPES)
def test_detected_target_agrees_with_the_reader(obj: dict[str, object]) -> None:
    text = detect_text(obj, "f", 1)
    key = detected_target(obj)
    if key is None:
        assert any(k in obj for k in ("messages", "instruction", "conversations"))
    else:
        assert obj[key] == text


def test_field_target() -> None:
    obj: dict[str, object] = {"a": {"b": "x", "c": ["y"]}, "t": "z"}
    assert field_target(obj, "a.b") == ("a", "b")
    assert field_target(obj, "t") == ("t",)
    assert field_target(obj, "a.c") is None  # a list of strings is joined: not one field
    assert field_target(obj, "m[].content") is None


def test_default_config_text_lists_the_scrub_defaults() -> None:
    loaded = Config.model_validate(yaml.safe_load(DEFAULT_CONFIG_TEXT))
    assert loaded.scrub == ScrubSettings()
    assert ScrubSettings().model_dump() == {
        "mode": "auto",
        "n": 13,
        "window": 200,
        "min_piece_chars": 200,
        "max_pieces": 10,
        "max_doc_freq": 10,
    }
