"""Whether a model name can be looked up on the Hugging Face hub, decided in about a second.

``from_pretrained("gpt2")`` without a network retries every file it asks the hub for with a
backoff (five retries, 1 + 2 + 4 + 8 + 8 s): about 50 s before the probe can say what is wrong.
So before loading a model by name, the probe checks once whether the hub's host (or the proxy
in front of it) accepts a connection. When it does not, or when ``HF_HUB_OFFLINE`` says so, the
model is loaded from the local cache only (``local_files_only``): a cached model loads at once,
an uncached one fails at once, with the hint that says how to get it there.

Only reaching the host is checked (no request is sent, nothing is downloaded): a hub that
accepts connections but answers slowly is left to the libraries' own timeouts.
"""

from __future__ import annotations

import os
import socket
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_ENDPOINT = "https://huggingface.co"
CONNECT_TIMEOUT = 2.0
"""Seconds to wait for the hub's host to accept a connection."""
_TRUE = frozenset({"1", "on", "yes", "true"})


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def endpoint() -> str:
    """The hub the libraries would ask (``HF_ENDPOINT``, else huggingface.co)."""
    return os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT


def _address(url: str) -> tuple[str, int] | None:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def _via(url: str) -> tuple[str, int] | None:
    """Where a connection to ``url`` goes first: its proxy when one is set for it (and the host
    is not in ``NO_PROXY``), else the host itself."""
    host = urlsplit(url).hostname or ""
    proxies = urllib.request.getproxies()
    scheme = urlsplit(url).scheme or "https"
    proxy = proxies.get(scheme) or proxies.get("all")
    if proxy and not urllib.request.proxy_bypass(host):
        return _address(proxy)
    return _address(url)


def offline_reason(model: str, *, timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Why ``model`` must be loaded from the local cache only, or None: it is a folder, or the
    hub can be reached (its host, or the proxy in front of it, accepts a connection in
    ``timeout`` seconds)."""
    if Path(model).exists():
        return None
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if _flag(name):
            return f"{name} is set"
    url = endpoint()
    where = _via(url)
    if where is None:
        return f"the hub address {url} is not a URL (HF_ENDPOINT)"
    host, port = where
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        problem = exc.strerror or str(exc) or type(exc).__name__
        return f"{host}:{port} cannot be reached ({problem})"


__all__ = ["CONNECT_TIMEOUT", "endpoint", "offline_reason"]
