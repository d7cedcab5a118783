"""The total a progress bar in bytes counts up to: the sizes of the files the readers will read
through the opener (``io.readers.meter`` counts what they have read)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from contam_guard.io.readers.formats import SNIFF, detect_format
from contam_guard.io.readers.sniff import HEAD_BYTES, sniff


def input_bytes(paths: Iterable[Path]) -> int:
    """The bytes ``bytes_read`` will count when ``paths`` are read: the sizes on disk of the
    files read through the opener (not the formats read from their path, nor folders)."""
    total = 0
    for path in paths:
        fmt = detect_format(path)
        if fmt in ("parquet", "arrow", "orc", "zip"):
            continue  # read by pyarrow or zipfile from the path, not through the opener
        if fmt == SNIFF and not _may_be_read(path):
            continue
        try:
            info = os.stat(path)
            total += info.st_size if stat.S_ISREG(info.st_mode) else 0
        except OSError:
            continue  # the scan reports it
    return total


def _may_be_read(path: Path) -> bool:
    """Whether a file whose name says nothing is read through the opener (text, compressed data,
    a tar archive), not left out (an image) or read from its path (a table, a zip)."""
    try:
        with open(path, "rb") as handle:
            found = sniff(handle.read(HEAD_BYTES), path.name)
    except OSError:
        return False
    return found.format not in (None, "parquet", "arrow", "orc", "zip")
