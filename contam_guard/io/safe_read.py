"""Reading the files contam-guard trusts (config, manifest) without hanging or running out of memory.

A FIFO named like the manifest blocks ``open()`` until some writer appears; ``/dev/zero`` never
ends. Both would hang a commit hook. So the file is opened without blocking, must be a regular
file (checked on the open descriptor: swapping the path between a check and the open cannot fool
it), and is read up to a bound.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from contam_guard.errors import ContamGuardError


def read_regular(path: Path, *, what: str, limit: int, error: type[ContamGuardError]) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` of them).

    Raises ``FileNotFoundError`` when nothing is there (callers say what to do about that) and
    ``error`` for anything else: not a regular file, unreadable, or larger than ``limit``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"{path}: the {what} is not a regular file ({file_kind(info.st_mode)})",
                hint=f"point contam-guard at the {what} file itself",
            )
        if info.st_size > limit:
            raise error(f"{path}: the {what} is {info.st_size:,} bytes, more than the {limit:,} allowed")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > limit:  # it grew while being read
                raise error(f"{path}: the {what} is more than the {limit:,} bytes allowed")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def decode_utf8(data: bytes, path: Path, what: str, error: type[ContamGuardError]) -> str:
    """``data`` as UTF-8, or ``error`` naming the line and byte offset of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"{path}:{line}: the {what} is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            hint="save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
        ) from None


def safe_loader() -> type[Any]:
    """PyYAML's safe loader, with libyaml's parser where PyYAML was built with it (ten times
    faster on the config every command reads; the same constructors, so the same values)."""
    import yaml  # noqa: PLC0415 (only the config and the allowlist are YAML)

    return yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def load_yaml(text: str, path: Path, error: type[ContamGuardError]) -> object:
    """``yaml.safe_load`` of ``text``, a YAML error as ``error`` naming ``path`` and the line."""
    import yaml  # noqa: PLC0415 (only the config and the allowlist are YAML)

    try:
        return yaml.load(text, Loader=safe_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise error(f"{path}{line}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
