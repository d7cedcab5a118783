"""``--master`` checked before Spark starts (no JVM here): local[N] with N >= 1, and a standalone
master that accepts a connection."""

from __future__ import annotations

import socket

import pytest

from contam_guard.cli.commands.spark_scan import check_master
from contam_guard.errors import ConfigError


@pytest.mark.parametrize(
    "master",
    [None, "local", "local[1]", "local[4]", "local[*]", "local[2,3]", "local-cluster[2,1,1024]", "yarn"],
)
def test_masters_spark_runs_are_accepted(master: str | None) -> None:
    check_master(master)


@pytest.mark.parametrize(
    "master",
    ["local[0]", "local[-1]", "local[]", "local[x]", "local[1,0]", "local-cluster[0,1,1024]", "spark://h"],
)
def test_masters_spark_cannot_run_are_refused(master: str) -> None:
    with pytest.raises(ConfigError, match="--master"):
        check_master(master)


def test_a_standalone_master_must_answer() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listening:
        port = listening.getsockname()[1]
        check_master(f"spark://127.0.0.1:{port}")
    with pytest.raises(ConfigError, match="no Spark master answers"):
        check_master(f"spark://127.0.0.1:{port}")  # closed now
