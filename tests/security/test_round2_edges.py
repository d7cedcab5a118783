"""The command line's edges, probe, serve, search and reviews: hostile rows of the second and
third rounds, each with its exit code before the fix (``was``) and now.

Rows run the real CLI in a fresh copy of a registered project (``hostile``). A loopback HTTP
server in this process plays the OpenAI-compatible server for ``probe`` (one path per
misbehaviour); ``serve`` runs as a real process. Rows that need more than one CLI call (standard
output closed, a server process signalled, memory measured) are ordinary tests below the table,
with before and after in their docstrings.
"""

from __future__ import annotations

import base64
import gzip
import http.client
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.security.hostile import LONG, Row, cli, copy_project, make_project, put, run_row

SECRET = "hunter2-loopback"
GOLDEN_TEXT = {"id": "p1", "text": "Paris is the capital of France"}


# --- a loopback server that misbehaves as its path says ------------------------------------------


def _echo(prompt: str, value: Any = -1.0) -> bytes:
    tokens = re.findall(r"\s*\S+", prompt)
    offsets = [sum(len(t) for t in tokens[:n]) for n in range(len(tokens))]
    logprobs = {
        "tokens": tokens,
        "token_logprobs": [None] + [value] * (len(tokens) - 1),
        "text_offset": offsets,
    }
    return json.dumps({"choices": [{"index": 0, "logprobs": logprobs}]}).encode()


_BOMB: list[bytes] = []


def _bomb() -> bytes:
    """A gzip body of 40 KiB that expands to 96 MiB (over the probe's 64 MiB cap)."""
    if not _BOMB:
        _BOMB.append(gzip.compress(b" " * (96 << 20), compresslevel=9))
    return _BOMB[0]


class _Misbehaving(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        mode = self.path.strip("/").split("/")[0]
        encoding = None
        data = {
            "ok": lambda: _echo(body["prompt"]),
            "positive": lambda: _echo(body["prompt"], 2.5),
            "infinite": lambda: _echo(body["prompt"], float("inf")).replace(b"Infinity", b"1e999"),
            "bigint": lambda: _echo(body["prompt"]).replace(b"-1.0", b"-" + b"9" * 4000, 1),
            "deep": lambda: b"[" * 10_000 + b"]" * 10_000,
            "slow": lambda: _echo(body["prompt"]),
            "bomb": _bomb,
        }[mode]()
        if mode == "bomb":
            encoding = "gzip"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.end_headers()
        try:
            if mode == "slow":  # one byte a second: no read ever waits long, the answer never ends
                for byte in data[:30]:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(1)
            else:
                self.wfile.write(data)
        except ConnectionError:
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (the deadline rows, on purpose)


_SERVER: list[_Server] = []


def base(mode: str, userinfo: str = "") -> str:
    """The API root of the loopback server answering as ``mode``."""
    if not _SERVER:
        server = _Server(("127.0.0.1", 0), _Misbehaving)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _SERVER.append(server)
    return f"http://{userinfo}127.0.0.1:{_SERVER[0].server_address[1]}/{mode}/v1"


@pytest.fixture(scope="module", autouse=True)
def _stop_server() -> Iterator[None]:
    yield
    for server in _SERVER:
        server.shutdown()
        server.server_close()
    _SERVER.clear()


# --- builders ------------------------------------------------------------------------------


def probe(mode: str, *extra: str, userinfo: str = "") -> Any:
    def build(root: Path) -> list[str]:
        put(root, "bench.jsonl", json.dumps(GOLDEN_TEXT) + "\n")
        return ["probe", "bench.jsonl", "--backend", "openai", "--model", "tiny", "--retries", "0",
                "--base-url", base(mode, userinfo), *extra]  # fmt: skip

    return build


def probe_args(*extra: str) -> Any:
    def build(root: Path) -> list[str]:
        put(root, "bench.jsonl", json.dumps(GOLDEN_TEXT) + "\n")
        return ["probe", "bench.jsonl", "--backend", "openai", "--model", "tiny", "--retries", "0", *extra]

    return build


def scan(*extra: str) -> Any:
    def build(root: Path) -> list[str]:
        put(root, "train.jsonl", json.dumps({"text": "the compost heap wants turning"}) + "\n")
        return ["scan", "train.jsonl", *extra]

    return build


def indexed(*args: str) -> Any:
    def build(root: Path) -> list[str]:
        put(root, "notes.txt", "the allotment society notes that the compost heap wants turning\n")
        assert cli(root, "index", "notes.txt", "--index", "idx").returncode == 0
        return [*args, "--index", "idx"]

    return build


def flipped(root: Path) -> list[str]:
    """A search index with one bit of a shard's text flipped."""
    indexed("search")(root)
    generation = root / "idx" / (root / "idx" / "CURRENT").read_text().split()[0]
    texts = generation / "shards" / "s000000" / "texts.bin"
    data = bytearray(texts.read_bytes())
    data[5] ^= 1  # "allotment" -> "amlotment"
    texts.write_bytes(bytes(data))
    return ["search", "allotment", "--exact", "--index", "idx"]


def impact(scores: bytes | None = None, *extra: str) -> Any:
    def build(root: Path) -> list[str]:
        put(root, "leak.jsonl", json.dumps({"text": LONG}) + "\n")
        assert cli(root, "scan", "leak.jsonl", "--items-csv", "items.csv").returncode == 1
        lines = scores or b'{"item_id": "g-long", "score": 1}\n{"item_id": "g-short", "score": 0}\n'
        put(root, "scores.jsonl", lines)
        return ["impact", "--scores", "scores.jsonl", "--items", "items.csv", *extra]

    return build


def hostile_review(root: Path) -> list[str]:
    text = (
        f'{LONG} <script>alert("x")</script> <img src=x onerror=alert(1)> ![p](http://example.invalid/p.png)'
    )
    put(root, "train.jsonl", json.dumps({"text": text}) + "\n")
    return ["scan", "train.jsonl", "--review", "review.md"]


def no_markup(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    review = (root / "review.md").read_text(encoding="utf-8")
    assert "Brisket Cove" in review  # the snippet is there ...
    assert "<script" not in review and "<img" not in review and "](http" not in review  # ... as text
    assert "&lt;script>" in review


def no_password(root: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert SECRET not in done.stdout + done.stderr


SPARK = importlib.util.find_spec("pyspark") is not None
_spark_rows = [
    Row("scan --master local[0]", scan("--engine", "spark", "--master", "local[0]"), 2, 3, ("local[0]",)),
    Row("scan --master local[-1]", scan("--engine", "spark", "--master", "local[-1]"), 2, 3, ("local[N]",)),
    # Spark retried for 69 s before an internal error; now a connection is tried for 5 s at most.
    Row(
        "scan --master spark://127.0.0.1:1 (69 s before)",
        scan("--engine", "spark", "--master", "spark://127.0.0.1:1"),
        2,
        3,
        ("no Spark master answers at 127.0.0.1:1",),
    ),
]

ROWS = [
    Row("scan --encoding punycode", scan("--encoding", "punycode"), 2, 3, ("not a character encoding",)),
    Row("scan --encoding undefined", scan("--encoding", "undefined"), 2, 3, ("not a character encoding",)),
    Row("scan --jobs 99999999999", scan("--jobs", "99999999999"), 2, 3, ("--jobs",)),
    *(_spark_rows if SPARK else []),
    Row("serve --port -1", indexed("serve", "--port", "-1"), 2, 3, ("--port",)),
    Row("serve --port 65536", indexed("serve", "--port", "65536"), 2, 3, ("--port",)),
    Row(
        "search --limit 99999999999999999999",
        indexed("search", "allotment", "--limit", "99999999999999999999"),
        2,
        3,
        ("--limit",),
    ),
    Row("impact --seed -1", impact(None, "--seed", "-1"), 2, 3, ("--seed",)),
    Row(
        "impact: a 5,000-digit score",
        impact(b'{"item_id": "g-long", "score": ' + b"9" * 5000 + b"}\n"),
        2,
        3,
        ("scores.jsonl:1", "a number too long"),
    ),
    Row(
        "impact: a 4,000-digit score (parses, no float holds it)",
        impact(b'{"item_id": "g-long", "score": ' + b"9" * 4000 + b"}\n"),
        2,
        3,
        ("scores.jsonl:1",),
    ),
    Row(
        "impact: a score nested 10,000 deep",
        impact(b'{"item_id": "g-long", "score": ' + b"[" * 10_000 + b"]" * 10_000 + b"}\n"),
        2,
        3,
        ("scores.jsonl:1", "nested too deeply"),
    ),
    Row("probe --timeout inf", probe_args("--base-url", "http://127.0.0.1:9/v1", "--timeout", "inf"), 2, 3),
    Row(
        "probe --timeout 1e308", probe_args("--base-url", "http://127.0.0.1:9/v1", "--timeout", "1e308"), 2, 3
    ),
    Row("probe --base-url 'http://[::1'", probe_args("--base-url", "http://[::1"), 2, 3, ("not a URL",)),
    Row(
        "probe: a server answering a 4,000-digit integer",
        probe("bigint"),
        2,
        3,
        ("/bigint/v1/completions", "a log-probability is a finite number at most 0"),
    ),
    Row("probe: a server answering JSON nested 10,000 deep", probe("deep"), 2, 3, ("nested too deeply",)),
    Row(
        "probe: a positive log-probability",
        probe("positive"),
        2,
        0,
        ("/positive/v1/completions", "log-probability 2.5"),
    ),
    Row(
        "probe: an infinite log-probability", probe("infinite"), 2, 0, ("/infinite/v1", "log-probability inf")
    ),
    Row(
        "probe: a server sending one byte a second (--timeout 3)",
        probe("slow", "--timeout", "3"),
        2,
        "hang",
        ("no complete answer within 3 s",),
    ),
    Row(
        "probe: a gzip body expanding past 64 MiB",
        probe("bomb"),
        2,
        2,  # after reading all of it: 6.4 GB of memory for a 2 GiB body (see the test below)
        ("larger than 64 MiB",),
    ),
    Row(
        "probe --base-url with user:password (printed them)",
        probe("ok", userinfo=f"user:{SECRET}@"),
        0,
        0,
        ("Scored 1 item(s)",),
        check=no_password,
    ),
    Row(
        "probe --base-url with user:password, server down (printed them)",
        probe_args("--base-url", f"http://user:{SECRET}@127.0.0.1:9/v1"),
        2,
        2,
        ("could not connect",),
        check=no_password,
    ),
    Row(
        "search: a bit flipped in a shard (different answers)",
        flipped,
        2,
        0,
        ("damaged search index shard", "s000000", "contam-guard index"),
    ),
    Row(
        "scan --review: <script> and <img onerror> in training text (embedded raw)",
        hostile_review,
        1,
        1,
        ("review.md",),
        check=no_markup,
    ),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("edges") / "template")


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(row: Row, template: Path, tmp_path: Path) -> None:
    run_row(row, copy_project(template, tmp_path / "project"))


# --- standard output that cannot be written ------------------------------------------------

STDOUT_COMMANDS = [
    ["scan", "train.jsonl"],
    ["scan", "leak.jsonl"],
    ["scan", "leak.jsonl", "--format", "json"],
    ["sets"],
    ["verify"],
    ["--version"],
    ["scan", "--help"],
]


@pytest.mark.parametrize("args", STDOUT_COMMANDS, ids=" ".join)
@pytest.mark.parametrize("target", ["closed", "/dev/full"])
def test_standard_output_that_cannot_be_written_is_exit_2(
    template: Path, tmp_path: Path, args: list[str], target: str
) -> None:
    """Before: /dev/full was an internal error (exit 3); a closed standard output a traceback
    at import (exit 1). Now: exit 2 saying standard output could not be written."""
    root = copy_project(template, tmp_path / "project")
    put(root, "train.jsonl", json.dumps({"text": "the compost heap wants turning"}) + "\n")
    put(root, "leak.jsonl", json.dumps({"text": LONG}) + "\n")
    command = [sys.executable, "-m", "contam_guard", *args]
    if target == "closed":
        command = ["sh", "-c", 'exec "$@" >&-', "sh", *command]
    with open(os.devnull if target == "closed" else target, "w") as stdout:
        done = subprocess.run(
            command, cwd=root, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, check=False
        )
    assert done.returncode == 2, done.stderr
    assert "cannot write to standard output" in done.stderr and "Traceback" not in done.stderr


# --- probe: what one answer may cost -------------------------------------------------------


def test_a_compressed_answer_is_capped_in_memory(template: Path, tmp_path: Path) -> None:
    """Before: a gzip body was decoded whole (a 2 GiB body took 6.4 GB; here 96 MiB took about
    a GB). Now: refused at 64 MiB decoded; the process stays far below what the body expands to."""
    root = copy_project(template, tmp_path / "project")
    put(root, "bench.jsonl", json.dumps(GOLDEN_TEXT) + "\n")
    probe_command = [sys.executable, "-m", "contam_guard", "probe", "bench.jsonl", "--backend", "openai",
                     "--model", "tiny", "--retries", "0", "--base-url", base("bomb")]  # fmt: skip
    # A parent whose only child is the probe, so that RUSAGE_CHILDREN is the probe's peak.
    measure = (
        "import resource, subprocess, sys; "
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=False); "
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "print(done.stderr, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, *probe_command],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    code, peak_kib = map(int, done.stdout.split())
    assert code == 2 and "larger than 64 MiB" in done.stderr, done.stderr
    assert peak_kib < 400_000, f"peak {peak_kib} KiB"


# --- serve: a real process -----------------------------------------------------------------


@pytest.fixture
def served(template: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    root = copy_project(template, tmp_path / "project")
    put(root, "notes.txt", "the allotment society notes that the compost heap wants turning\n")
    assert cli(root, "index", "notes.txt", "--index", "idx").returncode == 0
    command = [sys.executable, "-m", "contam_guard", "serve", "--index", "idx", "--port", "0"]
    with subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as server:
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            assert "serving" in line, line + (server.stderr.read() if server.stderr else "")
            yield server, int(line.rsplit(":", 1)[1].split("/")[0])
        finally:
            if server.poll() is None:
                server.kill()
            server.wait(timeout=30)


def _request(
    port: int, method: str, host: str | None = None, path: str = "/?q=allotment"
) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Host": host} if host is not None else {}
    connection.request(method, path, headers=headers)
    return connection.getresponse()


def test_serve_answers_others_while_a_connection_idles(served: tuple[subprocess.Popen[str], int]) -> None:
    """Before: one connection at a time, so a half-open request blocked every other user (hang).
    Now: a thread per connection."""
    _, port = served
    idle = socket.create_connection(("127.0.0.1", port))
    try:
        idle.sendall(b"GET / HTTP/1.1\r\n")  # and never the rest
        started = time.monotonic()
        answer = _request(port, "GET")
        assert answer.status == 200 and b"allotment" in answer.read()
        assert time.monotonic() - started < 5
    finally:
        idle.close()


@pytest.mark.parametrize(
    ("host", "status", "was"),
    [
        ("evil.example", 403, 200),
        ("evil.example:{port}", 403, 200),  # DNS rebinding: the attacker's name, the right port
        ("127.0.0.1", 403, 200),  # without the port
        ("127.0.0.1:{port}", 200, 200),
        ("localhost:{port}", 200, 200),
        ("[::1]:{port}", 200, 200),
    ],
)
def test_serve_answers_only_loopback_hosts(
    served: tuple[subprocess.Popen[str], int], host: str, status: int, was: int
) -> None:
    """Before: any Host header was answered (``was``). Now: only the loopback names with the port."""
    _, port = served
    answer = _request(port, "GET", host.format(port=port))
    body = answer.read()
    assert answer.status == status
    assert (b"allotment" in body) == (status == 200)


@pytest.mark.parametrize(
    ("method", "status", "was"),
    [("HEAD", 200, 501), ("OPTIONS", 204, 501), ("TRACE", 405, 501), ("PUT", 405, 405), ("BREW", 405, 501)],
)
def test_serve_methods(served: tuple[subprocess.Popen[str], int], method: str, status: int, was: int) -> None:
    """Before: HEAD, OPTIONS and methods without a handler were 501 (``was``). Now: HEAD is the
    GET's headers, OPTIONS says what is allowed, anything else is 405 with Allow."""
    _, port = served
    answer = _request(port, method)
    body = answer.read()
    assert answer.status == status
    if method == "HEAD":
        assert body == b"" and int(answer.headers["Content-Length"]) > 0
    else:
        assert answer.headers["Allow"] == "GET, HEAD, OPTIONS"


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_exits_with_the_signal_code(
    served: tuple[subprocess.Popen[str], int], signum: int, code: int
) -> None:
    """Before: exit 0 on SIGINT and SIGTERM. Now: 130 and 143, as the exit table says."""
    server, port = served
    assert _request(port, "GET").status == 200
    server.send_signal(signum)
    assert server.wait(timeout=30) == code
    assert server.stderr is not None and "Traceback" not in server.stderr.read()


def test_redacted_search_masks_every_class(template: Path, tmp_path: Path) -> None:
    """Before: SSNs, IBANs, IPv6 addresses, private keys, JWTs and obfuscated e-mail were shown by
    ``search --redact-pii`` (exit 0). Now: each is masked (exit 0)."""
    root = copy_project(template, tmp_path / "project")
    token = base64.urlsafe_b64encode(b'{"alg": "HS256"}').rstrip(b"=").decode()
    payload = base64.urlsafe_b64encode(b'{"sub": "42"}').rstrip(b"=").decode()
    pii = {
        "536-22-1234": "[SSN]",
        "DE89 3704 0044 0532 0130 00": "[IBAN]",
        "fe80::1ff:fe23:4567:890a": "[IP]",
        f"{token}.{payload}.c2lnbmF0dXJlMTIzNDU2": "[KEY]",
        "john＠example.com": "[EMAIL]",
        "john [at] example [dot] com": "[EMAIL]",
        "john%40example.com": "[EMAIL]",
    }
    put(root, "notes.jsonl", "".join(json.dumps({"text": f"allotment record {v}"}) + "\n" for v in pii))
    assert cli(root, "index", "notes.jsonl", "--index", "idx").returncode == 0
    done = cli(root, "search", "allotment", "--index", "idx", "--exact", "--limit", "20", "--redact-pii")
    assert done.returncode == 0, done.stderr
    for value in pii:
        assert value not in done.stdout
    assert all(marker in done.stdout for marker in set(pii.values()))
