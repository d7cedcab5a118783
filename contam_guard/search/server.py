"""A local, read-only search page over an index (``contam-guard serve``).

The standard library's threading HTTP server, bound to a loopback address only (anything else
is refused: the page shows training text, and a guard must not publish it by accident). Each
connection is served in a thread of its own with a socket timeout, so an idle or half-open
connection holds up nobody else; searches run one at a time (the index's readers are shared).

Only requests addressed to the loopback by name are answered (``Host: 127.0.0.1:PORT``,
``localhost:PORT`` or ``[::1]:PORT``): a page on another site that re-points its own DNS name
at 127.0.0.1 (DNS rebinding) sends its own name as ``Host`` and gets 403, so it cannot read the
search. GET and HEAD: ``/`` is the page (a query box, an exact/BM25 switch, hits with their ids
and highlighted snippets, personal data masked visibly), ``/api/search`` the same answer as
``search --json``. OPTIONS says what is allowed; every other method is 405; nothing is ever
written.
"""

from __future__ import annotations

import html
import ipaddress
import json
import re
import socket
import sys
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from typing import cast
from urllib.parse import parse_qs, urlsplit

from contam_guard.core.redact import MARKERS
from contam_guard.errors import ConfigError, ContamGuardError
from contam_guard.search.query import Hit, Result, SearchIndex

MAX_LIMIT = 100
_MASK = re.compile("|".join(re.escape(marker) for marker in MARKERS))
ALLOWED = "GET, HEAD, OPTIONS"
CONNECTION_TIMEOUT = 30.0
"""Seconds a connection may stay silent before it is closed."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>contam-guard search</title>
<style>
body {{ font-family: sans-serif; max-width: 60em; margin: 2em auto; }}
mark {{ background: #ffe066; }}
.pii {{ background: #333; color: #fff; padding: 0 .2em; border-radius: .2em; }}
.hit {{ border-top: 1px solid #ccc; padding: .5em 0; }}
.id {{ font-family: monospace; color: #555; }}
.error {{ color: #b00; }}
</style></head><body>
<h1>contam-guard search</h1>
<p>Index: <span class="id">{root}</span> ({files} files, {records} records). Read-only.</p>
<form method="get" action="/">
<input type="search" name="q" value="{query}" size="60" autofocus aria-label="query">
<label><input type="radio" name="mode" value="exact"{exact}> exact</label>
<label><input type="radio" name="mode" value="bm25"{bm25}> BM25</label>
<input type="number" name="limit" value="{limit}" min="1" max="{max_limit}" aria-label="limit">
<button type="submit">Search</button>
</form>
{body}
</body></html>
"""


def check_loopback(host: str) -> None:
    """Refuse any host that is not a loopback address (``ConfigError``, exit 2)."""
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        raise ConfigError(f"--host {host}: not an address or a known host name") from None
    for address in addresses:
        if not ipaddress.ip_address(address.split("%")[0]).is_loopback:
            raise ConfigError(
                f"--host {host}: serve binds to loopback only (127.0.0.1, ::1, localhost); "
                f"{address} is not a loopback address",
                hint="the page shows training text: reach it from elsewhere through an SSH tunnel",
            )


def _snippet_html(hit: Hit) -> str:
    out = []
    for text, marked in hit.snippet.parts:
        escaped = _MASK.sub(lambda m: f'<span class="pii">{m.group()}</span>', html.escape(text))
        out.append(f"<mark>{escaped}</mark>" if marked else escaped)
    return "".join(out).replace("\n", "<br>")


def _results_html(result: Result) -> str:
    if result.mode == "exact":
        head = f'<p id="summary">{result.count} occurrences in {result.documents} records (exact).</p>'
    else:
        head = f'<p id="summary">{len(result.hits)} records ranked by BM25.</p>'
    rows = []
    for hit in result.hits:
        where = f"{hit.file} record {hit.record}" + (f" line {hit.line}" if hit.line is not None else "")
        ident = html.escape(f"{where} {hit.field} offset {hit.offset}")
        score = f" score {hit.score:g}" if result.mode == "bm25" else ""
        text = _snippet_html(hit)
        rows.append(f'<div class="hit"><div class="id">{ident}{score}</div><div>{text}</div></div>')
    return head + "\n".join(rows)


def allowed_hosts(port: int) -> frozenset[str]:
    """The ``Host`` values a request to the server on ``port`` may carry (lower case)."""
    names = {f"{name}:{port}" for name in LOOPBACK_NAMES}
    if port == 80:  # the default port is left out of Host
        names |= set(LOOPBACK_NAMES)
    return frozenset(names)


def make_handler(index: SearchIndex, redact: bool) -> type[BaseHTTPRequestHandler]:
    searching = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        server_version = "contam-guard"
        timeout = CONNECTION_TIMEOUT

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet: queries are training text, not for a log

        def parse_request(self) -> bool:
            """The request line and headers, then the checks every method shares: the Host
            (DNS rebinding) and the method (405 with Allow, not http.server's 501)."""
            if not super().parse_request():
                return False
            host = (self.headers.get("Host") or "").strip().lower()
            if host not in allowed_hosts(cast(HTTPServer, self.server).server_port):
                self._send(
                    HTTPStatus.FORBIDDEN,
                    "text/plain",
                    "this server answers only requests to 127.0.0.1, localhost or [::1] with its port\n",
                )
                return False
            if self.command not in ("GET", "HEAD", "OPTIONS"):
                self._send(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain", "read-only: GET, HEAD or OPTIONS\n")
                return False
            return True

        def do_OPTIONS(self) -> None:
            self.send_response(HTTPStatus.NO_CONTENT)
            self.send_header("Allow", ALLOWED)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            params = {k: v[-1] for k, v in parse_qs(url.query).items()}
            if url.path not in ("/", "/api/search"):
                self._send(HTTPStatus.NOT_FOUND, "text/plain", "not found\n")
                return
            query = params.get("q", "").strip()
            exact = params.get("mode", "bm25") == "exact"
            try:
                limit = max(1, min(MAX_LIMIT, int(params.get("limit", "10")[:6])))
            except ValueError:
                limit = 10
            result: Result | None = None
            problem = ""
            if query:
                try:
                    with searching:
                        result = index.search(query, exact=exact, limit=limit, redact=redact)
                except ContamGuardError as exc:
                    problem = str(exc)
            if url.path == "/api/search":
                if result is None:
                    answer = json.dumps({"error": problem or "no query"})
                    self._send(HTTPStatus.BAD_REQUEST, "application/json", answer)
                else:
                    answer = json.dumps(result.as_json(), ensure_ascii=False)
                    self._send(HTTPStatus.OK, "application/json; charset=utf-8", answer)
                return
            body = _results_html(result) if result is not None else ""
            if problem:
                body = f'<p class="error">{html.escape(problem)}</p>'
            page = PAGE.format(
                root=html.escape(str(index.root)),
                files=sum(f.live for f in index.meta.files),
                records=sum(f.records for f in index.meta.files if f.live),
                query=html.escape(query, quote=True),
                exact=" checked" if exact else "",
                bm25="" if exact else " checked",
                limit=limit,
                max_limit=MAX_LIMIT,
                body=body,
            )
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", page)

        def _send(self, status: HTTPStatus, kind: str, text: str) -> None:
            data = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
            if status == HTTPStatus.METHOD_NOT_ALLOWED:
                self.send_header("Allow", ALLOWED)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

    return Handler


class Server(ThreadingHTTPServer):
    """A thread per connection; closing does not wait for idle connections (daemon threads).
    A request that fails in a way the handler did not answer (most often a client that hung
    up) goes to ``on_error`` with the exception, never to a traceback on stderr."""

    daemon_threads = True
    block_on_close = False
    on_error: Callable[[BaseException], None] | None = None

    def handle_error(self, request: object, client_address: object) -> None:
        error = sys.exc_info()[1]
        quiet = isinstance(error, (ConnectionError, TimeoutError))  # the client went away
        if error is not None and not quiet and self.on_error is not None:
            self.on_error(error)


def make_server(
    index: SearchIndex,
    host: str,
    port: int,
    *,
    redact: bool = True,
    on_error: Callable[[BaseException], None] | None = None,
) -> Server:
    """A server for ``index`` on ``host``:``port`` (loopback only; port 0 picks a free one)."""
    check_loopback(host)
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port}: a port is a number from 0 to 65535")

    class Bound(Server):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    try:
        server = Bound((host, port), make_handler(index, redact))
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    server.on_error = on_error
    return server
