"""``--engine ray`` on a local Ray (one session for the module): errors are the local engine's.

A malformed line in a later window of a file cut into windows is an ``InputError`` naming the
file and its line, the first in scan order when several pieces fail; ``--skip-unreadable`` goes
on as one process does; a manifest changed under the scan, options only the local engine has,
and ``--ray-address`` without ``--engine ray`` are refused before any work.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from contam_guard.core.scanner import Scanner
from contam_guard.errors import InputError, ManifestError
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from tests.helpers import REPO, Runner

pytest.importorskip("ray", reason="Ray is not installed (pip install 'contam-guard[ray]')")

import ray

from contam_guard.engines import local
from contam_guard.engines.ray import scan_sources

pytestmark = pytest.mark.slow  # Ray starts in some 10 s here
WINDOW = 16 << 10


@pytest.fixture(scope="module", autouse=True)
def ray_session() -> Iterator[None]:
    # ray.init annotates logging_level as int, but takes a level name too (its default is "info").
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")  # type: ignore[arg-type]
    yield
    ray.shutdown()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Runner) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    shutil.copy(REPO / "examples" / "golden" / "arith-mini.jsonl", "golden.jsonl")
    assert cli("init").code == 0
    assert cli("register", "arith-mini", "golden.jsonl", "--field", "question").code == 0
    Path("data").mkdir()
    return tmp_path


def write(name: str, rows: int, bad: tuple[int, ...] = ()) -> Source:
    """``rows`` JSONL lines, those at the 0-based numbers in ``bad`` malformed."""
    lines = [
        "{not json\n"
        if k in bad
        else json.dumps({"text": f"line {k} of some filler text to fill the windows"}) + "\n"
        for k in range(rows)
    ]
    path = Path("data") / name
    path.write_text("".join(lines), encoding="utf-8")
    return Source(path, f"data/{name}")


def test_errors_name_the_first_bad_line_in_scan_order(project: Path) -> None:
    scanner = Scanner.open(".contam-guard")
    big = write("b.jsonl", 3000, bad=(2100, 2900))  # about 190 KB: windows of 16 KB
    with pytest.raises(InputError) as one:
        scan_sources(scanner, [big], ReadOptions(), min_window_bytes=WINDOW)
    assert str(one.value).startswith("data/b.jsonl:2101: ")
    with pytest.raises(InputError) as local_error:
        local.scan_sources(scanner, [big], ReadOptions())
    assert str(one.value) == str(local_error.value)

    first = write("a.jsonl", 50, bad=(40,))
    with pytest.raises(InputError) as two:
        scan_sources(scanner, [first, big], ReadOptions(), min_window_bytes=WINDOW)
    assert str(two.value).startswith("data/a.jsonl:41: ")

    skipped = scan_sources(
        scanner, [first, big], ReadOptions(), skip_unreadable=True, min_window_bytes=WINDOW
    )
    alone = local.scan_sources(scanner, [first, big], ReadOptions(), skip_unreadable=True)
    # One process stops reading a file at its first bad line; windows after it are still read
    # (as --jobs reads them): the first notice is the same.
    assert skipped.state.census.skipped[0] == alone.state.census.skipped[0]


def test_the_command_line(project: Path, cli: Runner) -> None:
    write("a.jsonl", 20, bad=(7,))
    bad = cli("scan", "data", "--engine", "ray")
    assert bad.code == 2 and "data/a.jsonl:8: " in bad.err and "Traceback" not in bad.output
    assert cli("scan", "data", "--engine", "ray", "--skip-unreadable").code == 0

    refused = cli("scan", "data", "--engine", "ray", "--jobs", "2")
    assert refused.code == 2 and "--jobs is the local engine's parallelism" in refused.err
    assert cli("scan", "data", "--ray-address", "auto").code == 2
    with socket.socket() as unused:  # a port nothing listens on: refused at once, not retried
        unused.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{unused.getsockname()[1]}"
    nobody = cli("scan", "data", "--engine", "ray", "--ray-address", address)
    assert nobody.code == 2 and f"no Ray cluster answers at {address}" in nobody.err


def test_a_manifest_changed_under_the_scan(project: Path, cli: Runner) -> None:
    scanner = Scanner.open(".contam-guard")
    source = write("a.jsonl", 20)
    assert cli("register", "again", "golden.jsonl", "--field", "answer").code == 0
    with pytest.raises(ManifestError, match="the manifest changed after the scan started"):
        scan_sources(scanner, [source], ReadOptions())


# datatrove's Ray executor passes Ray options Ray 2.60 deprecates, in a thread whose errors it
# never collects: as errors (the suite's default) they would leave it waiting forever.
@pytest.mark.filterwarnings("ignore:placement_group:DeprecationWarning")
def test_the_datatrove_step_on_datatrove_s_ray_executor(project: Path, cli: Runner) -> None:
    """The step as a datatrove pipeline on Ray runs it (each rank a Ray actor), merged."""
    pytest.importorskip(
        "datatrove", reason="datatrove is not installed (pip install 'contam-guard[datatrove]')"
    )
    from datatrove.executor.ray import RayPipelineExecutor  # noqa: PLC0415
    from datatrove.pipeline.readers import JsonlReader  # noqa: PLC0415

    from contam_guard.engines.datatrove import ContamGuardFilter  # noqa: PLC0415

    shutil.copy(REPO / "examples" / "data" / "train.jsonl", "data/train.jsonl")
    shutil.copy(REPO / "examples" / "data" / "clean.jsonl", "data/clean.jsonl")
    assert cli("scan", "data", "--field", "text", "--pairs-csv", "pairs.csv").code == 1
    steps = [JsonlReader(str(project / "data")), ContamGuardFilter(project / "states")]
    RayPipelineExecutor(steps, tasks=2, logging_dir=str(project / "logs"), mem_per_cpu_gb=0.5).run()
    assert cli("report-merge", "states", "--pairs-csv", "merged.csv").code == 1
    assert Path("merged.csv").read_text() == Path("pairs.csv").read_text()
