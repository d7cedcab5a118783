"""Standard output that cannot be written is an error the user sees, never a silent loss.

A guard whose report could not be delivered (standard output closed, ``/dev/full``, a pipe whose
reader went away) must not exit 0 as if it had been read, nor crash with an internal error. The
console script installs ``guard()`` before any command runs: every write and flush of
``sys.stdout`` that fails raises ``OutputError`` (exit 2 through the one handler), and a closed
standard output fails at the first write, so a command that writes only files still runs.

A closed descriptor 1 or 2 is first pointed at ``/dev/null``: otherwise the next file the
command opens (an output, a temporary file) would get that number, and what a child process
such as git prints would land in it.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from contam_guard.errors import ContamGuardError


class OutputError(ContamGuardError):
    """Standard output could not be written: nothing was reported (exit 2)."""


def _failure(problem: str) -> OutputError:
    return OutputError(
        f"cannot write to standard output ({problem}): the results were not delivered",
        hint="redirect standard output to a file, or to a pipe that is read to its end",
    )


class _Guarded:
    """``stream`` with every failed write or flush raised as ``OutputError``."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> object:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:
        return getattr(self._stream, "errors", None) or "strict"

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        if self._stream is None:
            raise OSError("standard output is closed")
        return self._stream.fileno()

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click asks whether this is a binary stream with b""
            raise TypeError("standard output takes text")
        if self._stream is None:
            if not text:
                return 0
            raise _failure("it is closed")
        try:
            return self._stream.write(text)
        except (OSError, ValueError) as exc:
            raise _failure(_reason(exc)) from None

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            raise _failure(_reason(exc)) from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BrokenPipeError):
        return "the reading end of the pipe was closed"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _reserve(descriptor: int) -> bool:
    """Point a closed ``descriptor`` at /dev/null; True when it was closed."""
    try:
        os.fstat(descriptor)
    except OSError:
        null = os.open(os.devnull, os.O_RDWR)
        if null != descriptor:
            os.dup2(null, descriptor)
            os.close(null)
        return True
    return False


def guard() -> None:
    """Install the guarded standard output (see the module docstring)."""
    stdout_closed = _reserve(1) or sys.stdout is None
    if _reserve(2) or sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the process's life)
    sys.stdout = _Guarded(None if stdout_closed else sys.stdout)


def flush() -> OutputError | None:
    """Flush standard output at the end; the error when that failed (nothing is raised)."""
    try:
        sys.stdout.flush()
    except OutputError as exc:
        return exc
    except (OSError, ValueError) as exc:
        return _failure(_reason(exc))
    return None
