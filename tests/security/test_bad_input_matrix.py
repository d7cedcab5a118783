"""Every kind of bad input: a clear message naming the file (and line), a documented exit code,
no traceback, and nothing lost. One table; each row builds its input in a fresh project."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

GOLDEN = [
    {
        "id": "g1",
        "question": "A farmer stacks 48 bales of hay into 6 equal piles; "
        "how many bales are in each of the piles",
    },
    {
        "id": "g2",
        "question": "Lena walks 3 miles every morning and 2 miles every evening, "
        "how many miles does she walk in a week",
    },
]
LEAK = GOLDEN[0]["question"]


def cli(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template")
    (root / "golden.jsonl").write_text("".join(json.dumps(g) + "\n" for g in GOLDEN))
    assert cli(root, "init").returncode == 0
    done = cli(root, "register", "g", "golden.jsonl", "--field", "question", "--id-field", "id")
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    """A fresh copy of a registered project for each case."""
    root = tmp_path / "project"
    shutil.copytree(template, root)
    return root


def jsonl(*rows: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], list[str]]
    """Writes the inputs into the project and returns the CLI arguments."""
    code: int
    says: tuple[str, ...] = ()
    """Phrases the output (stdout + stderr) must contain."""
    setup: Callable[[Path], object] = lambda root: None
    """Changes the project before ``build`` runs (where that writes no named input)."""


def write(root: Path, name: str, data: bytes) -> str:
    (root / name).write_bytes(data)
    return name


def parquet(root: Path, name: str, table: pa.Table) -> str:
    pq.write_table(table, root / name)
    return name


def truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def manifest_path(root: Path) -> Path:
    return root / ".contam-guard" / "manifest.json"


def truncate_manifest(root: Path) -> None:
    data = manifest_path(root).read_bytes()
    manifest_path(root).write_bytes(data[: len(data) // 2])


def edit_manifest(root: Path) -> None:
    text = manifest_path(root).read_text()
    manifest_path(root).write_text(text.replace('"version": 1', '"version": 2', 1))


def newer_manifest(root: Path) -> None:
    text = manifest_path(root).read_text()
    newer = re.sub(r'"schema_version": \d+', '"schema_version": 99', text, count=1)
    assert newer != text
    manifest_path(root).write_text(newer)


CASES = [
    Case(
        "malformed JSON line",
        lambda r: ["scan", write(r, "t.jsonl", b'{"text": "ok"}\n{"text": oops}\n')],
        2,
        ("t.jsonl:2", "invalid JSON"),
    ),
    Case(
        "JSON that is not an object, with --field",
        lambda r: ["scan", "--field", "text", write(r, "t.jsonl", b'{"text": "ok"}\n[1, 2]\n')],
        2,
        ("t.jsonl:2",),
    ),
    Case(
        "a JSON array line is read without --field",
        lambda r: ["scan", write(r, "t.jsonl", b'{"text": "ok"}\n' + jsonl(["intro", LEAK]))],
        1,
        ("g1",),
    ),
    Case(
        "missing --field lists the fields",
        lambda r: ["scan", "--field", "text", write(r, "t.jsonl", jsonl({"body": "x", "n": 1}))],
        2,
        ("t.jsonl:1", "body"),
    ),
    Case(
        "field is a number",
        lambda r: ["scan", "--field", "n", write(r, "t.jsonl", jsonl({"n": 5}))],
        2,
        ("t.jsonl:1", "'n'"),
    ),
    Case(
        "field is null",
        lambda r: ["scan", "--field", "n", write(r, "t.jsonl", jsonl({"n": None}))],
        2,
        ("t.jsonl:1", "'n'"),
    ),
    Case(
        "field is a list of numbers",
        lambda r: ["scan", "--field", "n", write(r, "t.jsonl", jsonl({"n": [1, 2]}))],
        2,
        ("t.jsonl:1", "'n'"),
    ),
    Case(
        "field is an object of numbers",
        lambda r: ["scan", "--field", "n", write(r, "t.jsonl", jsonl({"n": {"a": 1}}))],
        2,
        ("t.jsonl:1", "'n'"),
    ),
    Case(
        "field is an object: every string in it is read",
        lambda r: ["scan", "--field", "n", write(r, "t.jsonl", jsonl({"n": {"a": {"b": LEAK}}}))],
        1,
        ("g1", "n.a.b"),
    ),
    Case(
        "non-UTF-8 bytes give the offset",
        lambda r: ["scan", write(r, "t.jsonl", b'{"text": "caf\xe9"}\n')],
        2,
        ("t.jsonl:1", "offset 13"),
    ),
    Case(
        "non-UTF-8 bytes with --errors replace",
        lambda r: ["scan", "--errors", "replace", write(r, "t.jsonl", b'{"text": "caf\xe9"}\n')],
        0,
    ),
    Case(
        "UTF-8 BOM is fine",
        lambda r: ["scan", write(r, "t.jsonl", b"\xef\xbb\xbf" + jsonl({"text": LEAK}))],
        1,
        ("g1",),
    ),
    Case(
        "CRLF line endings are fine",
        lambda r: ["scan", write(r, "t.jsonl", jsonl({"text": LEAK}).replace(b"\n", b"\r\n"))],
        1,
        ("g1",),
    ),
    Case(
        "empty file: nothing scanned, exit 0",
        lambda r: ["scan", write(r, "t.jsonl", b"")],
        0,
        ("Nothing was scanned",),
    ),
    Case(
        "truncated .gz",
        lambda r: [
            "scan",
            write(
                r, "t.jsonl.gz", truncated(gzip.compress(jsonl(*[{"text": f"r{i}"} for i in range(2000)])))
            ),
        ],
        2,
        ("t.jsonl.gz",),
    ),
    Case(
        "truncated .zst",
        lambda r: [
            "scan",
            write(
                r,
                "t.jsonl.zst",
                truncated(
                    zstandard.ZstdCompressor().compress(jsonl(*[{"text": f"r{i}"} for i in range(2000)]))
                ),
            ),
        ],
        2,
        ("t.jsonl.zst",),
    ),
    Case(
        "Parquet without the --field column",
        lambda r: ["scan", "--field", "text", parquet(r, "t.parquet", pa.table({"body": ["x"]}))],
        2,
        ("t.parquet", "body"),
    ),
    Case(
        "Parquet text column of integers",
        lambda r: ["scan", "--field", "n", parquet(r, "t.parquet", pa.table({"n": [1]}))],
        2,
        ("t.parquet",),
    ),
    Case(
        "CSV with embedded newlines and quotes",
        lambda r: [
            "scan",
            write(r, "t.csv", ('id,text\n1,"a ""quoted""\nline"\n2,"' + LEAK + '"\n').encode()),
        ],
        1,
        ("t.csv:4",),
    ),
    Case("a path that does not exist", lambda r: ["scan", "missing.jsonl"], 2, ("missing.jsonl",)),
    Case(
        "a symlink loop",
        lambda r: ["scan", "loop.jsonl"],
        2,
        ("loop.jsonl",),
        setup=lambda r: os.symlink("loop", r / "loop.jsonl"),
    ),
    Case(
        "a dangling symlink (file removed after listing)",
        lambda r: ["scan", "d.jsonl"],
        2,
        ("d.jsonl",),
        setup=lambda r: os.symlink("gone.jsonl", r / "d.jsonl"),
    ),
    Case(
        "a directory passed to register",
        lambda r: ["register", "x", "dir"],
        2,
        ("dir",),
        setup=lambda r: (r / "dir").mkdir(),
    ),
    Case("an empty golden set", lambda r: ["register", "e", write(r, "e.jsonl", b"")], 2, ("empty",)),
    Case(
        "duplicate item ids",
        lambda r: [
            "register",
            "d",
            "--id-field",
            "id",
            "--field",
            "question",
            write(r, "d.jsonl", jsonl({"id": "1", "question": "a b"}, {"id": "1", "question": "c d"})),
        ],
        2,
        ("duplicate", "d.jsonl:2"),
    ),
    Case(
        "golden items shorter than every rule's n",
        lambda r: [
            "register",
            "s",
            "--field",
            "question",
            write(r, "s.jsonl", jsonl({"question": "too short"})),
        ],
        0,
    ),
    Case(
        "config with an unknown key",
        lambda r: ["scan", "--config", write(r, "c.yaml", b"rulez: {}\n"), "golden.jsonl"],
        2,
        ("rulez", "rules"),
    ),
    Case(
        "config with a wrong type",
        lambda r: ["scan", "--config", write(r, "c.yaml", b"rules: {gpt3: {n: thirteen}}\n"), "golden.jsonl"],
        2,
        ("c.yaml",),
    ),
    Case(
        "config with a negative threshold",
        lambda r: [
            "scan",
            "--config",
            write(r, "c.yaml", b"rules: {palm: {threshold: -0.5}}\n"),
            "golden.jsonl",
        ],
        2,
        ("threshold",),
    ),
    Case(
        "truncated manifest",
        lambda r: ["scan", "golden.jsonl"],
        2,
        ("manifest.json",),
        setup=truncate_manifest,
    ),
    Case(
        "hand-edited manifest",
        lambda r: ["scan", "golden.jsonl"],
        2,
        ("digest",),
        setup=edit_manifest,
    ),
    Case(
        "manifest from a newer schema",
        lambda r: ["scan", "golden.jsonl"],
        2,
        ("newer",),
        setup=newer_manifest,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(project: Path, case: Case) -> None:
    case.setup(project)
    args = case.build(project)
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and not p.is_symlink()}
    done = cli(project, *args)
    output = done.stdout + done.stderr
    assert done.returncode == case.code, output
    assert "Traceback" not in output
    for phrase in case.says:
        assert phrase in output, (phrase, output)
    after = {p: p.read_bytes() for p in before if p.exists()}
    changed = [p.name for p in before if p.name != "manifest.json" and after.get(p) != before[p]]
    assert changed == []  # inputs are never modified


def test_a_100_mb_single_line_is_read(project: Path) -> None:
    line = ("filler words " * 7_700_000 + LEAK).encode()
    (project / "big.txt").write_bytes(line + b"\n")
    done = cli(project, "scan", "big.txt", "--only", "gpt3")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "g1" in done.stdout
