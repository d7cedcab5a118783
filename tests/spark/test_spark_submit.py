"""The docs' spark-submit example (docs/how-to/engines.md), run as written on ``local-cluster[2,1,1024]``.

The job script and the commands are taken from the page's "Spark" section, so the two
cannot drift apart; only what names the cluster and its storage is swapped (``--master yarn``,
the ``hdfs://`` paths, the ``git+`` requirement: each must occur in the commands exactly once).
The commands run in bash as a user would run them: ``pip wheel`` builds contam-guard's wheel
(compiling its kernels) from a copy of the checkout, and ``spark-submit`` is the one PySpark
ships in its package. The executors' Python has the dependencies but not contam-guard (checked),
so the job only works if the wheel shipped with ``--archives`` reaches them. The job's findings
and items must be the local engine's on the bundled example. About a minute on 2 cores: one C
compile and a Spark application with two executor processes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path
from typing import Any

from contam_guard.core.families import COLUMNS
from contam_guard.core.verdicts import Report
from contam_guard.io.manifest import store
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from contam_guard.report.tables import items_csv

from .conftest import (
    CLUSTER,
    EXAMPLES,
    FAST_START_JVMS,
    cli,
    local_reference,
    needs_spark,
    scratch_spark_home,
)

ROOT = Path(__file__).resolve().parents[2]
LOG_CONFIG = ROOT / "contam_guard" / "engines" / "spark" / "log4j2.properties"
SWAPS = {
    "--master yarn": f"--master '{CLUSTER}'",
    "hdfs:///corpus/train.jsonl": "train.jsonl",
    "hdfs:///scans/train": "out",
}
"""What names the cluster in the docs' commands -> what names this machine's stand-in for it."""
REQUIREMENT = '"contam-guard @ git+https://github.com/OWNER/contam-guard@v0.1.0"'


def spark_section() -> str:
    text = (ROOT / "docs" / "how-to" / "engines.md").read_text(encoding="utf-8")
    start = text.index("\n## Spark\n")
    return text[start : text.index("\n## ", start + 1)]


def fenced(section: str, language: str) -> list[str]:
    """The fenced code blocks of ``section`` whose opening fence names ``language`` ("": none)."""
    blocks: list[str] = []
    current: list[str] | None = None
    opened = ""
    for line in section.splitlines(keepends=True):
        if line.startswith("```") and current is None:
            current, opened = [], line[3:].strip()
        elif line.startswith("```"):
            if opened == language:
                blocks.append("".join(current or []))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def readme_job() -> tuple[str, list[str]]:
    """The docs' job script and its commands (continuation lines joined), as the page shows them."""
    section = spark_section()
    (script,) = [block for block in fenced(section, "python") if block.startswith("# scan_job.py")]
    (commands,) = [block for block in fenced(section, "") if "spark-submit" in block]
    return script, [c.strip() for c in commands.replace("\\\n", " ").splitlines() if c.strip()]


def swapped(commands: list[str], checkout: Path) -> list[str]:
    text = "\n".join(commands)
    for old, new in {**SWAPS, REQUIREMENT: str(checkout)}.items():
        assert text.count(old) == 1, f"the docs' spark-submit example no longer has {old!r} once"
        text = text.replace(old, new)
    return text.splitlines()


def executors_python(folder: Path) -> Path:
    """A Python with contam-guard's dependencies (this environment's packages) but not
    contam-guard: this environment's editable install is a finder that a ``.pth`` line naming
    the folder does not load."""
    venv.EnvBuilder(with_pip=False).create(folder)
    python = folder / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python


def checkout_copy(folder: Path) -> Path:
    """The sources a wheel is built from, without this checkout's compiled module or caches."""
    skip = shutil.ignore_patterns("__pycache__", "*.so")
    for name in ("contam_guard", "csrc"):
        shutil.copytree(ROOT / name, folder / name, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, folder / name)
    return folder


def local_report(job: Path) -> Report:
    manifest = store.load(job / ".contam-guard" / "manifest.json")
    return local_reference(manifest, [Source(job / "train.jsonl", "train.jsonl")], ReadOptions())


def written(folder: Path, suffix: str) -> list[str]:
    """The part files Spark wrote into ``folder``, in order."""
    assert (folder / "_SUCCESS").is_file()
    return [p.read_text(encoding="utf-8") for p in sorted(folder.glob(f"part-*{suffix}"))]


def finding_rows(report: Report) -> list[dict[str, Any]]:
    """The local engine's findings as the job writes them (``engines.spark.frames.FINDINGS_SCHEMA``)."""
    return [
        {
            "rule": f.rule,
            "action": f.action,
            "status": f.status,
            "set": f.target.set_name,
            "view": f.target.view,
            "item": f.item,
            "item_id": f.item_id,
            "test_index": f.test_index,
            "detail": f.detail,
            "pairs": [
                {
                    "source": p.source,
                    "record": p.record,
                    "line": p.line,
                    "field": p.field,
                    # every rule family's columns, as the pairs table declares them
                    **{c.key: c.shown(p.value(c.name)) for c in COLUMNS},
                }
                for p in f.pairs
            ],
        }
        for f in report.findings
    ]


def test_readme_spark_submit_example_runs_on_local_cluster(tmp_path: Path) -> None:
    needs_spark()
    import pyspark  # noqa: PLC0415 (only once PySpark is known to be there)

    script, commands = readme_job()
    job = tmp_path / "job"
    job.mkdir()
    (job / "scan_job.py").write_text(script, encoding="utf-8")
    shutil.copy(EXAMPLES / "data" / "train.jsonl", job / "train.jsonl")
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", job / "arith-mini.jsonl")
    assert cli("init", job) == 0
    manifest = job / ".contam-guard" / "manifest.json"
    assert (
        cli("register", "arith-mini", job / "arith-mini.jsonl", "--field", "question", "--manifest", manifest)
        == 0
    )

    python = executors_python(tmp_path / "executors-env")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "PYTHONPATH"))}
    imports = "import numpy, pyarrow, orjson, contam_guard"
    probe = subprocess.run([python, "-c", imports], cwd=tmp_path, env=env, capture_output=True, check=False)
    assert b"No module named 'contam_guard'" in probe.stderr  # the dependencies import, contam-guard not
    # The cluster's own settings (spark-defaults.conf), not the command's: which Python runs the
    # driver (where contam-guard is installed) and the executors, scratch space, quiet logs, and
    # the JVMs' start-up settings of the other Spark tests (conftest.FAST_START_JVMS).
    spark_home = scratch_spark_home(tmp_path / "spark-home")
    (spark_home / "conf").mkdir()
    (spark_home / "conf" / "spark-defaults.conf").write_text(
        f"spark.pyspark.python {python}\n"
        f"spark.pyspark.driver.python {sys.executable}\n"
        f"spark.local.dir {tmp_path / 'spark-local'}\n"
        "spark.ui.enabled false\n"
        f"spark.driver.extraJavaOptions -Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}\n"
        + "".join(f"{name} {value}\n" for name, value in FAST_START_JVMS.items())
    )
    package_bin = Path(pyspark.__file__).parent / "bin"
    env |= {
        "SPARK_HOME": str(spark_home),
        # `spark-submit` is PySpark's own; `pip` is this environment's.
        "PATH": os.pathsep.join([str(package_bin), str(Path(sys.executable).parent), env.get("PATH", "")]),
    }
    assert shutil.which("spark-submit", path=env["PATH"]) == str(package_bin / "spark-submit")

    *build, submit = swapped(commands, checkout_copy(tmp_path / "checkout"))
    for command in build:
        done = subprocess.run(
            ["bash", "-c", command], cwd=job, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    ran = subprocess.run(
        ["bash", "-c", submit], cwd=job, env=env, capture_output=True, text=True, timeout=900, check=False
    )

    local = local_report(job)
    assert local.failing
    assert ran.returncode == 1, ran.stdout[-2000:] + ran.stderr[-4000:]  # a rule failed, as locally
    # The job's own exit 1, not a crash (spark-submit passes the driver's stderr to its stdout).
    assert "Traceback" not in ran.stdout + ran.stderr, ran.stdout[-4000:]
    found = [
        json.loads(line) for part in written(job / "out" / "findings", ".json") for line in part.splitlines()
    ]
    assert found == finding_rows(local)
    items = [
        row
        for part in written(job / "out" / "items", ".csv")
        for row in list(csv.reader(io.StringIO(part)))[1:]
    ]
    assert items == list(csv.reader(io.StringIO(items_csv(local))))[1:]
    # The executors ran contam-guard from the archive, unpacked beside them, compiled kernels and all.
    unpacked = list((spark_home / "work").glob("app-*/*/contam_guard_pkg/contam_guard/_native.*.so"))
    assert len(unpacked) == 2, sorted(p.name for p in (spark_home / "work").glob("app-*/*/*"))
