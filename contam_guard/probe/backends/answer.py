"""One HTTP answer read whole, within a deadline and a size cap.

httpx's timeouts bound each network operation, not the answer: a server that sends one byte a
second never trips a read timeout, and neither does one that trickles its headers. A
``Deadline`` is a timer for the whole exchange; when it fires it shuts down the request's socket
(``socket.shutdown``, which wakes a blocked read at once), found through httpx's documented
``trace`` request extension, which reports each new connection. Connections are not kept alive
between requests (the client's pool keeps none), so every request has a connection of its own
and shutting it down stops that request only.

The body is read decoded, at most ``MAX_ANSWER_BYTES``: a larger answer is refused, not read to
its end (a 2 GiB gzip body once took 6.4 GB of memory). Only gzip and deflate are accepted as a
content encoding: they expand a 64 KiB network read to at most about 66 MB, which bounds what
one read can hold beyond the cap; brotli and zstd have no such bound in httpx's decoders.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Any

import httpx

MAX_ANSWER_BYTES = 64 << 20
"""64 MiB: an echo of a prompt of some 800,000 tokens."""
ACCEPT_ENCODING = "gzip, deflate"
ENCODINGS = frozenset({"identity", "gzip", "deflate", "x-gzip"})


class AnswerTimeout(Exception):  # noqa: N818 (a condition, caught where it is raised)
    """The deadline passed before the whole answer arrived."""


class AnswerRefused(Exception):  # noqa: N818
    """The answer cannot be read safely (too large, or an encoding that is not accepted)."""


class Deadline:
    """Shut down the exchange's connection ``seconds`` after ``__enter__`` (see the module docstring)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._streams: list[Any] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._timer.cancel()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpx's ``trace`` extension: keep each connection's stream (plain, then TLS)."""
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            with self._lock:
                self._streams.append(stream)
                if self.expired:
                    _shut(stream)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for stream in self._streams:
                _shut(stream)


def _shut(stream: Any) -> None:
    with contextlib.suppress(Exception):  # already closed, or detached by TLS: nothing to wake
        sock = stream.get_extra_info("socket")
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)


def read_body(response: httpx.Response, deadline: Deadline, cap: int = MAX_ANSWER_BYTES) -> bytes:
    """The decoded body of ``response``, whole; ``AnswerRefused`` or ``AnswerTimeout`` otherwise."""
    codings = [
        c.strip() for c in response.headers.get("content-encoding", "").lower().split(",") if c.strip()
    ]
    unknown = [c for c in codings if c not in ENCODINGS]
    if unknown:
        raise AnswerRefused(f"the answer is encoded as {', '.join(unknown)}, which the probe does not read")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and not codings and len(declared) < 20 and int(declared) > cap:
        raise AnswerRefused(f"the answer is larger than {cap >> 20} MiB")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise AnswerRefused(f"the answer is larger than {cap >> 20} MiB")
        if deadline.expired:
            raise AnswerTimeout
        chunks.append(chunk)
    if deadline.expired:  # a body that ends with its connection ends early when it is shut down
        raise AnswerTimeout
    return b"".join(chunks)
