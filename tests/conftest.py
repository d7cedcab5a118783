"""Fixtures shared by every test folder."""

from __future__ import annotations

import compileall
import os
from pathlib import Path

import pytest
from hypothesis import settings

import contam_guard
from contam_guard.cli import main
from tests.helpers import Result, Runner

# CI runs the same examples every time (``.ci/run`` exports CI=1; GitHub Actions sets CI too): a
# red build is the commit's, never a new random draw's. Failures print the blob that replays
# them; each one found is then kept as an explicit ``@example``. Locally, Hypothesis draws new
# examples on every run and keeps failures in its database, to keep finding new ones.
# The tests of the parallel path (--jobs, its interrupts, its merge) scan files of a few MB, which
# the command line would scan in one process ("--jobs" pays only from about 3 s of work): the
# workers whenever a test asks for them, in this process and the ones it starts.
# tests/cli/test_cli_jobs_policy.py unsets it to test the rule itself.
os.environ.setdefault("CONTAM_GUARD_JOBS_MIN_SECONDS", "0")
# A Spark scan that the command line starts on a local master saves Spark's classes for the next
# one (engines/spark/class_archive.py): 160 MB in the user's cache and a slower first run. The
# tests leave the user's cache alone; tests/spark/test_spark_class_archive.py gives it a folder.
os.environ.setdefault("CONTAM_GUARD_SPARK_CLASS_ARCHIVE", "off")

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_configure(config: pytest.Config) -> None:
    """Compile contam_guard's bytecode once, before any test runs.

    Hundreds of tests run the CLI as a real process (``python -m contam_guard``), and each such
    process imports some hundred of the package's modules. Where PYTHONDONTWRITEBYTECODE is set
    (as on the project's machines and CI) no process writes the ``__pycache__`` files, so every
    one of them compiled those modules from source again: minutes over the suite. Python still
    reads ``.pyc`` files with that variable set, and checks each against its source's mtime and
    size, so a module edited since is compiled afresh, never run stale. Only the ``-n`` workers'
    controller compiles (a worker has ``workerinput``); the package's own folder is the one
    imported, which is the sanitizer build's copy under ``make sanitize``.
    """
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(contam_guard.__file__).parent, quiet=2)


TESTS = Path(__file__).parent
SPARK_TESTS = TESTS / "spark"
E2E: dict[str, str] = {
    "spark": "starts Spark's JVMs (local masters and a standalone cluster)",
    "ci/test_ci_precommit.py": "the real pre-commit framework; one test installs the hook from the registry",
    "ci/test_ci_lfs.py": "the real git-lfs",
    "ci/test_build_optional.py": "builds a wheel without a C compiler",
    "test_packaging.py": "builds and installs the wheel",
    "reporting/test_html_review.py": "renders the HTML review in the real (headless) Chromium",
    "search/test_serve_chromium.py": "loads the served page in the real (headless) Chromium",
    "docs/test_site_chromium.py": "renders every page of the built docs site in the real (headless) Chromium",
}
"""The end-to-end tests (folders and modules under tests/, and why): marked ``e2e``. ``make test``
leaves them out (``-m "not e2e"``: the fast loop); ``make test-e2e`` runs them, and ``.ci/run``
runs both. Plain ``pytest`` runs everything."""


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the ``E2E`` tests. Under pytest-xdist (``make test`` runs ``-n auto --dist
    loadgroup``) the Spark tests stay together on one worker: each master's session
    (tests/spark/conftest.py, session-scoped) then starts once, not once per worker, and no two
    JVM clusters compete for the cores."""
    e2e = [TESTS / name for name in E2E]
    xdist = config.pluginmanager.hasplugin("xdist")
    for item in items:
        if any(item.path == path or item.path.is_relative_to(path) for path in e2e):
            item.add_marker(pytest.mark.e2e)
        if xdist and item.path.is_relative_to(SPARK_TESTS):
            item.add_marker(pytest.mark.xdist_group("spark"))


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Runner:
    """Run ``contam-guard ARGS`` in this process; returns exit code, stdout and stderr."""

    def run(*args: str | Path) -> Result:
        capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            main([os.fspath(a) for a in args])
        captured = capsys.readouterr()
        code = info.value.code
        return Result(
            code if isinstance(code, int) else 0 if code is None else 99, captured.out, captured.err
        )

    return run
