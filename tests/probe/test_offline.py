"""A model named without a network fails (or loads from the cache) at once, not after the hub's
retries: ``probe --model gpt2`` offline took 51 s before its hint (the hub client retries each
file five times with a backoff).

The check itself (``probe.backends.hub``) is tested against real loopback sockets: a port that
refuses, one that listens, a proxy in front. The whole command needs the [probe] extra (torch,
transformers) and skips without it; ``make test-probe`` installs it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from contam_guard.probe.backends.hub import offline_reason
from tests.helpers import write_jsonl

CLEAR = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "HTTPS_PROXY", "https_proxy", "ALL_PROXY")


@pytest.fixture(autouse=True)
def no_hub_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*CLEAR, "all_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released: connecting is refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        yield sock.getsockname()[1]


def test_a_hub_that_refuses_is_offline_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    port = closed_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    started = time.monotonic()
    reason = offline_reason("gpt2")
    assert reason is not None and f"127.0.0.1:{port} cannot be reached" in reason
    assert time.monotonic() - started < 2


def test_a_hub_that_accepts_is_online(monkeypatch: pytest.MonkeyPatch, listening: int) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listening}")
    assert offline_reason("gpt2") is None


@pytest.mark.parametrize("name", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_the_offline_switches_are_honoured(
    monkeypatch: pytest.MonkeyPatch, listening: int, name: str
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listening}")
    monkeypatch.setenv(name, "1")
    assert offline_reason("gpt2") == f"{name} is set"
    monkeypatch.setenv(name, "0")
    assert offline_reason("gpt2") is None


def test_a_folder_is_never_looked_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert offline_reason(str(tmp_path)) is None


def test_the_proxy_is_what_must_answer(monkeypatch: pytest.MonkeyPatch, listening: int) -> None:
    """Behind a proxy the hub's own host may not resolve here; the proxy is what is reached."""
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.invalid")
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{listening}")
    assert offline_reason("gpt2") is None
    port = closed_port()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    assert f"127.0.0.1:{port} cannot be reached" in (offline_reason("gpt2") or "")
    monkeypatch.setenv("NO_PROXY", "hub.invalid")  # bypassed: the host itself, which does not resolve
    assert "hub.invalid:443 cannot be reached" in (offline_reason("gpt2") or "")


def test_probe_by_name_offline_fails_fast_with_the_hint(tmp_path: Path) -> None:
    """Before: 51 s of retries, then the hint. After: the hint within seconds (exit 2)."""
    pytest.importorskip("torch", reason="the [probe] extra (torch) is not installed")
    pytest.importorskip("transformers", reason="the [probe] extra (transformers) is not installed")
    write_jsonl(tmp_path / "bench.jsonl", [{"id": "a", "text": "Paris is the capital of France"}])
    env = {k: v for k, v in os.environ.items() if k not in CLEAR and k != "CONTAM_GUARD_KEY"}
    env |= {"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "HF_HOME": str(tmp_path / "hf")}
    command = ["probe", "bench.jsonl", "--backend", "transformers", "--model", "gpt2"]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "contam_guard", *command],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    seconds = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    assert "cannot be reached" in done.stderr and "hf download gpt2" in done.stderr
    assert "Traceback" not in done.stderr
    assert seconds < 30, f"{seconds:.0f} s"  # the import of torch is most of it
