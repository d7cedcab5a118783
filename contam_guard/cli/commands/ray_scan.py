"""``contam-guard scan --engine ray``: the pipeline's scan step done by Ray Data.

Everything but the scan itself is ``contam-guard scan``'s (``contam_guard.engines.pipeline``): the same
files (folders walked the same way, leaving out the guard's folder and the golden files), the
same verdicts, allowlist, markers, ``--redact-pii``, outputs and exit code. The inputs are cut as
``--jobs`` cuts them and scanned in Ray tasks (``contam_guard.engines.ray``), on the cluster at
``--ray-address`` or, by default, on a Ray instance started on this machine for the scan.
"""

from __future__ import annotations

import logging
import socket

from contam_guard.core.accumulator import Accumulator
from contam_guard.engines.pipeline import Engine, Prepared, ScanRequest
from contam_guard.errors import ConfigError
from contam_guard.io.sources import Source, check_readable

CONNECT_SECONDS = 5.0
"""How long ``--ray-address HOST:PORT`` may take to accept a connection."""


def _needs_ray() -> None:
    try:
        import ray.data  # noqa: F401, PLC0415 (optional: only this engine needs it)
    except ImportError:
        raise ConfigError(
            "--engine ray needs Ray Data, which is not installed",
            hint="pip install 'contam-guard[ray]'",
        ) from None


def check(request: ScanRequest) -> None:
    """Refuse, before any work, what only the local engine does."""
    if request.changes is not None:
        raise ConfigError("--staged and --diff scan a git change with the local engine, not --engine ray")
    if request.jobs > 1:
        raise ConfigError(
            "--jobs is the local engine's parallelism",
            hint="with --engine ray, the Ray cluster's CPUs are used (--ray-address, or this machine's)",
        )
    _needs_ray()


def ray_engine(address: str | None = None) -> Engine:
    """The scan step on Ray: the cluster at ``address`` (``auto``, ``ray://host:10001``), or a
    Ray instance on this machine started for the scan and stopped after it. A process already
    connected to Ray (a library user's, a test's) is used as it is and left running."""

    def scan_on_ray(prepared: Prepared, request: ScanRequest, found: list[Source]) -> Accumulator:
        check(request)
        check_readable(found)
        if address is not None:
            _answers(address)
        import ray  # noqa: PLC0415 (needs ray)

        from contam_guard.engines.ray import quiet_ray, scan_sources  # noqa: PLC0415

        started = not ray.is_initialized()
        if started:
            try:
                ray.init(
                    address=address,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(
                    f"Ray could not start or connect: {exc}", hint="check --ray-address"
                ) from None
        quiet_ray()
        try:
            return scan_sources(
                prepared.scanner, found, request.read, skip_unreadable=request.skip_unreadable
            )
        finally:
            if started:
                ray.shutdown()

    return scan_on_ray


def _answers(address: str) -> None:
    """Refuse, in seconds, a ``HOST:PORT`` where nothing listens: Ray itself retries for minutes
    before it gives up (``auto`` and ``ray://`` addresses fail fast on their own)."""
    host, colon, port = address.rpartition(":")
    if "://" in address or not colon or not port.isdigit():
        return
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS):
            pass
    except OSError as exc:
        raise ConfigError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc})",
            hint="start one (`ray start --head`) or check --ray-address",
        ) from None
