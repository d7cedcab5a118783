"""Outputs never overwrite inputs, through the real commands.

Every output option of scan, scrub, sweep and dupes, pointed at an input, the golden file, the
manifest, the config or the allowlist (directly or through a link), is exit 2 naming both, and
nothing in the project changes. Before: `scan v.jsonl --review v.jsonl` replaced the input with
its own review (exit 1) and `--review-json .contam-guard/manifest.json` wrecked the manifest.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_jsonl

MANIFEST = ".contam-guard/manifest.json"
CONFIG = ".contam-guard/contam-guard.yaml"
ALLOWLIST = ".contam-guard/allowlist.yaml"
GOLDEN = "golden/bench.jsonl"

SCAN_OPTIONS = [
    "--review",
    "--review-json",
    "--review-html",
    "--items-csv",
    "--pairs-csv",
    "--sarif",
    "--summary",
    "--output",
]
PROTECTED = {
    "train.jsonl": "the input train.jsonl",
    GOLDEN: f"the golden file {GOLDEN} of set 'bench'",
    MANIFEST: f"the manifest {MANIFEST}",
    CONFIG: f"the config {CONFIG}",
    ALLOWLIST: f"the allowlist {ALLOWLIST}",
}


@dataclass(frozen=True)
class Row:
    name: str
    args: Callable[[Path], list[str]]
    says: tuple[str, ...]


def link(root: Path, name: str, target: str) -> str:
    os.symlink(root / target, root / name)
    return name


def hard(root: Path, name: str, target: str) -> str:
    os.link(root / target, root / name)
    return name


def constant(args: list[str]) -> Callable[[Path], list[str]]:
    """A row's arguments that need nothing written (bound now, not when the row runs)."""
    return lambda r: list(args)


ROWS = [
    *(
        Row(
            f"scan {option} over {target}",
            constant(["scan", "train.jsonl", option, target]),
            (option, says),
        )
        for option in SCAN_OPTIONS
        for target, says in PROTECTED.items()
    ),
    Row(
        "scan --review through a symlink to the input",
        lambda r: ["scan", "train.jsonl", "--review", link(r, "r.md", "train.jsonl")],
        ("through a symbolic link",),
    ),
    Row(
        "scan --sarif over a hard link to the golden file",
        lambda r: ["scan", "train.jsonl", "--sarif", hard(r, "g.sarif", GOLDEN)],
        ("the golden file", "through a hard link"),
    ),
    Row(
        "scan of a folder, --review-json over a data file in it",
        lambda r: ["scan", ".", "--review-json", "train.jsonl"],
        ("the input train.jsonl",),
    ),
    Row(
        "scan: two outputs, one file",
        lambda r: ["scan", "train.jsonl", "--review", "r.md", "--summary", "r.md"],
        ("--review and --summary would both write r.md",),
    ),
    Row("scrub -o over the manifest", lambda r: ["scrub", "train.jsonl", "-o", MANIFEST], ("the manifest",)),
    Row(
        "scrub -o over a hard link to the input",
        lambda r: ["scrub", "train.jsonl", "-o", hard(r, "h.jsonl", "train.jsonl")],
        ("the input train.jsonl", "hard link"),
    ),
    Row(
        "scrub --log over the golden file",
        lambda r: ["scrub", "train.jsonl", "-o", "clean.jsonl", "--log", GOLDEN],
        ("--log", "the golden file"),
    ),
    Row(
        "scrub --in-place --log over the config",
        lambda r: ["scrub", "train.jsonl", "--in-place", "--log", CONFIG],
        ("--log", "the config"),
    ),
    Row("sweep --csv over the input", lambda r: ["sweep", "train.jsonl", "--csv", "train.jsonl"], ("--csv",)),
    Row(
        "sweep --plot over the manifest", lambda r: ["sweep", "train.jsonl", "--plot", MANIFEST], ("--plot",)
    ),
    Row(
        "dupes --review over the golden file", lambda r: ["dupes", "bench", "--review", GOLDEN], ("--review",)
    ),
    Row(
        "dupes --items-csv over the manifest",
        lambda r: ["dupes", "bench", "--items-csv", MANIFEST],
        ("the manifest",),
    ),
    Row(
        "dupes --pairs-csv over the config",
        lambda r: ["dupes", "bench", "--pairs-csv", CONFIG],
        ("the config",),
    ),
    Row(
        "dupes --csv over the allowlist", lambda r: ["dupes", "bench", "--csv", ALLOWLIST], ("the allowlist",)
    ),
]


@pytest.fixture
def leaky(registered: Any, leak_text: Any) -> Any:
    tokens = registered.question_words(0)
    registered.training("train.jsonl", [leak_text(tokens, 0, len(tokens))])
    (registered.root / ALLOWLIST).write_text("entries: []\n")
    return registered


def snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_an_output_over_a_protected_file_is_refused(leaky: Any, cli: Any, row: Row) -> None:
    args = row.args(leaky.root)
    before = snapshot(leaky.root)
    result = cli(*args)
    assert result.code == 2, result.output
    assert "would" in result.err and "nothing was done" in result.err
    for phrase in row.says:
        assert phrase in result.err, (phrase, result.err)
    assert snapshot(leaky.root) == before  # nothing written, nothing replaced


@pytest.mark.parametrize("option", SCAN_OPTIONS)
def test_the_same_option_elsewhere_writes(leaky: Any, cli: Any, option: str) -> None:
    """The positive control: the guard refuses only what it must."""
    result = cli("scan", "train.jsonl", option, "out.file")
    assert result.code == 1, result.output
    assert (leaky.root / "out.file").stat().st_size > 0


def test_staged_scan_protects_the_staged_files(leaky: Any, cli: Any, tmp_path: Path) -> None:
    """A --staged scan reads the index, but --review over the staged file's working copy would
    still destroy it."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q"], ["add", "golden", ".contam-guard"], [*identity, "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=tmp_path, env=env, check=True, capture_output=True)
    write_jsonl(tmp_path / "data" / "new.jsonl", [{"text": "clean words only here"}])
    subprocess.run(["git", "add", "data/new.jsonl"], cwd=tmp_path, env=env, check=True)
    before = (tmp_path / "data" / "new.jsonl").read_bytes()
    result = cli("scan", "--staged", "--review", "data/new.jsonl")
    assert result.code == 2, result.output
    assert "the input data/new.jsonl (changed in the staged changes)" in result.err
    assert (tmp_path / "data" / "new.jsonl").read_bytes() == before
    assert cli("scan", "--staged", "--review", "review.md").code == 0  # elsewhere: fine
