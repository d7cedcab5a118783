"""``review``'s answers, read from standard input so that no input can hang or crash it.

A person at a terminal is waited for as long as they take. Anything else (a pipe, a FIFO, a
file, a device) is a program's answers: each must arrive within ``timeout`` seconds (a FIFO
nobody writes to would otherwise wait forever), be a line of at most ``MAX_LINE`` bytes of UTF-8
text without control characters (``/dev/zero`` sends an endless line of NUL bytes, random bytes
are no answer, and a stray ``y`` in them must not write the allowlist). A closed standard input,
or one that breaks any of these, is ``InputError`` (exit 2) saying how to answer instead.
End of input is ``None`` (the review stops, as with ``q``).
"""

from __future__ import annotations

import os
import select
import sys

from contam_guard.errors import InputError

MAX_LINE = 4096
"""Bytes in one answer (a reason is a sentence)."""
STDIN = "standard input"
HOW = (
    "answer in a terminal, or pipe the answers in, one per line "
    "(e.g. printf 'n\\nour own example\\n' | contam-guard review ...)"
)


class Answers:
    """Lines from file descriptor ``fd`` (standard input)."""

    def __init__(self, fd: int | None = None, timeout: float | None = 60.0) -> None:
        self.number = 0
        self._buffer = b""
        self._ended = False
        try:
            # Python starts with sys.stdin None when descriptor 0 was closed; the descriptor
            # itself may since have been reused by a file the scan opened, so it is not asked.
            self.fd = fd if fd is not None else _stdin_fd()
            os.fstat(self.fd)
        except (OSError, ValueError):
            raise InputError(STDIN, "closed: review reads its answers there", hint=HOW) from None
        self.terminal = os.isatty(self.fd)
        self.timeout = None if self.terminal else timeout

    def line(self) -> str | None:
        """The next answer, stripped of its line ending; None at the end of input."""
        while b"\n" not in self._buffer and not self._ended:
            if len(self._buffer) > MAX_LINE:
                raise self._error(
                    f"answer {self.number + 1} is longer than {MAX_LINE:,} bytes without a line end"
                )
            self._wait()
            try:
                chunk = os.read(self.fd, 65536)
            except OSError as exc:
                raise InputError(STDIN, f"cannot be read ({exc.strerror or exc})", hint=HOW) from None
            self._ended = not chunk
            self._buffer += chunk
        if not self._buffer:
            return None
        raw, _, self._buffer = self._buffer.partition(b"\n")
        self.number += 1
        if len(raw) > MAX_LINE:
            raise self._error(f"answer {self.number} is longer than {MAX_LINE:,} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(
                f"answer {self.number} is not UTF-8 text (byte 0x{raw[exc.start]:02x})"
            ) from None
        text = text.removesuffix("\r")
        if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in text):
            raise self._error(f"answer {self.number} holds control characters (it is not typed text)")
        return text

    def _wait(self) -> None:
        """Wait until something can be read, at most ``timeout`` seconds off a terminal."""
        if self.timeout is None or os.name != "posix":
            return
        try:
            ready, _, _ = select.select([self.fd], [], [], self.timeout)
        except (OSError, ValueError):
            return  # not selectable (a regular file is always ready): read and see
        if not ready:
            raise InputError(
                STDIN,
                f"no answer within {self.timeout:g} s (it is not a terminal, and nothing came): "
                "the decisions made so far are saved",
                hint=f"{HOW}; --answer-timeout SECONDS waits longer",
            )

    def _error(self, problem: str) -> InputError:
        return InputError(STDIN, f"{problem}; the decisions made before it are saved", hint=HOW)


def _stdin_fd() -> int:
    if sys.stdin is None:
        raise ValueError("no standard input")
    return sys.stdin.fileno()


def prompt(question: str) -> None:
    sys.stderr.write(question)
    sys.stderr.flush()


__all__ = ["MAX_LINE", "Answers", "prompt"]
