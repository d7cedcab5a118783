"""A local, read-only search page over an index (``contam-guard serve``).

The standard library's HTTP server, bound to a loopback address only (anything else is
refused: the page shows training text, and a guard must not publish it by accident). GET only:
``/`` is the page (a query box, an exact/BM25 switch, hits with their ids and highlighted
snippets, personal data masked visibly), ``/api/search`` the same answer as ``search --json``.
Every other method is 405; nothing is ever written.
"""

from __future__ import annotations

import html
import ipaddress
import json
import re
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

from contam_guard.errors import ConfigError, ContamGuardError
from contam_guard.search.query import Hit, Result, SearchIndex

MAX_LIMIT = 100
_MASK = re.compile(r"\[(?:EMAIL|PHONE|IP|KEY)\]")

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


def make_handler(index: SearchIndex, redact: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "contam-guard"

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet: queries are training text, not for a log

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            params = {k: v[-1] for k, v in parse_qs(url.query).items()}
            if url.path not in ("/", "/api/search"):
                self._send(HTTPStatus.NOT_FOUND, "text/plain", "not found\n")
                return
            query = params.get("q", "").strip()
            exact = params.get("mode", "bm25") == "exact"
            try:
                limit = max(1, min(MAX_LIMIT, int(params.get("limit", "10"))))
            except ValueError:
                limit = 10
            result: Result | None = None
            problem = ""
            if query:
                try:
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

        def _refuse(self) -> None:
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain", "read-only: GET only\n")

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815 (http.server's names)

        def _send(self, status: HTTPStatus, kind: str, text: str) -> None:
            data = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
            self.end_headers()
            self.wfile.write(data)

    return Handler


def make_server(index: SearchIndex, host: str, port: int, *, redact: bool = True) -> HTTPServer:
    """A server for ``index`` on ``host``:``port`` (loopback only; port 0 picks a free one)."""
    check_loopback(host)

    class Server(HTTPServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    try:
        return Server((host, port), make_handler(index, redact))
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
