"""The binary files of a manifest: a JSON header naming each array's dtype and length,
then the arrays, little-endian, each at an offset that is a multiple of 64 bytes.

::

    b"CGM2DATA"                      8 bytes
    header length                    uint32, little-endian, then 4 zero bytes
    header                           JSON (UTF-8, sorted keys, no spaces), padded with spaces
    arrays                           at the offsets the header gives

The header is ``{"arrays": {name: {"dtype": "<u8", "length": n, "offset": o}, ...}, ...}`` plus
what the file's reader needs (``kind``, item count, content digest, table shapes). A file is
memory-mapped and its arrays are read-only views of the mapping: nothing is copied to start.

A keyed manifest seals every such file (``sealing.py``): ``b"CGM2SEAL"``, a 12-byte nonce, and
the AES-256-GCM ciphertext of the whole file above with its tag.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from contam_guard.errors import ManifestError

MAGIC = b"CGM2DATA"
ALIGN = 64
MAX_HEADER_BYTES = 16 << 20
DTYPES = frozenset({"<u8", "<u4", "<u2", "|u1"})
"""The only dtypes a file may name: unsigned, little-endian (the header says which)."""


def smallest_dtype(values: NDArray[Any]) -> str:
    """The narrowest dtype of ``DTYPES`` holding every value of ``values`` (non-negative)."""
    top = int(values.max()) if values.size else 0
    for dtype in ("|u1", "<u2", "<u4"):
        if top < 1 << (8 * np.dtype(dtype).itemsize):
            return dtype
    return "<u8"


def _padded(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def encode(header: Mapping[str, Any], arrays: Mapping[str, tuple[str, NDArray[Any]]]) -> bytes:
    """The file: ``header`` (a JSON object) with the array table added, then ``arrays`` (name ->
    (dtype, values)) in name order. The same input always gives the same bytes."""
    names = sorted(arrays)
    table: dict[str, dict[str, Any]] = {}
    # The header's length depends on the offsets and the offsets on its length: lay the arrays
    # out after a generous guess, and grow the guess until the header fits before them.
    guess = 1024
    while True:
        offset = _padded(16 + guess)
        table = {}
        for name in names:
            dtype, values = arrays[name]
            table[name] = {"dtype": dtype, "length": int(values.size), "offset": offset}
            offset = _padded(offset + values.size * np.dtype(dtype).itemsize)
        text = json.dumps({**header, "arrays": table}, sort_keys=True, separators=(",", ":")).encode()
        if 16 + len(text) <= _padded(16 + guess):
            break
        guess = len(text) + 64
    start = _padded(16 + guess)
    parts = [MAGIC, len(text).to_bytes(4, "little"), bytes(4), text, b" " * (start - 16 - len(text))]
    position = start
    for name in names:
        dtype, values = arrays[name]
        data = np.ascontiguousarray(values, dtype=dtype).tobytes()
        parts += [data, bytes(_padded(position + len(data)) - position - len(data))]
        position = _padded(position + len(data))
    return b"".join(parts)


def header_of(data: bytes | memoryview, display: str) -> dict[str, Any]:
    """The checked header of a file's bytes (``display`` names it in errors)."""
    view = memoryview(data)
    if len(view) < 16 or bytes(view[:8]) != MAGIC:
        raise damaged(display, "it is not a contam-guard manifest data file (wrong magic bytes)")
    size = int.from_bytes(view[8:12], "little")
    if size > MAX_HEADER_BYTES or 16 + size > len(view):
        raise damaged(display, "its header runs past the end of the file (truncated?)")
    try:
        header = json.loads(bytes(view[16 : 16 + size]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise damaged(display, "its header is not valid JSON") from None
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), dict):
        raise damaged(display, "its header lists no arrays")
    return header


def arrays_of(data: bytes | memoryview, header: Mapping[str, Any], display: str) -> dict[str, NDArray[Any]]:
    """Each array the header lists, as a read-only view of ``data`` (bounds and dtypes checked)."""
    view = memoryview(data)
    out: dict[str, NDArray[Any]] = {}
    end_of_previous = 16
    for name, spec in sorted(header["arrays"].items(), key=lambda kv: _offset(kv[1])):
        if not isinstance(spec, dict) or spec.get("dtype") not in DTYPES:
            raise damaged(display, f"array {name!r} has no dtype this contam-guard reads")
        length, offset = spec.get("length"), spec.get("offset")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (length, offset)):
            raise damaged(display, f"array {name!r} has no valid length and offset")
        assert isinstance(length, int) and isinstance(offset, int)
        dtype = np.dtype(spec["dtype"])
        if offset % ALIGN or offset < end_of_previous or offset + length * dtype.itemsize > len(view):
            raise damaged(display, f"array {name!r} lies outside the file or over another (truncated?)")
        out[name] = np.frombuffer(view, dtype=dtype, count=length, offset=offset)
        end_of_previous = offset + length * dtype.itemsize
    return out


def _offset(spec: object) -> int:
    offset = spec.get("offset") if isinstance(spec, dict) else None
    return offset if isinstance(offset, int) else -1


RESTORE_FILE = "restore it from version control (git checkout -- {display}), or register its set again"


def damaged(display: str, problem: str) -> ManifestError:
    return ManifestError(f"{display}: {problem}", hint=RESTORE_FILE.format(display=display))
