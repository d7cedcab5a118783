"""The ``openai`` backend against a loopback HTTP server that speaks the completions shape
(``choices[].logprobs.tokens``, ``token_logprobs``, ``top_logprobs``, ``text_offset``), as vLLM
does for ``echo: true, max_tokens: 0, logprobs: 1``. Every score is checked against numbers
worked out by hand from the server's table of log-probabilities."""

from __future__ import annotations

import csv
import json
import re
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Runner, write_jsonl

pytest.importorskip("httpx", reason="the [probe] extra (httpx) is not installed")

KEY = "sk-loopback-secret-7f3a"
# log p of each word given what comes before it (the first word of a prompt has none).
LOGPROB = {
    "is": -1.0,
    "in": -1.5,
    "the": -0.5,
    "capital": -2.0,
    "France": -0.5,
    "france": -2.5,
    "of": -0.25,
    "Rome": -4.0,
    "rome": -4.0,
    "Italy": -0.5,
    "italy": -1.0,
    "cats": -3.0,
    "sleep": -2.0,
    "a": -0.5,
    "lot": -1.0,
    "dogs": -6.0,
    "bark": -2.0,
    "loudly": -4.0,
}


@dataclass
class Behaviour:
    mode: str = "echo"
    """echo | no-echo | generation | fail-first | slow | unauthorised"""
    failures: int = 0
    """fail-first: how many 503s each prompt gets before its answer."""
    delay: float = 0.0
    seen: list[dict[str, Any]] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def echo(prompt: str) -> dict[str, Any]:
    """The completions answer for ``prompt``: its words as tokens, each with its log-probability."""
    tokens = re.findall(r"\s*\S+", prompt)
    offsets, at = [], 0
    for token in tokens:
        offsets.append(at)
        at += len(token)
    values: list[float | None] = [None] + [LOGPROB[t.strip()] for t in tokens[1:]]
    top: list[dict[str, float] | None] = [None] + [{t: LOGPROB[t.strip()]} for t in tokens[1:]]
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "model": "tiny",
        "choices": [
            {
                "index": 0,
                "text": prompt,
                "finish_reason": "length",
                "logprobs": {
                    "tokens": tokens,
                    "token_logprobs": values,
                    "top_logprobs": top,
                    "text_offset": offsets,
                },
            }
        ],
    }


def make_handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep the test output clean
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with behaviour.lock:
                behaviour.seen.append(body)
                behaviour.auth.append(self.headers.get("Authorization"))
                behaviour.in_flight += 1
                behaviour.most_in_flight = max(behaviour.most_in_flight, behaviour.in_flight)
                tries = behaviour.attempts[body["prompt"]] = behaviour.attempts.get(body["prompt"], 0) + 1
            self.counted = True
            try:
                time.sleep(behaviour.delay)
                if self.path != "/v1/completions":
                    self.send(404, {"error": "not found"})
                elif behaviour.mode == "unauthorised":
                    self.send(401, {"error": {"message": "bad key"}})
                elif behaviour.mode == "fail-first" and tries <= behaviour.failures:
                    self.send(503, {"error": "overloaded"}, {"Retry-After": "0"})
                elif behaviour.mode == "no-echo":
                    # A server that ignores echo: a generated continuation, no prompt tokens.
                    self.send(200, {"choices": [{"index": 0, "text": "", "logprobs": None}]})
                elif behaviour.mode == "generation":
                    answer = echo("Paris is the capital")
                    answer["choices"][0]["logprobs"]["text_offset"] = [
                        len(body["prompt"]) + i for i in range(4)
                    ]
                    self.send(200, answer)
                else:
                    self.send(200, echo(body["prompt"]))
            finally:
                self.leave()

        def leave(self) -> None:
            """The request is no longer in flight: counted before the answer is written, since a
            client may send its next request as soon as it has read this one's answer."""
            if getattr(self, "counted", False):
                self.counted = False
                with behaviour.lock:
                    behaviour.in_flight -= 1

        def send(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.leave()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


class LoopbackServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (the timeout test's, on purpose) is no error; anything else is
        printed as usual. Its answer is written after the test may have ended, where a printed
        traceback would land in another test's output, or in the run's."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture
def server() -> Iterator[Callable[..., tuple[str, Behaviour]]]:
    started: list[ThreadingHTTPServer] = []

    def start(**settings: Any) -> tuple[str, Behaviour]:
        behaviour = Behaviour(**settings)
        httpd = LoopbackServer(("127.0.0.1", 0), make_handler(behaviour))
        httpd.daemon_threads = True
        httpd.block_on_close = False
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/v1", behaviour

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


GOLDEN = [
    {"id": "fr", "text": "Paris is the capital of France"},
    {"id": "it", "text": "Rome is the capital of Italy"},
    {"id": "cat", "text": "cats sleep a lot"},
]
REFERENCE = [{"id": "dog", "text": "dogs bark loudly"}]


def expected_rows() -> list[dict[str, Any]]:
    """Worked out by hand from LOGPROB (T = words - 1; k = 0.2 -> max(1, int(0.2 T)) = 1)."""
    fr = (1.0 + 0.5 + 2.0 + 0.25 + 0.5) / 5  # is the capital of France
    fr_lower = (1.0 + 0.5 + 2.0 + 0.25 + 2.5) / 5  # ... of france
    it = (1.0 + 0.5 + 2.0 + 0.25 + 0.5) / 5  # is the capital of Italy
    it_lower = (1.0 + 0.5 + 2.0 + 0.25 + 1.0) / 5
    cat = (2.0 + 0.5 + 1.0) / 3  # sleep a lot (already lower case: lowercase = 1)
    dog = (2.0 + 4.0) / 2  # bark loudly
    rows = [
        ("bench", "fr", 0, 5, fr, len(zlib.compress(b"Paris is the capital of France")), fr / fr_lower, -2.0),
        ("bench", "it", 1, 5, it, len(zlib.compress(b"Rome is the capital of Italy")), it / it_lower, -2.0),
        ("bench", "cat", 2, 3, cat, len(zlib.compress(b"cats sleep a lot")), 1.0, -2.0),
        ("reference", "dog", 0, 2, dog, len(zlib.compress(b"dogs bark loudly")), 1.0, -4.0),
    ]
    return [
        {
            "set": s,
            "item_id": i,
            "test_index": n,
            "tokens": t,
            "loss": loss,
            "zlib": loss / z,
            "lowercase": low,
            "mink": mink,
        }
        for s, i, n, t, loss, z, low, mink in rows
    ]


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)



def endpoint(url: str) -> tuple[str, ...]:
    """The options that point the probe at the loopback server."""
    return ("--backend", "openai", "--model", "tiny", "--base-url", url)

def test_every_score_matches_the_hand_computation(
    tmp_path: Path, cli: Runner, server: Callable[..., tuple[str, Behaviour]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, behaviour = server()
    monkeypatch.setenv("LOOPBACK_KEY", KEY)
    golden = write_jsonl(tmp_path / "bench.jsonl", GOLDEN)
    reference = write_jsonl(tmp_path / "later.jsonl", REFERENCE)
    out = tmp_path / "items.csv"
    done = cli(
        "probe",
        golden,
        "--id-field",
        "id",
        *endpoint(url),
        "--api-key-env",
        "LOOPBACK_KEY",
        "--reference",
        reference,
        "--items-csv",
        out,
        "--summary-json",
        tmp_path / "summary.json",
    )
    assert done.code == 0, done.err
    header, rows = read_csv(out)
    assert header == ["set", "item_id", "test_index", "tokens", "loss", "zlib", "lowercase", "mink"]
    expected = expected_rows()
    assert [(r["set"], r["item_id"], int(r["test_index"]), int(r["tokens"])) for r in rows] == [
        (e["set"], e["item_id"], e["test_index"], e["tokens"]) for e in expected
    ]
    for row, want in zip(rows, expected):
        for method in ("loss", "zlib", "lowercase", "mink"):
            assert float(row[method]) == pytest.approx(want[method], rel=1e-12), (row["item_id"], method)
    # What was asked of the server: an echo of each prompt and of each lower-cased one that differs.
    assert {body["prompt"] for body in behaviour.seen} == {
        *(g["text"] for g in GOLDEN),
        "dogs bark loudly",
        "paris is the capital of france",
        "rome is the capital of italy",
    }
    for body in behaviour.seen:
        assert (body["echo"], body["max_tokens"], body["logprobs"], body["model"]) == (True, 0, 1, "tiny")
    assert set(behaviour.auth) == {f"Bearer {KEY}"}
    assert KEY not in done.out + done.err
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert KEY not in json.dumps(summary)
    # One non-member (dog, loss 3.0) against three members (losses 0.85, 0.85, 1.1667): every
    # member is more likely seen, by loss and by mink (-2 > -4): AUROC 1, U = 3.
    assert summary["results"]["loss"]["auroc"] == 1.0
    assert summary["results"]["loss"]["mann_whitney_u"] == 3.0
    assert summary["results"]["mink"]["auroc"] == 1.0
    # lowercase: members 0.68, 0.895, 1.0 against 1.0: the tie counts half -> (1 + 1 + 0.5) / 3.
    assert summary["results"]["lowercase"]["auroc"] == pytest.approx(2.5 / 3)


def test_auroc_and_mann_whitney_by_hand(
    tmp_path: Path, cli: Runner, server: Callable[..., tuple[str, Behaviour]]
) -> None:
    """Members with losses 1, 2, 3 against non-members 1.5, 2.5, 3.5: of the 9 pairs the member
    has the lower loss in 3 + 2 + 1 = 6 -> AUROC 6/9, U = 6; the exact one-sided p-value is
    P(U >= 6) for 3 and 3 = (3 + 2 + 1 + 1) / C(6, 3) = 7/20."""
    url, _ = server()
    texts = {
        "m1": "x is",
        "m2": "x capital",
        "m3": "x cats",
        "n1": "x in",
        "n2": "x france",
        "n3": "x loudly cats",
    }
    items = [{"id": name, "text": text} for name, text in texts.items()]
    golden = write_jsonl(tmp_path / "bench.jsonl", items)
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "item_id,label\n" + "".join(f"{n},{1 if n[0] == 'm' else 0}\n" for n in texts), encoding="utf-8"
    )
    done = cli(
        "probe",
        golden,
        "--id-field",
        "id",
        *endpoint(url),
        "--labels",
        labels,
        "--methods",
        "loss",
        "--summary-json",
        tmp_path / "s.json",
        "--summary",
        tmp_path / "s.md",
    )
    assert done.code == 0, done.err
    result = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["results"]["loss"]
    assert result["auroc"] == pytest.approx(6 / 9)
    assert result["mann_whitney_u"] == 6.0
    assert result["p_value"] == pytest.approx(7 / 20)
    assert result["significant"] is False
    assert (result["members"], result["nonmembers"]) == (3, 3)
    assert "| loss | 0.667 |" in (tmp_path / "s.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("no-echo", "did not echo the prompt's log-probabilities"),
        ("generation", "did not echo the prompt's log-probabilities"),
        ("unauthorised", "HTTP 401"),
    ],
)
def test_a_server_that_does_not_echo_is_a_clear_error(
    tmp_path: Path,
    cli: Runner,
    server: Callable[..., tuple[str, Behaviour]],
    mode: str,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, _ = server(mode=mode)
    monkeypatch.setenv("LOOPBACK_KEY", KEY)
    golden = write_jsonl(tmp_path / "bench.jsonl", GOLDEN)
    done = cli(
        "probe",
        golden,
        *endpoint(url),
        "--api-key-env",
        "LOOPBACK_KEY",
        "--items-csv",
        tmp_path / "items.csv",
    )
    assert done.code == 2, done.err
    assert message in done.err
    assert "Traceback" not in done.err and KEY not in done.out + done.err
    assert "capital" not in done.out + done.err  # golden text is never quoted
    assert not (tmp_path / "items.csv").exists()


def test_retries_after_5xx(tmp_path: Path, cli: Runner, server: Callable[..., tuple[str, Behaviour]]) -> None:
    url, behaviour = server(mode="fail-first", failures=2)
    golden = write_jsonl(tmp_path / "bench.jsonl", GOLDEN[:2])
    base = ("probe", golden, "--backend", "openai", "--model", "tiny", "--base-url", url, "--methods", "loss")
    done = cli(*base, "--retries", "2", "--items-csv", tmp_path / "items.csv")
    assert done.code == 0, done.err
    assert behaviour.attempts == {GOLDEN[0]["text"]: 3, GOLDEN[1]["text"]: 3}
    _, rows = read_csv(tmp_path / "items.csv")
    assert float(rows[0]["loss"]) == pytest.approx(4.25 / 5)

    url, behaviour = server(mode="fail-first", failures=2)
    done = cli(*base[:-4], "--base-url", url, "--methods", "loss", "--retries", "1")
    assert done.code == 2
    assert "HTTP 503 (after 2 attempts)" in done.err
    assert set(behaviour.attempts.values()) == {2}


def test_timeout_and_concurrency_limit(
    tmp_path: Path, cli: Runner, server: Callable[..., tuple[str, Behaviour]]
) -> None:
    url, behaviour = server(delay=0.05)
    many = [{"id": str(n), "text": f"cats sleep {'a lot ' * (n + 1)}".strip()} for n in range(8)]
    golden = write_jsonl(tmp_path / "bench.jsonl", many)
    base = ("probe", golden, "--backend", "openai", "--model", "tiny", "--methods", "loss")
    assert cli(*base, "--base-url", url, "--concurrency", "2").code == 0
    assert len(behaviour.seen) == 8 and behaviour.most_in_flight <= 2
    url, behaviour = server(delay=0.05)
    assert cli(*base, "--base-url", url, "--concurrency", "1").code == 0
    assert behaviour.most_in_flight == 1

    url, behaviour = server(delay=1.0)
    done = cli(*base, "--base-url", url, "--timeout", "0.1", "--retries", "0")
    assert done.code == 2
    assert "no complete answer within 0.1 s" in done.err


def test_minkpp_is_refused_before_any_request(
    tmp_path: Path, cli: Runner, server: Callable[..., tuple[str, Behaviour]]
) -> None:
    url, behaviour = server()
    golden = write_jsonl(tmp_path / "bench.jsonl", GOLDEN)
    done = cli(
        "probe",
        golden,
        *endpoint(url),
        "--methods",
        "mink,minkpp",
    )
    assert done.code == 2
    assert "minkpp needs the whole next-token distribution" in done.err
    assert "--backend transformers" in done.err
    assert behaviour.seen == []


def test_an_unset_key_variable_is_refused(
    tmp_path: Path, cli: Runner, server: Callable[..., tuple[str, Behaviour]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, behaviour = server()
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    golden = write_jsonl(tmp_path / "bench.jsonl", GOLDEN)
    done = cli(
        "probe",
        golden,
        *endpoint(url),
        "--api-key-env",
        "NO_SUCH_KEY_VAR",
    )
    assert done.code == 2
    assert "NO_SUCH_KEY_VAR" in done.err and "not set" in done.err
    assert behaviour.seen == []
