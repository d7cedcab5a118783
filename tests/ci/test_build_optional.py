"""Installing needs no C compiler: with ``CC=false`` the wheel still builds (the extension is
optional in pyproject.toml), holds no compiled module, and the package from it runs on the numpy
kernels, says so once, and finds the bundled example's leaks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# The checkout's editable install maps contam_guard's modules to the checkout, whose compiled
# module would then load: the child drops that finder and imports the unpacked wheel instead.
PRELUDE = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in f.__module__.lower()]; "
    "sys.path.insert(0, sys.argv.pop(1)); "
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("setuptools", minversion="77")  # the dev extra: builds without isolation
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source)
    shutil.copytree(ROOT / "csrc", source / "csrc")
    skip = shutil.ignore_patterns("*.so", "__pycache__")
    shutil.copytree(ROOT / "contam_guard", source / "contam_guard", ignore=skip)
    out = tmp_path_factory.mktemp("wheel")
    env = {**os.environ, "CC": "false"}  # every compile fails, as without a compiler
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-v",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            ".",
        ],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert 'building extension "contam_guard._native" failed' in done.stdout + done.stderr  # it was tried
    (built,) = out.glob("contam_guard-*.whl")
    return built


def test_the_wheel_builds_without_a_compiler(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
    assert {
        "contam_guard/core/spec/pure_kernels.py",
        "contam_guard/core/spec/native.py",
        "contam_guard/cli/__init__.py",
    } <= set(names)
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    matplotlib = [line for line in text.splitlines() if line.startswith("Requires-Dist: matplotlib")]
    assert 'Requires-Dist: matplotlib>=3.7; extra == "plot"' in matplotlib  # plotting is the [plot] extra
    assert all("extra ==" in line for line in matplotlib)  # and nothing else requires it


def test_the_package_from_it_runs_on_the_numpy_kernels(wheel: Path, tmp_path: Path) -> None:
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", tmp_path)
    shutil.copy(EXAMPLES / "data" / "train.jsonl", tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("CONTAM_GUARD_PURE", "CONTAM_GUARD_KEY")}

    def run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-P", "-c", PRELUDE + code, str(unpacked), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )

    where = run("from contam_guard.core.spec import native; print(native.__file__, native.module().__name__)")
    assert where.stdout.split() == [
        str(unpacked / "contam_guard" / "core" / "spec" / "native.py"),
        "contam_guard.core.spec.pure_kernels",
    ]
    cli = "from contam_guard.cli import run; run()"
    assert run(cli, "init").returncode == 0
    assert run(cli, "register", "arith-mini", "arith-mini.jsonl", "--field", "question").returncode == 0
    done = run(cli, "scan", "train.jsonl")
    assert done.returncode == 1, done.stderr  # the planted leaks
    assert done.stderr.count("compiled kernels are not installed") == 1, done.stderr
