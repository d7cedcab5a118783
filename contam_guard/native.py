"""Loading the compiled kernels (``contam_guard._native``, built from ``csrc/native.c``).

The module is built when contam-guard is installed (``pip install .``; ``make`` does it for a
checkout). A checkout that was never built gets a clear message instead of an ImportError
traceback.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from contam_guard.errors import ContamGuardError
from contam_guard.text import hashing, normalise


class NativeMissingError(ContamGuardError):
    """The compiled kernels are not there (a checkout that was never built) or stale: an
    installation problem the user fixes by reinstalling, so exit 2 like other setup errors."""


@functools.cache
def module() -> ModuleType:
    """The compiled module, its constants checked against the Python definitions."""
    try:
        compiled = importlib.import_module("contam_guard._native")
    except ImportError as exc:
        raise NativeMissingError(
            f"contam-guard's compiled kernels are missing or cannot load ({exc})",
            hint="reinstall it (`pip install .`, or `make test` in a checkout) to build them",
        ) from exc
    _check_constants(compiled)
    return compiled


def _check_constants(mod: ModuleType) -> None:
    expected = {
        "CHAR_BASE": hashing.CHAR_BASE,
        "LEN_MIX": hashing.LEN_MIX,
        "WINDOW_CHARS": hashing.WINDOW_CHARS,
        "GRAM_N": hashing.GRAM_N,
        "WORD_BASE": hashing.WORD_BASE,
        "CLS_SPACE": normalise.SPACE,
        "CLS_REMOVED": normalise.REMOVED,
        "CLS_SPECIAL": normalise.SPECIAL,
    }
    wrong = [name for name, value in expected.items() if getattr(mod, name) != value]
    if wrong:
        raise NativeMissingError(
            f"contam-guard's compiled kernels do not match this version (constants {', '.join(wrong)})",
            hint="reinstall contam-guard to rebuild them",
        )


def need(array: NDArray[Any], dtype: type[np.generic]) -> NDArray[Any]:
    """``array`` itself when it is C-contiguous of ``dtype``; a mistake in the caller otherwise."""
    if array.dtype != dtype or not array.flags.c_contiguous:
        raise TypeError(f"expected a contiguous {np.dtype(dtype)} array, got {array.dtype}")
    return array


def line_ends(block: bytes | memoryview) -> NDArray[np.int64]:
    """The offset just past each line of ``block`` (its last line may lack a newline)."""
    compiled = module()
    ends = np.empty(len(block) // 64 + 64, dtype=np.int64)
    lines = compiled.line_ends(block, ends)
    if lines > ends.size:  # short lines: now the count is known
        ends = np.empty(lines, dtype=np.int64)
        compiled.line_ends(block, ends)
    return ends[:lines]


def may_repeat_keys(line: bytes) -> bool:
    """Whether some object of the JSON ``line`` may hold a key twice (orjson keeps only the last
    value of a repeated key; the readers then parse the line keeping both)."""
    return bool(module().may_repeat_keys(line))
