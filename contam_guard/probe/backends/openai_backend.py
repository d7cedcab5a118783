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

Requests run ``concurrency`` at a time, each with a ``timeout`` (seconds) and up to ``retries``
more attempts after a connection error, a timeout, HTTP 408, 409, 429 or 5xx, waiting as the
server's ``Retry-After`` says (at most 30 s) or else 0.5 s, 1 s, 2 s, ... (at most 8 s). The API
key is read from an environment variable and sent as a bearer token; it is never logged and no
message quotes it, nor anything the server sent back (an echo holds the golden text).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import numpy as np

from contam_guard.errors import ContamGuardError
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
        self.settings = settings
        self.url = settings.base_url.rstrip("/") + "/completions"

    def describe(self) -> str:
        return f"openai-compatible {self.settings.model} at {self.url}"

    def log_probs(self, texts: Sequence[str]) -> list[TokenLogProbs]:
        headers = {"Content-Type": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        timeout = httpx.Timeout(self.settings.timeout)
        with (
            httpx.Client(headers=headers, timeout=timeout, follow_redirects=False) as client,
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

    def _post(self, client: httpx.Client, body: dict[str, object]) -> object:
        """The decoded JSON answer, after retries; ``EndpointError`` when there is none."""
        attempts = self.settings.retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = client.post(self.url, json=body)
            except httpx.TimeoutException:
                problem = f"no answer within {self.settings.timeout:g} s"
                wait = _backoff(attempt)
            except httpx.TransportError as exc:
                problem = f"could not connect ({type(exc).__name__})"
                wait = _backoff(attempt)
            else:
                if response.status_code == 200:
                    try:
                        return response.json()
                    except (json.JSONDecodeError, UnicodeDecodeError):
                        raise EndpointError(f"{self.url}: the answer is not JSON") from None
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
        if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
            raise EndpointError(f"{url}: token {position} of an echo has no log-probability", hint=None)
        scored.append(float(value))
    return TokenLogProbs(logprobs=np.array(scored, dtype=np.float64))


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
