"""``probe.backends.answer``: the deadline covers the whole exchange (headers trickled a byte at
a time included), and an answer past the cap is refused, against real loopback sockets."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

httpx = pytest.importorskip("httpx", reason="the [probe] extra (httpx) is not installed")

from contam_guard.probe.backends.answer import AnswerRefused, Deadline, read_body  # noqa: E402
from contam_guard.probe.backends.openai_backend import EndpointError, endpoint_url, parse_echo  # noqa: E402


@pytest.fixture
def trickling() -> Iterator[tuple[int, threading.Event]]:
    """A raw server that sends its status line and headers one byte a second, forever."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
                if stop.is_set():
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], stop
    stop.set()
    listener.close()


def test_trickled_headers_hit_the_deadline(trickling: tuple[int, threading.Event]) -> None:
    """httpx's read timeout never fires (each byte comes within a second); the deadline does."""
    port, _ = trickling
    started = time.monotonic()
    limits = httpx.Limits(max_keepalive_connections=0)
    with (
        httpx.Client(timeout=httpx.Timeout(30), limits=limits) as client,
        Deadline(2.0) as deadline,
        pytest.raises(httpx.TransportError),
    ):
        request = client.build_request(
            "GET", f"http://127.0.0.1:{port}/", extensions={"trace": deadline.trace}
        )
        client.send(request)
    assert deadline.expired
    assert time.monotonic() - started < 6


def test_an_answer_past_the_cap_is_refused() -> None:
    body = b"x" * 5000
    response = httpx.Response(200, content=body)
    with Deadline(30) as deadline, pytest.raises(AnswerRefused, match="larger than"):
        read_body(response, deadline, cap=4096)
    with Deadline(30) as deadline:
        assert read_body(httpx.Response(200, content=body), deadline, cap=8192) == body
    encoded = httpx.Response(200, content=b"abc", headers={"Content-Encoding": "br"})
    with Deadline(30) as deadline, pytest.raises(AnswerRefused, match="encoded as br"):
        read_body(encoded, deadline)


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        (-0.5, True),
        (0, True),
        (-0.0, True),
        (0.1, False),
        (float("inf"), False),
        (float("-inf"), False),
        (10**4000, False),
    ],
)
def test_a_log_probability_is_finite_and_at_most_0(value: float, accepted: bool) -> None:
    answer = {"choices": [{"logprobs": {"tokens": ["a", " b"], "token_logprobs": [None, value]}}]}
    if accepted:
        assert parse_echo(answer, 3, "http://server/v1/completions").logprobs.tolist() == [float(value)]
    else:
        with pytest.raises(EndpointError, match="http://server/v1/completions: token 1"):
            parse_echo(answer, 3, "http://server/v1/completions")


def test_the_base_url_is_shown_without_user_and_password() -> None:
    url, shown = endpoint_url("https://me:s3cret@models.example/v1/")
    assert url.password == "s3cret" and shown == "https://models.example/v1/completions"
    with pytest.raises(EndpointError) as info:
        endpoint_url("http://me:s3cret@[::1")
    assert "s3cret" not in str(info.value) and "not a URL" in str(info.value)
    with pytest.raises(EndpointError, match="not an http"):
        endpoint_url("ftp://models.example/v1")
