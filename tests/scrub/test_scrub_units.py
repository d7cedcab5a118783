"""The pieces of scrub in isolation: cutting, merging, shapes, settings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import yaml

from contam_guard.core.config import DEFAULT_CONFIG_TEXT, Config, ScrubSettings
from contam_guard.core.scrub.cuts import CutSettings, Removal, decide, merge
from contam_guard.core.scrub.lines import field_target
from contam_guard.io.readers.fields import loads_keeping_duplicates

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


# (record, --field, id field, the target auto mode cuts into pieces; None: dropped whole)
TARGETS: list[tuple[dict[str, object], tuple[str, ...], str | None, tuple[str, ...] | None]] = [
    ({"id": "d1", "text": "t"}, (), None, ("text",)),  # a document: one string besides its id
    ({"text": "t", "n": 3, "ok": True}, (), None, ("text",)),
    ({"doc": 7, "body": "t"}, (), "doc", ("body",)),
    ({"prompt": "p", "completion": "c"}, (), None, None),  # several strings: drop
    ({"text": "t", "url": "u"}, (), None, None),
    ({"messages": [{"role": "user", "content": "a"}]}, (), None, None),
    ({"meta": {"body": "t"}}, (), None, None),  # not a top-level field
    ({"a": {"b": "x", "c": ["y"]}, "t": "z"}, ("a.b",), None, ("a", "b")),
    ({"a": {"b": "x", "c": ["y"]}, "t": "z"}, ("t",), None, ("t",)),
    ({"a": {"b": "x", "c": ["y"]}, "t": "z"}, ("a.c",), None, None),  # a list: not one string
    ({"m": [{"content": "x"}]}, ("m[].content",), None, None),
    ({"p": "x", "c": "y"}, ("p", "c"), None, None),  # two fields
]


@pytest.mark.parametrize(("obj", "fields", "id_field", "target"), TARGETS)
def test_field_target(
    obj: dict[str, object], fields: tuple[str, ...], id_field: str | None, target: tuple[str, ...] | None
) -> None:
    assert field_target(obj, fields, id_field) == target


def test_no_target_in_an_object_with_a_repeated_key() -> None:
    obj = loads_keeping_duplicates('{"text": "a", "meta": {"k": 1, "k": 2}}')
    assert isinstance(obj, dict)
    assert field_target(obj, ("text",)) is None
    assert field_target(obj, ()) is None


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
