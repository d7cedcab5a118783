"""The Spark sessions of the Spark tests: ``local[2]``, and ``local-cluster[2,1,1024]`` as on a cluster.

``local[2]`` runs the tasks inside the driver's JVM; ``local-cluster[2,1,1024]`` starts a
standalone master and two workers in the driver's JVM, and each worker starts its own executor
JVM (one core, 1 GiB), with its own Python workers: the manifest is broadcast over the network,
task results and errors cross process boundaries, and files are read by other processes, as on a
real cluster. The ``spark`` fixture is parametrised by master, so each test that takes it runs on
both; a test that must stay on one master says so with ``on_masters``. pytest groups the tests by
the session-scoped parameter, so each master's session starts once (one SparkContext per process:
the first is stopped before the second starts). While iterating, ``-k "not local-cluster and not
spark_submit"`` leaves out everything that starts executor processes.

Two shuffle partitions, no UI, scratch space in a tmp folder, errors-only logs. A failed task is
not retried on either master (``spark.task.maxFailures`` 1, local mode's default; a cluster's is
4): the malformed-input tests fail tasks on purpose, the error is the same on every try, and
contam-guard finds it in the job's error whatever Spark says around it. Skips the Spark tests
with a reason when PySpark or Java is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from contam_guard.cli import main
from contam_guard.core.config import MAX_PAIRS_PER_ITEM, Config, Rules
from contam_guard.core.scanner import Scanner
from contam_guard.core.spec.hashing import HashKey
from contam_guard.core.verdicts import Report
from contam_guard.engines.local import scan_sources
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GSM8K = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gsm8k"
LOCAL = "local[2]"
CLUSTER = "local-cluster[2,1,1024]"
"""Two workers of one core and 1 GiB each: an executor takes 1 GiB (the default), so it fits."""
MASTERS = (LOCAL, CLUSTER)
FAST_START_JVMS = {
    "spark.driver.defaultJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "spark.executor.defaultJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}
"""The JVMs compile with C1 alone (no C2) and collect garbage in one thread: these tests' JVMs
live seconds, too short for C2's optimised code or a parallel collector to pay back their threads'
work, which took over half of the Spark tests' CPU time on the 2-core machine (tests/spark: about
274 s of CPU with the defaults, 145 s with these). ``defaultJavaOptions`` come before
``extraJavaOptions``, so contam-guard's own driver options (its log settings) stay."""


def on_masters(*masters: str) -> pytest.MarkDecorator:
    """Run a test that takes ``spark`` on these masters only (default: every one of ``MASTERS``)."""
    return pytest.mark.parametrize("spark", masters, indirect=True)


def needs_spark() -> None:
    """Skip (with the reason) when PySpark or Java is missing."""
    pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")
    if shutil.which("java") is None:
        pytest.skip("Java is not on the PATH: Spark needs it")


def scratch_spark_home(folder: Path) -> Path:
    """A SPARK_HOME in ``folder`` that is PySpark's package (its jars, bin/ and python/), with a
    ``work`` folder of its own.

    A standalone worker (``local-cluster``) keeps each executor's files and logs in
    ``$SPARK_HOME/work``; PySpark's SPARK_HOME is the installed package, so without this every
    run would leave them inside the virtual environment.
    """
    import pyspark  # noqa: PLC0415 (only once PySpark is known to be there)

    package = Path(pyspark.__file__).parent
    folder.mkdir(parents=True, exist_ok=True)
    for entry in package.iterdir():
        if entry.name not in ("work", "__pycache__"):
            (folder / entry.name).symlink_to(entry)
    (folder / "work").mkdir()
    return folder


@pytest.fixture(scope="session")
def spark_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    needs_spark()
    return scratch_spark_home(tmp_path_factory.mktemp("spark-home"))


@pytest.fixture(scope="session", params=MASTERS)
def spark(
    request: pytest.FixtureRequest, spark_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SparkSession]:
    """A session on ``request.param`` (a master), started once per master."""
    needs_spark()
    from contam_guard.engines.spark import session  # noqa: PLC0415 (only once PySpark is known to be there)

    # Read when PySpark starts its JVM (once per process): the JVM's workers start executors here.
    os.environ["SPARK_HOME"] = str(spark_home)
    master = str(request.param)
    scratch = tmp_path_factory.mktemp("spark")
    spark = session(
        master,
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.ui.enabled": "false",
            "spark.task.maxFailures": "1",
            "spark.local.dir": str(scratch / "local"),
            "spark.sql.warehouse.dir": str(scratch / "warehouse"),
            **FAST_START_JVMS,
        },
    )
    assert spark.sparkContext.master == master  # not a session left over from the other master
    yield spark
    spark.stop()


def cli(*args: str | Path) -> int:
    """Run ``contam-guard ARGS`` in this process; the exit code."""
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
    code = info.value.code
    return code if isinstance(code, int) else 0


@pytest.fixture(name="cli")
def cli_fixture() -> Callable[..., int]:
    return cli


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the bundled golden set registered (question and answer views)."""
    root = tmp_path_factory.mktemp("project")
    manifest = root / ".contam-guard" / "manifest.json"
    assert cli("init", root) == 0
    golden = root / "arith-mini.jsonl"
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", golden)
    args: list[str | Path] = ["--field", "question", "--field", "answer", "--id-field", "id"]
    args += ["--manifest", manifest]
    assert cli("register", "arith-mini", golden, *args) == 0
    return root


@pytest.fixture(scope="session")
def examples() -> Path:
    return EXAMPLES


@pytest.fixture(scope="session")
def gsm8k() -> Path:
    if not (GSM8K / "train.jsonl").is_file():
        pytest.skip(f"GSM8K not found at {GSM8K}")
    return GSM8K


def local_reference(
    manifest: Manifest,
    sources: list[Source],
    read: ReadOptions,
    *,
    key: HashKey | None = None,
    rules: Rules | None = None,
) -> Report:
    """What the Spark library's reports must equal: the local engine (one process) on
    ``sources``, with the same manifest, key and rules (no allowlist)."""
    scanner = Scanner(
        manifest, Config(rules=rules or Rules()), key, root=Path.cwd(), max_pairs=MAX_PAIRS_PER_ITEM
    )
    return scanner.finish(scan_sources(scanner, sources, read))  # type: ignore[no-any-return]
