"""One local Spark session for every Spark test (starting one takes many seconds).

``local[2]``, two shuffle partitions, no UI, scratch space in a tmp folder, errors-only logs.
Skips the Spark tests with a reason when PySpark or Java is missing.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from contam_guard.cli import main

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GSM8K = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gsm8k"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    pytest.importorskip("pyspark", reason="PySpark is not installed (pip install 'contam-guard[spark]')")
    if shutil.which("java") is None:
        pytest.skip("Java is not on the PATH: Spark needs it")
    from contam_guard.spark import session  # noqa: PLC0415 (only once PySpark is known to be there)

    scratch = tmp_path_factory.mktemp("spark")
    spark = session(
        "local[2]",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.ui.enabled": "false",
            "spark.local.dir": str(scratch / "local"),
            "spark.sql.warehouse.dir": str(scratch / "warehouse"),
        },
    )
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
