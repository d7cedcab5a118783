"""Digests of views and sets: what ``register`` seals, and what a golden file must hash to.

A view's digest is over its arrays in item order (base64 of little-endian ``int32`` counts and
``uint64`` hashes): what the golden text hashes to, whatever the layout of the files that store
it (so a set's version does not change with them). Kept apart from hashing text so that
``verify`` (run by a hook on every commit) does not load the text engine.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from contam_guard.core.spec.hashing import digest

ARRAY_NAMES = ("alnum_chars", "grams", "windows", "words")


def encode_array(array: NDArray[np.generic], dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def view_digest(field: str, arrays: dict[str, str]) -> str:
    """Digest of a view's field name and base64 arrays (``words``, ``alnum_chars``, ``grams``,
    ``windows``)."""
    return digest(field.encode(), *(arrays[k].encode() for k in sorted(arrays)))


def item_order_digest(
    field: str,
    words: NDArray[np.int64],
    alnum: NDArray[np.int64],
    grams: NDArray[np.uint64],
    windows: NDArray[np.uint64] | None,
) -> str:
    """``view_digest`` of per-item arrays (hashes in item order; no windows: an empty array)."""
    return view_digest(
        field,
        {
            "words": encode_array(words, "<i4"),
            "alnum_chars": encode_array(alnum, "<i4"),
            "grams": encode_array(grams, "<u8"),
            "windows": encode_array(windows if windows is not None else np.zeros(0, np.uint64), "<u8"),
        },
    )


def golden_set_digest(
    ids: Sequence[str],
    id_field: str | None,
    view_digests: Iterable[tuple[str, str]],
    rules: Sequence[str] | None = None,
) -> str:
    """A set's digest: its item ids, each (view name, view digest), and the rules it is
    registered for when not every rule (then it stores other hashes)."""
    parts = [f"{name}={view}".encode() for name, view in sorted(view_digests)]
    if rules is not None:
        parts.append(("rules=" + ",".join(sorted(rules))).encode())
    return digest(
        json.dumps({"ids": list(ids), "id_field": id_field}, sort_keys=True).encode("utf-8"), *parts
    )


def tables_digest(
    words: NDArray[np.int64],
    alnum: NDArray[np.int64],
    grams: NDArray[np.uint64],
    windows: NDArray[np.uint64] | None,
) -> str:
    """Digest of what a view's stored tables hold, computable from them (``verify``): its counts,
    its 5-gram hashes in item order and its window hashes per item in hash order (a manifest
    keeps which item each window belongs to, not its place in the item)."""
    return digest(
        b"tables-v1",
        np.ascontiguousarray(words, dtype="<i8").tobytes(),
        np.ascontiguousarray(alnum, dtype="<i8").tobytes(),
        np.ascontiguousarray(grams, dtype="<u8").tobytes(),
        b"" if windows is None else np.ascontiguousarray(windows, dtype="<u8").tobytes(),
    )
