"""What a clean scan does not import: every pre-commit hook pays for each module at start-up, so
the parts a clean scan never runs (scrub, the plots, the probe's torch, columnar readers' pyarrow,
the code view's research lexer, numpy's masked arrays) are imported where they are used."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NOT_FOR_A_CLEAN_SCAN = ("contam_guard.core.scrub", "matplotlib", "torch", "pyarrow", "pygments", "numpy.ma")
PROBE = (
    "import json, sys\n"
    "from contam_guard.cli import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit as done:\n"
    "    code = done.code\n"
    "print(json.dumps({'code': code, 'loaded': sorted(m for m in sys.modules if m.split('.')[0] in"
    " ('contam_guard', 'matplotlib', 'torch', 'pyarrow', 'pygments', 'numpy'))}))\n"
)


def cli(root: Path, *args: str) -> dict[str, object]:
    argv = [sys.executable, "-c", PROBE, *args]
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=True, timeout=120)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_clean_scan_leaves_out_what_it_does_not_run(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", tmp_path)
    shutil.copy(EXAMPLES / "data" / "clean.jsonl", tmp_path)
    assert cli(tmp_path, "init")["code"] in (0, None)
    assert cli(tmp_path, "register", "arith", "arith-mini.jsonl")["code"] in (0, None)
    clean = cli(tmp_path, "scan", "clean.jsonl")
    assert clean["code"] in (0, None)
    loaded = clean["loaded"]
    assert isinstance(loaded, list) and "contam_guard.engines.pipeline" in loaded  # it did scan
    packages = tuple(f"{name}." for name in NOT_FOR_A_CLEAN_SCAN)
    assert [m for m in loaded if m in NOT_FOR_A_CLEAN_SCAN or m.startswith(packages)] == []


COUNT_COLLECTIONS = (
    "import gc, json, sys\n"
    "seen = [0, 0, 0]\n"
    "def count(phase, info):\n"
    "    if phase == 'stop':\n"
    "        seen[info['generation']] += 1\n"
    "gc.callbacks.append(count)\n"
    "from contam_guard.cli import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit:\n"
    "    pass\n"
    "print(json.dumps(seen))\n"
)


def test_a_one_record_scan_spends_no_time_collecting_its_imports(tmp_path: Path) -> None:
    """The modules a scan imports live to its end: with Python's default thresholds the garbage
    collector walked them in 127 collections, one of them full (52 ms of a 0.32 s start-up)."""
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", tmp_path)
    shutil.copy(EXAMPLES / "data" / "clean.jsonl", tmp_path)
    assert cli(tmp_path, "init")["code"] in (0, None)
    assert cli(tmp_path, "register", "arith", "arith-mini.jsonl")["code"] in (0, None)
    argv = [sys.executable, "-c", COUNT_COLLECTIONS, "scan", "clean.jsonl"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=True, timeout=120)
    young, middle, full = json.loads(done.stdout.strip().splitlines()[-1])
    assert full == 0
    assert young + middle <= 2
