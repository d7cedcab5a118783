"""The bytes of a set's binary files (``binfile.py``'s container): its ids, and each view's
counts, 5-gram table and window table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from contam_guard.io.manifest import binfile
from contam_guard.io.manifest.disk_arrays import ITEM_WEIGHTS, SHAPE_KEYS
from contam_guard.io.manifest.ids import Ids
from contam_guard.io.manifest.model import View
from contam_guard.io.manifest.packed import PackedTable


def ids_file(ids: Sequence[str], expected: str, extra: Mapping[str, Any]) -> bytes:
    """A set's ids (and ``extra`` in its header: the set's record)."""
    offsets, blob = Ids.of(ids)
    return binfile.encode(
        {**extra, "kind": "ids", "items": len(ids), "digest": expected},
        {"offsets": (binfile.smallest_dtype(offsets), offsets), "bytes": ("|u1", blob)},
    )


def view_file(view: View, items: int, *, marked: bool = False) -> bytes:
    """A view's counts and 5-gram table (and its template marks, for a set that has them)."""
    data = view.data
    arrays: dict[str, tuple[str, NDArray[Any]]] = {
        "words": (binfile.smallest_dtype(data.words), data.words),
        "alnum": (binfile.smallest_dtype(data.alnum), data.alnum),
        **_table_arrays("grams", data.grams),
    }
    header: dict[str, Any] = {"kind": "view", "items": items, "digest": view.digest}
    header["grams"] = _shape(data.grams)
    if data.item_weights is not None:  # float64, stored as their bits (files hold unsigned arrays)
        arrays[ITEM_WEIGHTS] = ("<u8", np.ascontiguousarray(data.item_weights, dtype="<f8").view("<u8"))
    if marked:
        marks = data.templates
        arrays["templates.at"] = (binfile.smallest_dtype(marks.at), marks.at)
        arrays["templates.run"] = (binfile.smallest_dtype(marks.run), marks.run)
        header["templates"] = {"ngrams": marks.ngrams, "top": marks.top}
    return binfile.encode(header, arrays)


def windows_file(view: View, items: int) -> bytes:
    """A view's window table."""
    table = view.windows
    assert table is not None
    header = {"kind": "windows", "items": items, "digest": view.digest, "windows": _shape(table)}
    return binfile.encode(header, _table_arrays("windows", table))


def _shape(table: PackedTable) -> dict[str, int]:
    return {k: getattr(table.shape, k) for k in SHAPE_KEYS}


def _table_arrays(name: str, table: PackedTable) -> dict[str, tuple[str, NDArray[Any]]]:
    return {
        f"{name}.units": ("<u8", table.units),
        f"{name}.groups": ("<u4", table.groups),
        f"{name}.remainders": ("<u8", table.remainders),
        f"{name}.payloads": ("<u8", table.payloads),
    }
