"""Token log-probabilities from an OpenAI-compatible completions endpoint (as vLLM serves it).

Each text is sent on its own to ``POST {base_url}/completions`` with
``{"model": ..., "prompt": text, "max_tokens": 0, "echo": true, "logprobs": 1, "temperature": 0}``:
the server echoes the prompt's tokens with their log-probabilities and generates nothing. The
answer's ``choices[0].logprobs`` holds ``tokens``, ``token_logprobs`` (the first is null: the
first token has no log-probability), ``top_logprobs`` and ``text_offset`` (each token's offset
in the echoed text). Tokens at an offset past the prompt (a server that generated some anyway)
are left out. A server that does not echo (no log-probabilities, or tokens that do not start at
the prompt's start) is an error, never a silent score of something else.

Only the chosen tokens' log-probabilities come back, not the whole next-token distribution, so
``minkpp`` cannot be computed here (the command refuses it before any request).

Requests run ``concurrency`` at a time, each with a ``timeout`` (seconds: a deadline for the
whole answer, ``answer.Deadline``) and up to ``retries`` more attempts after a connection error,
a timeout, HTTP 408, 409, 429 or 5xx, waiting as the server's ``Retry-After`` says (at most 30 s)
or else 0.5 s, 1 s, 2 s, ... (at most 8 s). An answer is read up to ``answer.MAX_ANSWER_BYTES``.
The API key is read from an environment variable and sent as a bearer token; it is never logged
and no message quotes it, nor anything the server sent back (an echo holds the golden text), nor
the user name and password a ``--base-url`` may hold (they are sent, as HTTP basic auth).

Every log-probability must be a finite number at most 0: a server that answers anything else
(a positive value, infinity, an integer of 4,000 digits) is refused, never scored.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import numpy as np

from contam_guard.errors import ContamGuardError
from contam_guard.probe.backends.answer import (
    ACCEPT_ENCODING,
    AnswerRefused,
    AnswerTimeout,
    Deadline,
    read_body,
)
from contam_guard.probe.scores import TokenLogProbs

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 30.0
FIRST_BACKOFF = 0.5
MAX_BACKOFF = 8.0


class EndpointError(ContamGuardError):
    """The endpoint failed, or answered something that is not an echo of log-probabilities."""


@dataclass(frozen=True)
class EndpointSettings:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 3
    concurrency: int = 4
    key_env: str | None = None
    """The variable the key came from (named in a 401/403 message; the key itself never is)."""


class OpenAIBackend:
    """Log-probabilities from ``settings.base_url``; see the module docstring."""

    full_distribution = False

    def __init__(self, settings: EndpointSettings) -> None:
        if not (math.isfinite(settings.timeout) and settings.timeout > 0):
            raise EndpointError(f"--timeout {settings.timeout}: give a number of seconds above 0")
        self.settings = settings
        self.endpoint, self.url = endpoint_url(settings.base_url)

    def describe(self) -> str:
        return f"openai-compatible {self.settings.model} at {self.url}"

    def log_probs(self, texts: Sequence[str]) -> list[TokenLogProbs]:
        headers = {"Content-Type": "application/json", "Accept-Encoding": ACCEPT_ENCODING}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        timeout = httpx.Timeout(self.settings.timeout)
        # No connection is kept alive: each request owns its connection, which its deadline shuts.
        limits = httpx.Limits(max_keepalive_connections=0)
        with (
            httpx.Client(headers=headers, timeout=timeout, limits=limits, follow_redirects=False) as client,
            ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool,
        ):
            futures = [pool.submit(self._one, client, text) for text in texts]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _one(self, client: httpx.Client, text: str) -> TokenLogProbs:
        body = {
            "model": self.settings.model,
            "prompt": text,
            "max_tokens": 0,
            "echo": True,
            "logprobs": 1,
            "temperature": 0,
        }
        return parse_echo(self._post(client, body), len(text), self.url)

    def _exchange(self, client: httpx.Client, body: dict[str, object]) -> tuple[httpx.Response, bytes]:
        """One request: the response and, for a 200, its whole body, within the deadline."""
        with Deadline(self.settings.timeout) as deadline:
            try:
                request = client.build_request(
                    "POST", self.endpoint, json=body, extensions={"trace": deadline.trace}
                )
                response = client.send(request, stream=True)
                try:
                    data = read_body(response, deadline) if response.status_code == 200 else b""
                finally:
                    response.close()
            except AnswerRefused as exc:
                raise EndpointError(
                    f"{self.url}: {exc}", hint="the probe reads echoes of one prompt"
                ) from None
            except httpx.TransportError:
                if deadline.expired:
                    raise AnswerTimeout from None
                raise
            except httpx.DecodingError:
                raise EndpointError(f"{self.url}: the answer's content encoding is broken") from None
        return response, data

    def _post(self, client: httpx.Client, body: dict[str, object]) -> object:
        """The decoded JSON answer, after retries; ``EndpointError`` when there is none."""
        attempts = self.settings.retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response, data = self._exchange(client, body)
            except (httpx.TimeoutException, AnswerTimeout):
                problem = f"no complete answer within {self.settings.timeout:g} s"
                wait = _backoff(attempt)
            except httpx.TransportError as exc:
                problem = f"could not connect ({type(exc).__name__})"
                wait = _backoff(attempt)
            else:
                if response.status_code == 200:
                    return _json(data, self.url)
                if response.status_code not in RETRY_STATUS:
                    raise EndpointError(f"{self.url}: HTTP {response.status_code}", hint=self._hint(response))
                problem = f"HTTP {response.status_code}"
                asked = _retry_after(response)
                wait = _backoff(attempt) if asked is None else asked
            if last:
                break
            time.sleep(wait)
        raise EndpointError(
            f"{self.url}: {problem} (after {attempts} attempt{'s' if attempts > 1 else ''})",
            hint="check that the server is up; --timeout and --retries give it more time",
        )

    def _hint(self, response: httpx.Response) -> str | None:
        if response.status_code in (401, 403):
            where = f"the key in ${self.settings.key_env}" if self.settings.key_env else "--api-key-env"
            return f"the server refused the request: check {where}"
        if response.status_code in (400, 404, 422):
            return "check --base-url (up to /v1) and --model; the server must accept echo with max_tokens 0"
        return None


def parse_echo(answer: object, prompt_chars: int, url: str) -> TokenLogProbs:
    """The prompt's log-probabilities from one completions answer (see the module docstring)."""
    not_echoed = EndpointError(
        f"{url}: the server did not echo the prompt's log-probabilities",
        hint="the probe needs a completions endpoint that honours echo=true, max_tokens=0 and "
        "logprobs=1 (vLLM's OpenAI-compatible server does); chat endpoints cannot",
    )
    try:
        logprobs = answer["choices"][0]["logprobs"]  # type: ignore[index]
        tokens = logprobs["tokens"]
        values = logprobs["token_logprobs"]
        offsets = logprobs.get("text_offset")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise not_echoed from None
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise not_echoed
    if offsets is not None:
        if not isinstance(offsets, list) or len(offsets) != len(tokens):
            raise not_echoed
        if offsets and offsets[0] != 0:  # the tokens are a generation after the prompt
            raise not_echoed
        # Only the prompt's own tokens (a server may add generated ones despite max_tokens 0).
        values = [v for v, at in zip(values, offsets) if isinstance(at, int) and at < max(prompt_chars, 1)]
    if prompt_chars and not values:
        raise not_echoed
    scored: list[float] = []
    for position, value in enumerate(values):
        if position == 0:
            continue  # the first token has no log-probability (null; some servers send one anyway)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or _is_nan(value):
            raise EndpointError(f"{url}: token {position} of an echo has no log-probability", hint=None)
        scored.append(_log_probability(value, position, url))
    return TokenLogProbs(logprobs=np.array(scored, dtype=np.float64))


def _is_nan(value: float) -> bool:
    return isinstance(value, float) and math.isnan(value)  # (an int is never NaN, however long)


def _log_probability(value: float, position: int, url: str) -> float:
    """``value`` as a log-probability: a finite number at most 0, else the answer is refused."""
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits
        number = math.inf
    if math.isfinite(number) and number <= 0:
        return number
    shown = f"{number:g}" if isinstance(value, float) or math.isfinite(number) else "an integer too large"
    raise EndpointError(
        f"{url}: token {position} of the echo has the log-probability {shown}; a log-probability "
        "is a finite number at most 0, so the server's answer is refused",
        hint="check the server: it does not send log-probabilities (a model's are never positive)",
    )


def _json(data: bytes, url: str) -> object:
    """The answer's JSON; ``EndpointError`` for anything else (numbers of more than 4,300 digits
    and nesting deeper than Python's recursion limit included)."""
    try:
        return json.loads(data)
    except ValueError:  # JSONDecodeError, UnicodeDecodeError, an integer too long to convert
        raise EndpointError(f"{url}: the answer is not JSON") from None
    except RecursionError:
        raise EndpointError(f"{url}: the answer is not JSON the probe reads (nested too deeply)") from None


def endpoint_url(base_url: str) -> tuple[httpx.URL, str]:
    """The completions URL of ``base_url`` and the same as shown in messages (without the user
    name and password it may hold); ``EndpointError`` when it is not an http(s) URL."""
    shown = _without_userinfo(base_url.rstrip("/") + "/completions")
    try:
        url = httpx.URL(base_url.rstrip("/") + "/completions")
    except httpx.InvalidURL as exc:
        raise EndpointError(
            f"--base-url {_without_userinfo(base_url)}: not a URL ({exc})",
            hint="give the server's API root, e.g. http://127.0.0.1:8000/v1",
        ) from None
    if url.scheme not in ("http", "https") or not url.host:
        raise EndpointError(
            f"--base-url {_without_userinfo(base_url)}: not an http:// or https:// URL with a host",
            hint="give the server's API root, e.g. http://127.0.0.1:8000/v1",
        )
    return url, shown


def _without_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (also in a URL that does not parse)."""
    return re.sub(r"(?<=//)[^/?#]*@", "", url, count=1)


def _backoff(attempt: int) -> float:
    return float(min(MAX_BACKOFF, FIRST_BACKOFF * 2**attempt))


def _retry_after(response: httpx.Response) -> float | None:
    """The server's ``Retry-After`` in seconds (a number; at most ``MAX_RETRY_AFTER``)."""
    value = response.headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, MAX_RETRY_AFTER)
