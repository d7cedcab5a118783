"""The checked arrays of a manifest's binary files: packed tables, template marks, item weights.

Each reader takes a file's header and arrays (``binfile.arrays_of``: read-only views of the
mapping) and checks them against the counts the index and the view give before anything
indexes with them: a damaged file is an error naming it, never a read out of bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec.hashing import GRAM_N
from contam_guard.io.manifest import binfile
from contam_guard.io.manifest.packed import PackedTable, Shape, WordPairs, width_for
from contam_guard.io.manifest.templates import TemplateMarks

SHAPE_KEYS = ("count", "bucket_bits", "payload_bits")
TABLE_PARTS = ("units", "groups", "remainders", "payloads")
ITEM_WEIGHTS = "item_weights"
"""A derived ``~words`` view's item weights (float64 stored as their bits: files hold unsigned
arrays)."""


def weights_of(arrays: dict[str, NDArray[Any]], items: int, display: str) -> NDArray[np.float64] | None:
    """A derived view's stored item weights (None: the view has none), checked."""
    bits = arrays.get(ITEM_WEIGHTS)
    if bits is None:
        return None
    weights = bits.view("<f8")
    if weights.size != items or not bool(np.isfinite(weights).all()) or bool((weights < 0).any()):
        raise binfile.damaged(display, "its item weights do not match the set's items")
    return weights.astype(np.float64, copy=False)


def templates_of(
    header: dict[str, Any], arrays: dict[str, NDArray[Any]], grams: int, display: str
) -> TemplateMarks:
    """The view's template marks (none in a file written before they existed), checked: the
    engine indexes its arrays with them."""
    at, run, counts = arrays.get("templates.at"), arrays.get("templates.run"), header.get("templates")
    if at is None and run is None and counts is None:
        return TemplateMarks.none()
    if (
        at is None
        or run is None
        or not isinstance(counts, dict)
        or not all(type(counts.get(k)) is int and counts[k] >= 0 for k in ("ngrams", "top"))
        or at.size != run.size
        or (at.size and (int(at[-1]) >= grams or bool((np.diff(at.astype(np.int64)) <= 0).any())))
        or (run.size and int(run.min()) < GRAM_N)
    ):
        raise binfile.damaged(display, "its template marks do not match its 5-grams")
    return TemplateMarks(at.astype(np.int64), run.astype(np.int64), counts["ngrams"], counts["top"])


def table_of(
    header: dict[str, Any],
    arrays: dict[str, NDArray[Any]],
    name: str,
    count: int,
    payloads: int,
    display: str,
    read: Callable[[int, int], bytes] | None,
) -> PackedTable:
    """The checked table ``name`` of a file: ``count`` entries with payloads below ``payloads``
    (its sizes agree with the counts, else the engine could index outside its arrays)."""
    shape = header.get(name)
    if not isinstance(shape, dict) or not all(type(shape.get(k)) is int for k in SHAPE_KEYS):
        raise binfile.damaged(display, f"its {name} table has no valid shape")
    parts = {part: arrays.get(f"{name}.{part}") for part in TABLE_PARTS}
    if any(part is None for part in parts.values()):
        raise binfile.damaged(display, f"its {name} table is incomplete")
    pairs: dict[str, WordPairs] = {}
    if read is not None:
        for part in ("remainders", "payloads"):
            pairs[part] = _pairs(read, header["arrays"][f"{name}.{part}"]["offset"])
    table = PackedTable(Shape(**{k: shape[k] for k in SHAPE_KEYS}), **parts, pairs=pairs)  # type: ignore[arg-type]
    problem = table.check()
    if problem is None and (
        table.count != count or table.shape.payload_bits != width_for(max(payloads - 1, 0))
    ):
        problem = "it does not match the view's counts"
    if problem is not None:
        raise binfile.damaged(display, f"its {name} table: {problem}")
    return table


def _pairs(read: Callable[[int, int], bytes], offset: int) -> WordPairs:
    """Reads of words ``w`` and ``w + 1`` of the array at ``offset`` in a file."""

    def pairs(words: NDArray[np.int64]) -> NDArray[np.uint64]:
        data = b"".join(read(16, offset + 8 * w) for w in words.tolist())
        return np.frombuffer(data, dtype="<u8").reshape(-1, 2).astype(np.uint64)

    return pairs
