"""README's install lines work without a package index entry: the wheel builds (compiling
``csrc/native.c``) and runs ("Installing"). About 8 s on the 2-core machine: one C
compile, in a copy of the sources so the checkout gets no ``build/`` folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_pip_wheel_builds_a_wheel_that_runs(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    for name in ("contam_guard", "csrc"):
        shutil.copytree(PROJECT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(PROJECT / name, source / name)
    dist = tmp_path / "dist"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--disable-pip-version-check",
            str(source),
            "-w",
            str(dist),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("contam_guard-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("contam_guard/_native.") and n.endswith(".so") for n in names)  # compiled
    assert "contam_guard/cli/options.py" in names and "contam_guard/engines/spark/log4j2.properties" in names

    target = tmp_path / "site"
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    env = {**os.environ, "PYTHONPATH": str(target)}  # the wheel's copy first; its dependencies from here
    probe = "import contam_guard, contam_guard._native as n; print(contam_guard.__file__); print(n.__file__)"
    ran = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert all(Path(line).is_relative_to(target) for line in ran.stdout.split())
    version = subprocess.run(
        [sys.executable, "-m", "contam_guard", "--version"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert version.returncode == 0 and version.stdout.startswith("contam-guard "), version.stderr
