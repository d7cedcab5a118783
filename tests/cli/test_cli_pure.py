"""``CONTAM_GUARD_PURE=1`` (the numpy kernels, no prefilter) gives what the compiled kernels give.

The same commands run twice in fresh processes, once each way, on the bundled example and on
random corpora with planted leaks: manifests, reviews, CSVs, scrubbed files and exit codes must be
byte for byte the same. The numpy run says so once on stderr; the compiled run says nothing.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("contam_guard._native")  # the reference: the compiled kernels

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTICE = "CONTAM_GUARD_PURE=1: using contam-guard's numpy kernels"
OUTPUTS = ("review.json", "review.md", "items.csv", "pairs.csv")


def contam_guard(root: Path, pure: bool, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CONTAM_GUARD_PURE", "CONTAM_GUARD_KEY")}
    if pure:
        env["CONTAM_GUARD_PURE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def run_both(tmp_path: Path, setup: dict[str, str | bytes], commands: list[list[str]]) -> dict[bool, Path]:
    """Each command in a fresh project per mode, holding the files in ``setup``; the exit codes
    must agree, and only the numpy run shows the notice, once per command."""
    roots: dict[bool, Path] = {}
    for pure in (False, True):
        root = tmp_path / ("pure" if pure else "compiled")
        root.mkdir()
        for name, content in setup.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                (root / name).write_bytes(content)
            else:
                (root / name).write_text(content, encoding="utf-8")
        roots[pure] = root
    for command in [["init"], *commands]:
        done = {pure: contam_guard(roots[pure], pure, *command) for pure in (False, True)}
        assert done[False].returncode == done[True].returncode, (command, done[True].stderr)
        assert done[False].returncode in (0, 1), (command, done[False].stderr)
        assert done[True].stderr.count(NOTICE) == (command != ["init"])
        assert "numpy kernels" not in done[False].stderr
    return roots


def assert_same_files(roots: dict[bool, Path], names: list[str]) -> None:
    for name in names:
        compiled, pure = roots[False] / name, roots[True] / name
        assert compiled.exists(), name
        assert pure.read_bytes() == compiled.read_bytes(), name


def scan_args(*paths: str, extra: tuple[str, ...] = ()) -> list[str]:
    return [
        "scan",
        *paths,
        "--review-json",
        "review.json",
        "--review",
        "review.md",
        "--items-csv",
        "items.csv",
        "--pairs-csv",
        "pairs.csv",
        *extra,
    ]


@pytest.mark.slow
def test_the_bundled_example_is_the_same(tmp_path: Path) -> None:
    setup: dict[str, str | bytes] = {
        "golden/arith-mini.jsonl": (EXAMPLES / "golden" / "arith-mini.jsonl").read_bytes(),
        **{f"data/{p.name}": p.read_bytes() for p in (EXAMPLES / "data").glob("*.jsonl")},
    }
    roots = run_both(
        tmp_path,
        setup,
        [
            ["register", "arith-mini", "golden/arith-mini.jsonl", "--field", "question", "--field", "answer"],
            scan_args("data/train.jsonl", "data/clean.jsonl"),
            ["scrub", "data/train.jsonl", "-o", "clean.jsonl", "--log", "removed.jsonl"],
        ],
    )
    assert_same_files(roots, [".contam-guard/manifest.json", *OUTPUTS, "clean.jsonl", "removed.jsonl"])
    review = json.loads((roots[True] / "review.json").read_text())
    assert review["findings"]  # the example's leaks are found: the comparison is not of empty reviews


def corpus(seed: int) -> dict[str, str | bytes]:
    """Golden items of random words; training records of other random words, some holding a run
    of a golden item (long or short, whole or cut), some with punctuation, case and Unicode."""
    rng = random.Random(seed)
    vocabulary = [rng.choice(["", "É", "ß", "İ", "Σ"]) + f"w{rng.randrange(10**5)}" for _ in range(400)]
    items = [" ".join(rng.choices(vocabulary, k=rng.randint(20, 70))) for _ in range(30)]
    records = []
    for number in range(300):
        words = rng.choices(vocabulary, k=rng.randint(0, 80))
        if number % 4 == 0:
            item = rng.choice(items).split()
            start = rng.randrange(len(item))
            run = item[start : start + rng.choice([6, 9, 13, 25, 80])]
            at = rng.randrange(len(words) + 1)
            words[at:at] = [w.upper() if rng.random() < 0.2 else w + rng.choice(["", ",", "."]) for w in run]
        records.append(json.dumps({"id": number, "text": " ".join(words)}))
    golden = "".join(json.dumps({"id": f"g{i}", "question": text}) + "\n" for i, text in enumerate(items))
    train = "\n".join(records) + "\n"
    return {"golden.jsonl": golden, "train.jsonl": train, "more.txt": "\n".join(items[:3])}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_corpora_are_the_same(tmp_path: Path, seed: int) -> None:
    extra = ("--jobs", "2") if seed == 3 else ()  # the parallel planner counts lines with the kernels
    roots = run_both(
        tmp_path,
        corpus(seed),
        [
            ["register", "g", "golden.jsonl", "--field", "question"],
            scan_args("train.jsonl", "more.txt", extra=("--exit-zero", *extra)),
        ],
    )
    assert_same_files(roots, [".contam-guard/manifest.json", *OUTPUTS])
    assert json.loads((roots[True] / "review.json").read_text())["findings"]


def test_the_notice_names_a_missing_extension(tmp_path: Path) -> None:
    """Without the compiled module (its import made to fail, as where it was never built), the
    numpy kernels load and say why, once, and the scan finds the example's leaks."""
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", tmp_path)
    shutil.copy(EXAMPLES / "data" / "train.jsonl", tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("CONTAM_GUARD_PURE", "CONTAM_GUARD_KEY")}
    code = "import sys; sys.modules['contam_guard._native'] = None; from contam_guard.cli import run; run()"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )

    assert run("init").returncode == 0
    assert run("register", "arith-mini", "arith-mini.jsonl", "--field", "question").returncode == 0
    done = run("scan", "train.jsonl")
    assert done.returncode == 1, done.stderr  # the planted leaks
    assert done.stderr.count("compiled kernels are not installed") == 1, done.stderr
