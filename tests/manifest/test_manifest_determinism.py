"""The same golden files give the same manifest bytes: in any folder, in any fresh process.

The two-folder comparison runs the real CLI in subprocesses (a fresh interpreter each, with
different hash seeds), so nothing cached in one process can make two runs agree; the other
checks run it in process (``contam_guard.cli.main``) to stay fast.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contam_guard.cli import main

ROWS = [
    {
        "uid": "w-1",
        "prompt": "The lighthouse keeper on Corrigan Rock polishes nine brass lenses every evening "
        "and three more on stormy nights. How many lenses does he polish over four stormy nights?",
    },
    {
        "uid": "w-2",
        "prompt": "A weaver in Tallowmere dyes forty skeins of wool indigo and half as many "
        "skeins saffron. How many skeins does she dye in total?",
    },
    {
        "uid": "w-3",
        "prompt": "Marguerite bakes six trays of cardamom buns with eighteen buns per tray "
        "and gives away twenty-five. How many buns remain?",
    },
]
MANIFEST = ".contam-guard/manifest.json"


def cg(cwd: Path, *args: str, seed: str = "0") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    env["PYTHONHASHSEED"] = seed
    proc = subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return proc


def run(cwd: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    """The CLI in this process, from ``cwd``; it must succeed."""
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    with pytest.raises(SystemExit) as info:
        main(list(args))
    assert info.value.code in (0, None), args


def write_golden(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def assert_portable(text: str, *roots: Path) -> None:
    """No absolute path (of any tmp folder involved) and nothing that looks like a date or time."""
    for root in roots:
        for form in {str(root), str(root.resolve()), root.name}:
            assert form not in text, form
    assert "/tmp" not in text and str(Path.home()) not in text
    assert not re.search(r"20\d\d-\d\d", text)
    assert not re.search(r"\d\d:\d\d:\d\d", text)
    assert not re.search(r'"[^"]*(time|date|created|modified|host|user)[^"]*"\s*:', text, re.I)
    data = json.loads(text)
    for golden in data["sets"].values():
        for file in golden["files"]:
            assert not file["path"].startswith("/") and ":" not in file["path"] and "\\" not in file["path"]


@pytest.fixture(scope="module")
def two_projects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    roots = (tmp_path_factory.mktemp("alpha-project"), tmp_path_factory.mktemp("zz") / "nested" / "beta")
    for number, root in enumerate(roots):
        root.mkdir(parents=True, exist_ok=True)
        write_golden(root / "bench" / "words.jsonl")
        cg(root, "init", seed=str(number))
        cg(
            root,
            "register",
            "wb",
            "bench/words.jsonl",
            "--field",
            "prompt",
            "--id-field",
            "uid",
            seed=str(number + 7),
        )
    return roots


def test_same_golden_in_two_folders_gives_identical_bytes(two_projects: tuple[Path, Path]) -> None:
    first, second = ((root / MANIFEST).read_bytes() for root in two_projects)
    assert first == second
    assert b'"path": "bench/words.jsonl"' in first


def test_manifest_has_no_absolute_path_and_no_timestamp(two_projects: tuple[Path, Path]) -> None:
    for root in two_projects:
        assert_portable((root / MANIFEST).read_text(encoding="utf-8"), *two_projects)


def test_manifest_text_is_canonical(two_projects: tuple[Path, Path]) -> None:
    text = (two_projects[0] / MANIFEST).read_text(encoding="utf-8")
    assert text.endswith("}\n") and "\r" not in text
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2) + "\n"


def test_absolute_path_argument_is_stored_relative(
    two_projects: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    golden = write_golden(root / "bench" / "words.jsonl")
    run(root, monkeypatch, "init")
    run(root / "bench", monkeypatch, "register", "wb", str(golden), "--field", "prompt", "--id-field", "uid")
    assert (root / MANIFEST).read_bytes() == (two_projects[0] / MANIFEST).read_bytes()


def test_golden_outside_the_project_is_stored_by_its_path_from_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where it really is, relative to the root (never absolute; not by its bare name, which
    would make scans leave out the project's own file of that name): two projects with the same
    layout give the same bytes, wherever they are."""
    manifests = []
    for name in ("one", "two"):
        base = tmp_path / f"machine-{name}"
        outside = write_golden(base / "elsewhere" / "shared.jsonl")
        root = base / "project"
        root.mkdir()
        run(root, monkeypatch, "init")
        run(root, monkeypatch, "register", "wb", str(outside), "--field", "prompt", "--id-field", "uid")
        manifests.append((root / MANIFEST).read_text(encoding="utf-8"))
        assert_portable(manifests[-1], tmp_path, base)
        files = json.loads(manifests[-1])["sets"]["wb"]["files"]
        assert files == [{"items": 3, "path": "../elsewhere/shared.jsonl"}]
    assert manifests[0] == manifests[1]


def test_registration_order_does_not_matter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sets registered in either order give the same bytes (sets are keyed and sorted)."""
    outputs = []
    for order in (("a", "b"), ("b", "a")):
        root = tmp_path / "-".join(order)
        write_golden(root / "g.jsonl")
        run(root, monkeypatch, "init")
        for name in order:
            run(root, monkeypatch, "register", name, "g.jsonl", "--field", "prompt")
        outputs.append((root / MANIFEST).read_bytes())
    assert outputs[0] == outputs[1]
