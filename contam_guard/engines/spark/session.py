"""Starting a Spark session for contam-guard's own use (the CLI, the tests).

A library user brings their own session; these defaults only make a session that
contam-guard starts quiet and correct on one machine.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from pyspark import SparkContext
from pyspark.sql import SparkSession

from contam_guard.engines.spark import class_archive

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
JAVA_OPTIONS = "spark.driver.defaultJavaOptions"
LOCAL_DEFAULTS = {
    # The driver's JVM on a local master (which runs the tasks too, or only schedules them on
    # local-cluster's executors, whose options are left alone) lives for one scan: C2's
    # optimised code and a parallel collector never pay back their threads' work (on 2 cores,
    # C1 alone and one GC thread halve the JVM's CPU time at start-up). defaultJavaOptions come
    # before extraJavaOptions, so a user's extraJavaOptions (and contam-guard's own log
    # settings) still apply; --spark-conf spark.driver.defaultJavaOptions=... replaces these.
    JAVA_OPTIONS: "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    # Nobody looks at the web UI of a scan that contam-guard starts and stops; Jetty's start is
    # not free. --spark-conf spark.ui.enabled=true brings it back.
    "spark.ui.enabled": "false",
}
"""Settings of a session contam-guard starts on a ``local...`` master (``session``)."""


def is_local(master: str | None) -> bool:
    return master is not None and master.startswith("local")


def local_archive(
    master: str | None, conf: Mapping[str, str] | None = None
) -> class_archive.ClassArchive | None:
    """The class-data archive (``class_archive``) for a session that ``session`` would start on
    ``master`` with ``conf``: only on a ``local...`` master, with contam-guard's own JVM options
    (``conf`` does not set them), and before this process has started a JVM (a running one keeps
    its options)."""
    if not is_local(master) or JAVA_OPTIONS in (conf or {}) or SparkContext._gateway is not None:
        return None
    return class_archive.plan(LOCAL_DEFAULTS[JAVA_OPTIONS])


def session(
    master: str | None = None,
    *,
    app_name: str = "contam-guard",
    conf: Mapping[str, str] | None = None,
    quiet: bool = True,
    archive: class_archive.ClassArchive | None = None,
) -> SparkSession:
    """A session on ``master`` (None: whatever ``spark-submit`` or the environment says).

    On a ``local[...]`` master, and on ``local-cluster[...]`` (executors in processes of their
    own, on this machine), the Python workers run this interpreter, which has contam-guard
    installed; on a cluster, the executors' Python must have it (docs/how-to/engines.md).
    A ``local-cluster`` keeps its executors' files in ``$SPARK_HOME/work`` (PySpark's package
    folder unless ``SPARK_HOME`` says otherwise).
    ``quiet``: errors only in the logs, no progress bars (contam-guard reports for itself).
    A ``local...`` master gets ``LOCAL_DEFAULTS`` first (``conf`` overrides them).
    ``archive`` (``local_archive``): the driver's JVM reads it, or writes it as it exits.
    """
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    if is_local(master):
        # PySpark starts its workers with $PYSPARK_PYTHON (default: "python3" on the PATH).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if quiet:
        builder = builder.config("spark.ui.showConsoleProgress", "false").config(
            "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
        )
    settings = {**(LOCAL_DEFAULTS if is_local(master) else {}), **(conf or {})}
    if archive is not None:
        own = settings.get(JAVA_OPTIONS, "")
        settings[JAVA_OPTIONS] = f"{own} {archive.java_options()}".lstrip()
    for name, value in settings.items():
        builder = builder.config(name, value)
    spark = builder.getOrCreate()
    if quiet:
        spark.sparkContext.setLogLevel("ERROR")
    return spark
