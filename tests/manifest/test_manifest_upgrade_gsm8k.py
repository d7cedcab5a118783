"""``contam-guard upgrade`` of a GSM8K manifest of format 1: no golden file needed, and the scan
results do not change (the items CSV of a scan of GSM8K train is byte-identical before and after).

The manifest of format 1 is written by ``format1.save`` (the writer of format 1, kept for tests)
from GSM8K test registered as a user does; the golden file is then deleted, so the upgrade cannot
read it. Reads ../shared/data/gsm8k (never copied into the project); skips with a reason elsewhere.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from contam_guard.cli import main
from contam_guard.manifest import format1, store
from contam_guard.manifest.model import Manifest, Spec
from tests.helpers import GSM8K

pytestmark = [
    pytest.mark.gsm8k,
    pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}"),
]


def run(*args: str) -> tuple[int, str]:
    """The CLI in this process; returns the exit code and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as info:
        main(list(args))
    code = info.value.code
    return (code if isinstance(code, int) else 0), out.getvalue() + err.getvalue()


def scan_items(csv: Path) -> tuple[bytes, str]:
    code, printed = run("scan", str(GSM8K / "train.jsonl"), "--field", "question", "--items-csv", str(csv))
    assert code == 1, printed  # GPT-3's rule flags three GSM8K test items (tests/test_gsm8k.py)
    return csv.read_bytes(), printed


V1_SPEC = Spec(words="words-v1", alnum="alnum-v1")


@pytest.mark.parametrize("old_spec", [False, True], ids=["current-spec", "spec-v1"])
def test_upgrade_of_the_gsm8k_manifest_keeps_every_scan_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old_spec: bool
) -> None:
    """With the current spec the upgrade is the conversion alone. A manifest of format 1 made by
    contam-guard before spec 2 (as old projects have) is converted too, and the conversion kept,
    though re-hashing it under the current spec needs the golden file (exit 2, saying so)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    golden = tmp_path / "gsm8k-test.jsonl"
    shutil.copyfile(GSM8K / "test.jsonl", golden)
    assert run("init")[0] == 0
    if old_spec:
        store.save(tmp_path / ".contam-guard" / "manifest.json", Manifest(spec=V1_SPEC))
    assert run("register", "gsm8k", golden.name, "--field", "question")[0] == 0
    manifest_path = tmp_path / ".contam-guard" / "manifest.json"
    registered = store.load(manifest_path)
    native, _ = scan_items(tmp_path / "format2-registered.csv")

    # The same manifest as format 1 wrote it: one JSON file, no binary files, no golden file.
    format1.save(manifest_path, registered)
    shutil.rmtree(tmp_path / ".contam-guard" / "sets")
    golden.unlink()
    assert json.loads(manifest_path.read_text())["schema_version"] == format1.SCHEMA
    old, printed = scan_items(tmp_path / "format1.csv")
    assert "format 1" in printed and "contam-guard upgrade" in printed  # the notice
    assert old == native

    code, printed = run("upgrade")
    assert "converted to format 2" in printed
    if old_spec:
        assert code == 2, printed
        assert "cannot upgrade without the golden files" in printed and golden.name in printed
        assert "The conversion to format 2 is done and kept" in printed
    else:
        assert code == 0, printed
    index = json.loads(manifest_path.read_text())
    assert index["schema_version"] == 2
    bins = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / ".contam-guard").rglob("*.bin"))
    assert bins and all(b.startswith(".contam-guard/sets/gsm8k/") for b in bins), bins
    upgraded = store.load(manifest_path)
    assert upgraded.sets["gsm8k"].digest == registered.sets["gsm8k"].digest
    assert upgraded.sets["gsm8k"].version == registered.sets["gsm8k"].version

    new, printed = scan_items(tmp_path / "format2-upgraded.csv")
    assert "format 1" not in printed
    assert ("words-v1" in printed) == old_spec  # the notice of the older spec stays until re-hashed
    assert new == old  # byte-identical items CSV
    assert new.count(b"\n") == 1320  # a header and GSM8K test's 1,319 items
    code, printed = run("verify")
    assert code == 0, printed
