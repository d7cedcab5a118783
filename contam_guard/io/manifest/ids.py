"""A set's item ids: packed UTF-8 bytes and offsets, decoded one at a time, or read when first
needed (a scan that names no item never reads a set's ids file)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray


class Ids(Sequence[str]):
    """Item ids read from a packed array of UTF-8 bytes and offsets, decoded one at a time."""

    def __init__(self, offsets: NDArray[Any], blob: NDArray[np.uint8]) -> None:
        self._offsets = offsets
        self._blob = blob

    @classmethod
    def of(cls, ids: Sequence[str]) -> tuple[NDArray[np.uint64], NDArray[np.uint8]]:
        """The (offsets, bytes) arrays of ``ids``."""
        encoded = [i.encode("utf-8") for i in ids]
        offsets = np.concatenate([[0], np.cumsum([len(e) for e in encoded], dtype=np.int64)]).astype(
            np.uint64
        )
        return offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8)

    def __len__(self) -> int:
        return max(int(self._offsets.size) - 1, 0)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        start, end = int(self._offsets[index]), int(self._offsets[index + 1])
        return bytes(self._blob[start:end]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self.decoded)

    @cached_property
    def decoded(self) -> list[str]:
        text = self._blob.tobytes()
        bounds = self._offsets.tolist()
        return [text[a:b].decode("utf-8") for a, b in itertools.pairwise(bounds)]


class DeferredIds(Sequence[str]):
    """A set's ids, read from its file when first needed (their count is the index's)."""

    def __init__(self, count: int, load: Callable[[], Ids]) -> None:
        self._count = count
        self._load = load
        self._ids: Ids | None = None

    @property
    def ids(self) -> Ids:
        if self._ids is None:
            self._ids = self._load()
        return self._ids

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self.ids[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)
