"""The docs site's fixtures: the reference generator (docs/_hooks/reference.py) as a module, and
the site built once by the real ``mkdocs build --strict``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import REPO


def load_reference() -> ModuleType:
    """docs/_hooks/reference.py, the hook mkdocs runs (it is not a package module)."""
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "docs" / "_hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def reference() -> ModuleType:
    return load_reference()


def build_site(target: Path) -> Path:
    """``mkdocs build --strict`` of this checkout into ``target``, as ``make docs`` runs it."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)],
        cwd=REPO,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return target


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(tmp_path_factory.mktemp("site"))
