"""Loading the kernels: compiled (``contam_guard._native``, built from ``csrc/native.c``), or the
numpy ones (``contam_guard.core.spec.pure_kernels``) where the compiled module is not installed or
``CONTAM_GUARD_PURE=1`` asks for them.

Both give the same results (tests/text/test_pure_kernels.py compares them); the numpy kernels
are slower and have no prefilter (``has_prefilter``), so a scan reads every line with the exact
path. Falling back leaves one notice for the command line to show (``take_notices``): core code
never prints.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from contam_guard.errors import ContamGuardError

PURE_ENV = "CONTAM_GUARD_PURE"
"""Set to 1 to use the numpy kernels even where the compiled ones are installed."""


def _spec() -> dict[str, int]:
    """Constants the kernels share with the Python spec (``core.spec.constants``)."""
    from contam_guard.core.spec import constants as c  # noqa: PLC0415

    return {
        "PARAGRAPH_BYTES": c.PARAGRAPH_BYTES,
        "CHAR_BASE": c.CHAR_BASE,
        "WORD_BASE": c.WORD_BASE,
        "LEN_MIX": c.LEN_MIX,
        "WINDOW_CHARS": c.WINDOW_CHARS,
        "GRAM_N": c.GRAM_N,
        "CLS_UNKNOWN": c.UNKNOWN,
        "CLS_ALNUM": c.ALNUM,
        "CLS_KEPT": c.KEPT,
        "CLS_REMOVED": c.REMOVED,
        "CLS_SPACE": c.SPACE,
        "CLS_SPECIAL": c.SPECIAL,
        "CLS_SOLO": c.SOLO,
        "CLS_MARKUP": c.MARKUP,
    }


_OWNED = (
    "LINE_BLANK",
    "LINE_CLEAN",
    "LINE_HITS",
    "LINE_EXACT",
    "LINE_MORE",
    "READ_TEXT",
    "READ_KEYS",
    "READ_ALL",
)
"""Constants defined by the kernels alone: Python reads them from the module (``module().LINE_*``)."""

_notices: list[str] = []


class NativeMissingError(ContamGuardError):
    """The compiled kernels are stale (built from another version): an installation problem the
    user fixes by reinstalling, so exit 2 like other setup errors."""


def pure_requested() -> bool:
    """Whether ``CONTAM_GUARD_PURE`` asks for the numpy kernels."""
    return os.environ.get(PURE_ENV, "").strip() not in ("", "0")


@functools.cache
def module() -> ModuleType:
    """The kernels, their constants checked against the Python spec: the compiled module, or the
    numpy one (with a notice) when it is missing or ``CONTAM_GUARD_PURE=1`` is set."""
    if pure_requested():
        _notices.append(
            f"{PURE_ENV}=1: using contam-guard's numpy kernels (same results, slower; no prefilter)"
        )
        return _checked(importlib.import_module("contam_guard.core.spec.pure_kernels"))
    try:
        compiled = importlib.import_module("contam_guard._native")
    except ImportError as exc:
        _notices.append(
            f"contam-guard's compiled kernels are not installed ({exc}): using its numpy kernels, "
            "which give the same results more slowly; reinstall where a C compiler is available "
            "for full speed"
        )
        return _checked(importlib.import_module("contam_guard.core.spec.pure_kernels"))
    return _checked(compiled)


def has_prefilter() -> bool:
    """Whether the kernels include the scan's prefilter (``filter_jsonl``): the compiled ones do."""
    return hasattr(module(), "filter_jsonl")


def pending_notices() -> list[str]:
    """The notices about the kernels not yet shown (left for ``take_notices``)."""
    return list(_notices)


def take_notices() -> list[str]:
    """The notices about the kernels not yet shown (at most one), for the command line to show."""
    taken = list(_notices)
    _notices.clear()
    return taken


def _checked(mod: ModuleType) -> ModuleType:
    """``mod`` when it defines exactly the expected constants, with the spec's values."""
    spec = _spec()
    defined = {
        name for name in dir(mod) if name.isupper() and name[0] != "_" and isinstance(getattr(mod, name), int)
    }
    wrong = sorted(name for name, value in spec.items() if getattr(mod, name, None) != value)
    wrong += sorted(defined.symmetric_difference({*spec, *_OWNED}) - set(wrong))
    if wrong:
        raise NativeMissingError(
            f"contam-guard's kernels ({mod.__name__}) do not match this version "
            f"(constants {', '.join(wrong)})",
            hint="reinstall contam-guard to rebuild them",
        )
    return mod


def need(array: NDArray[Any], dtype: type[np.generic]) -> NDArray[Any]:
    """``array`` itself when it is C-contiguous of ``dtype``; a mistake in the caller otherwise."""
    if array.dtype != dtype or not array.flags.c_contiguous:
        raise TypeError(f"expected a contiguous {np.dtype(dtype)} array, got {array.dtype}")
    return array


def line_ends(block: bytes | memoryview) -> NDArray[np.int64]:
    """The offset just past each line of ``block`` (its last line may lack a newline)."""
    kernels = module()
    ends = np.empty(len(block) // 64 + 64, dtype=np.int64)
    lines = kernels.line_ends(block, ends)
    if lines > ends.size:  # short lines: now the count is known
        ends = np.empty(lines, dtype=np.int64)
        kernels.line_ends(block, ends)
    return ends[:lines]


def siphash24(key: NDArray[np.uint64], hashes: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """SipHash-2-4 of each hash (its 8 bytes, little-endian) under ``key``, the two uint64 words
    (k0, k1) of a 128-bit key: a new array."""
    out = np.empty(hashes.size, dtype=np.uint64)
    module().siphash24(need(key, np.uint64), need(hashes, np.uint64), out)
    return out


def may_repeat_keys(line: bytes) -> bool:
    """Whether some object of the JSON ``line`` may hold a key twice (orjson keeps only the last
    value of a repeated key; the readers then parse the line keeping both)."""
    kernels = module()
    if not hasattr(kernels, "may_repeat_keys"):  # the numpy kernels: always parse keeping pairs
        return True
    return bool(kernels.may_repeat_keys(line))
