"""Atomic file writes: a temporary file in the same folder, fsync, then ``os.replace``.

Readers of the destination see either the old complete file or the new complete file, never a
half-written one, even if the process is killed mid-write.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from contam_guard.errors import ContamGuardError


@contextlib.contextmanager
def atomic_writer(path: Path, mode: str = "w") -> Iterator[IO[str] | IO[bytes]]:
    """Yield a file to write; on success it replaces ``path`` atomically, on error it vanishes."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise ContamGuardError(f"{path}: cannot write here ({exc.strerror})") from exc
    tmp = Path(tmp_name)
    try:
        binary = "b" in mode
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ContamGuardError(
            f"{path}: could not write ({exc.strerror or exc}); nothing was changed"
        ) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_writer(path, "w") as handle:
        handle.write(text)  # type: ignore[arg-type]


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path, "wb") as handle:
        handle.write(data)  # type: ignore[arg-type]
