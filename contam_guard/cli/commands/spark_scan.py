"""``contam-guard scan --engine spark``: the pipeline's scan step done by Spark.

Everything but the scan itself is ``contam-guard scan``'s (``contam_guard.engines.pipeline``): the same
files (local folders walked the same way, leaving out the guard's folder and the golden files;
URLs such as ``hdfs://`` and ``s3a://`` passed to Spark as they are), the same verdicts,
allowlist, markers, ``--redact-pii``, outputs and exit code. Files are read by Spark (JSONL,
text and Parquet) and scanned in its tasks (``contam_guard.engines.spark``).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING

from contam_guard.core.accumulator import Accumulator
from contam_guard.engines.pipeline import Engine, Prepared, ScanRequest
from contam_guard.errors import ConfigError
from contam_guard.io.sources import Source
from contam_guard.report import console

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from contam_guard.engines.spark.class_archive import ClassArchive


def _needs_pyspark() -> None:
    try:
        import pyspark  # noqa: F401, PLC0415 (optional: only this engine needs it)
    except ImportError:
        raise ConfigError(
            "--engine spark needs PySpark, which is not installed",
            hint="pip install 'contam-guard[spark]' (Java 17 or newer must be on the PATH)",
        ) from None


def check(request: ScanRequest) -> None:
    """Refuse, before any work, what only the local engine does."""
    if request.changes is not None:
        raise ConfigError("--staged and --diff scan a git change with the local engine, not --engine spark")
    if request.jobs > 1:
        raise ConfigError(
            "--jobs is the local engine's parallelism",
            hint="with --engine spark, give Spark the cores: --master 'local[N]' or a cluster",
        )
    if request.skip_unreadable:
        raise ConfigError("--skip-unreadable is not supported by --engine spark")
    if request.read.group_by is not None:
        # A group's records may fall in different Spark splits: only one reader sees them all.
        raise ConfigError("--group-by is read by the local engine, not --engine spark")
    _needs_pyspark()


_LOCAL = re.compile(r"local(?:\[(?:\*|[1-9]\d{0,5})(?:,\s*[1-9]\d{0,5})?\])?")
"""``local``, ``local[N]``, ``local[*]``, ``local[N,F]`` (F: task failures allowed): what Spark
takes, with N and F at least 1 (Spark fails on 0 or less after starting the JVM)."""
_LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*[1-9]\d*\s*,\s*[1-9]\d*\s*,\s*[1-9]\d*\s*\]")
MASTER_CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a standalone master's port to accept a connection (Spark itself retries
for more than a minute before it gives up, then fails with an internal error)."""


def check_master(master: str | None) -> None:
    """Refuse, before Spark starts, a master it cannot run on: a malformed ``local[...]``, or a
    standalone ``spark://`` master none of whose addresses accepts a connection."""
    if master is None:
        return
    if master.startswith("local-cluster"):
        if not _LOCAL_CLUSTER.fullmatch(master):
            raise ConfigError(
                f"--master {master}: local-cluster takes [executors,cores,memory MiB], each at least 1"
            )
        return
    if master.startswith("local"):
        if not _LOCAL.fullmatch(master):
            raise ConfigError(
                f"--master {master}: not a local master Spark can run",
                hint="use local, local[N] with N at least 1, or local[*] (all cores)",
            )
        return
    if master.startswith("spark://"):
        _reach(master)


def _reach(master: str) -> None:
    problems = []
    for address in master[len("spark://") :].split(","):
        host, _, port = address.rpartition(":")
        host = host.strip("[]")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(f"--master {master}: {address!r} is not HOST:PORT")
        try:
            socket.create_connection((host, int(port)), timeout=MASTER_CONNECT_TIMEOUT).close()
        except OSError as exc:
            problems.append(f"{address} ({exc.strerror or type(exc).__name__})")
        else:
            return
    raise ConfigError(
        f"--master {master}: no Spark master answers at {', '.join(problems)}",
        hint="start the master (sbin/start-master.sh) or check its address and port (7077 by default)",
    )


def spark_engine(master: str | None = None, spark_conf: Mapping[str, str] | None = None) -> Engine:
    """The scan step on Spark (``master``; None: as ``spark-submit`` or the environment says).
    A master that cannot work is refused here, before any work (``check_master``)."""
    check_master(master)

    def scan_on_spark(prepared: Prepared, request: ScanRequest, found: list[Source]) -> Accumulator:
        check(request)
        from pyspark.sql import SparkSession  # noqa: PLC0415 (needs pyspark)

        from contam_guard.engines.spark import class_archive  # noqa: PLC0415
        from contam_guard.engines.spark.engine import scan_sources  # noqa: PLC0415
        from contam_guard.engines.spark.inputs import SparkSource, location  # noqa: PLC0415
        from contam_guard.engines.spark.session import local_archive  # noqa: PLC0415

        spark_sources = []
        for source in found:
            text = location(source.path)
            spark_sources.append(
                SparkSource(text, source.display if SparkSource(text, text).is_local else text)
            )
        started = SparkSession.getActiveSession() is None  # else a caller's session: leave it running
        archive = local_archive(master, spark_conf) if started else None
        spark = _start(master, spark_conf, archive)
        if archive is not None and archive.writing is not None:
            console.notice(
                f"--engine spark: the JVM saves Spark's classes to {archive.path} as it exits (once, about "
                f"160 MB; later local scans start in half the time; {class_archive.ARCHIVE_ENV}=off: never)"
            )
        try:
            return scan_sources(spark, spark_sources, request.read, prepared.scanner)
        except (KeyboardInterrupt, SystemExit):
            archive = None  # Ctrl-C: no waiting for the JVM to write the archive
            raise
        finally:
            if started:
                spark.stop()
                if archive is not None:
                    class_archive.save(archive)

    return scan_on_spark


def _start(master: str | None, conf: Mapping[str, str] | None, archive: ClassArchive | None) -> SparkSession:
    """A session, with ``archive`` if the JVM starts with it. A JVM that cannot start with a
    saved archive (damaged on disk: the JVM crashes as it maps it) starts again without it, and
    the archive is removed; when that fails too, the archive was not the cause and stays."""
    from pyspark.errors import PySparkRuntimeError  # noqa: PLC0415 (needs pyspark)

    from contam_guard.engines.spark.session import session  # noqa: PLC0415

    try:
        return session(master, conf=conf, archive=archive)
    except PySparkRuntimeError as exc:  # no Java, or Spark could not start
        failed = exc
    if archive is not None and archive.writing is None:
        try:
            spark = session(master, conf=conf)
        except PySparkRuntimeError:
            pass
        else:
            archive.discard()
            console.notice(
                f"--engine spark: Spark's JVM could not start with the classes saved in {archive.path}; "
                "removed (the next local scan saves them again)"
            )
            return spark
    raise ConfigError(
        f"Spark could not start: {failed}",
        hint="Spark needs Java 17 or newer on the PATH (or JAVA_HOME); check --master",
    ) from None
