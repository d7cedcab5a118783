"""``cli.overlap_guard.check_outputs`` on its own: when is an output "the same file" as an input?

One table; each row lays out files in a fresh folder and names the outputs and the protected
files. Same device and inode (through symbolic and hard links), or, for what does not exist yet,
the same resolved path: refused, naming both. Anything else: allowed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from contam_guard.cli.overlap_guard import check_outputs
from contam_guard.errors import ConfigError


@dataclass(frozen=True)
class Row:
    name: str
    setup: Callable[[Path], None]
    outputs: dict[str, str | None]
    protected: dict[str, str]
    refused: tuple[str, ...] | None
    """Phrases of the error, or None: allowed."""


def files(*names: str) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        for name in names:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(name)

    return setup


def then(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        for step in steps:
            step(root)

    return setup


def symlink(link: str, target: str) -> Callable[[Path], None]:
    return lambda root: os.symlink(target, root / link)


def hardlink(link: str, target: str) -> Callable[[Path], None]:
    return lambda root: os.link(root / target, root / link)


INPUT = {"the input train.jsonl": "train.jsonl"}

ROWS = [
    Row(
        "the input itself",
        files("train.jsonl"),
        {"--review": "train.jsonl"},
        INPUT,
        ("--review", "the input train.jsonl", "(the same file)"),
    ),
    Row(
        "the input by another spelling",
        files("train.jsonl", "d/x"),
        {"--review": "d/../train.jsonl"},
        INPUT,
        ("the same file",),
    ),
    Row(
        "a symbolic link to the input",
        then(files("train.jsonl"), symlink("r.md", "train.jsonl")),
        {"--review": "r.md"},
        INPUT,
        ("through a symbolic link",),
    ),
    Row(
        "a hard link to the input",
        then(files("train.jsonl"), hardlink("r.md", "train.jsonl")),
        {"--sarif": "r.md"},
        INPUT,
        ("--sarif", "through a hard link"),
    ),
    Row(
        "the input reached through a linked folder",
        then(files("data/train.jsonl"), symlink("alias", "data")),
        {"--summary": "alias/train.jsonl"},
        {"the input data/train.jsonl": "data/train.jsonl"},
        ("through a symbolic link",),
    ),
    Row(
        "a manifest not written yet, by its resolved path",
        then(files("g/x"), symlink("guard", "g")),
        {"--output": "guard/manifest.json"},
        {"the manifest g/manifest.json": "g/manifest.json"},
        ("the manifest g/manifest.json",),
    ),
    Row(
        "a dangling link to a protected file not written yet",
        symlink("r.json", "allow.yaml"),
        {"--review-json": "r.json"},
        {"the allowlist allow.yaml": "allow.yaml"},
        ("the allowlist",),
    ),
    Row(
        "two outputs naming one file",
        files("train.jsonl"),
        {"--review": "r.md", "--review-html": "./r.md"},
        INPUT,
        ("--review and --review-html would both write",),
    ),
    Row(
        "two outputs, one a link to the other",
        then(files("train.jsonl", "r.md"), symlink("s.md", "r.md")),
        {"--review": "r.md", "--summary": "s.md"},
        INPUT,
        ("would both write",),
    ),
    Row("another file", files("train.jsonl"), {"--review": "review.md"}, INPUT, None),
    Row(
        "a copy of the input (another inode)",
        files("train.jsonl", "copy.jsonl"),
        {"--review": "copy.jsonl"},
        INPUT,
        None,
    ),
    Row("no output asked for", files("train.jsonl"), {"--review": None, "--sarif": None}, INPUT, None),
    Row(
        "a link to a file that is not protected",
        then(files("train.jsonl", "old.md"), symlink("r.md", "old.md")),
        {"--review": "r.md"},
        INPUT,
        None,
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_check_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: Row) -> None:
    monkeypatch.chdir(tmp_path)
    row.setup(tmp_path)
    outputs = {option: Path(path) if path is not None else None for option, path in row.outputs.items()}
    protected = {role: Path(path) for role, path in row.protected.items()}
    if row.refused is None:
        check_outputs(outputs, protected)
        return
    with pytest.raises(ConfigError) as info:
        check_outputs(outputs, protected)
    for phrase in row.refused:
        assert phrase in str(info.value), (phrase, str(info.value))
