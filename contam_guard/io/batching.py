"""Batches: the one way items are grouped for the engine's whole-array passes.

Records, texts and parsed lines are hashed a batch at a time (about ``limit`` characters): big
enough that the numpy passes amortise their per-call cost, small enough to stay in memory.
Every place that batches (the scan, Spark's tasks, registration, scrub's rounds) uses
``batches``, so they all cut where the local scan cuts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from contam_guard.errors import InputError

T = TypeVar("T")


def batches(items: Iterable[T], limit: int, size: Callable[[T], int]) -> Iterator[list[T]]:
    """``items`` in lists of about ``limit`` (by ``size``; an item over ``limit`` is a batch of
    its own). When reading fails (``InputError``), the items read before the failure come out
    as a last batch before the error goes on, so that ``--skip-unreadable`` keeps them."""
    batch: list[T] = []
    total = 0
    try:
        for item in items:
            batch.append(item)
            total += size(item)
            if total >= limit:
                yield batch
                batch, total = [], 0
    except InputError:
        if batch:
            yield batch
        raise
    if batch:
        yield batch
