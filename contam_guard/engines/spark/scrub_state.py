"""A touched record's scrub state (``contam_guard.core.scrub.rounds.RecordState``) as JSON, so it can
travel between the driver and the tasks from one round to the next (offsets and keys only)."""

from __future__ import annotations

import json
from typing import Any

from contam_guard.core.scrub.cuts import Removal
from contam_guard.core.scrub.rounds import RecordState


def dump(state: RecordState) -> str:
    return json.dumps(
        {
            "record": state.record,
            "length": state.length,
            "mode": state.mode,
            "item_id": state.item_id,
            "kept": state.kept,
            "removed": [
                [number, r.start, r.end, r.reason, list(r.keys), [list(g) for g in r.ngrams]]
                for number, r in state.removed
            ],
        }
    )


def load(text: str) -> RecordState:
    data: dict[str, Any] = json.loads(text)
    state = RecordState(0, int(data["record"]), 0, length=int(data["length"]))
    state.mode = data["mode"]
    state.item_id = data["item_id"]
    state.kept = [(int(a), int(b)) for a, b in data["kept"]]
    state.removed = [
        (int(number), Removal(int(start), int(end), reason, tuple(keys), tuple((a, b) for a, b in grams)))
        for number, start, end, reason, keys, grams in data["removed"]
    ]
    return state
