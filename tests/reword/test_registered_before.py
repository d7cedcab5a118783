"""A set registered before the rewording rules: a scan says they cannot fire on it, and
registering the same files again adds the derived views without a new version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contam_guard.io.manifest import store
from tests.helpers import Runner

ITEM = (
    "A lighthouse keeper on Brackwater Point polishes 14 brass lamps every evening and trims "
    "6 wicks before the fog rolls in. How many lamps and wicks does she tend in a week?"
)
REWORDED = (
    "Every evening before the fog arrives, the keeper of the Brackwater Point lighthouse trims "
    "6 wicks and shines 14 lamps made of brass. In a week, how many wicks and lamps does she tend?"
)


def test_old_set_notice_then_register_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Runner
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    Path("golden.jsonl").write_text(json.dumps({"question": ITEM}) + "\n", encoding="utf-8")
    Path("train.jsonl").write_text(json.dumps({"text": REWORDED}) + "\n", encoding="utf-8")
    assert cli("init").code == 0
    assert cli("register", "lamps", "golden.jsonl", "--field", "question").code == 0
    path = Path(".contam-guard/manifest.json")
    manifest = store.load(path)
    golden = manifest.sets["lamps"]
    assert sorted(golden.views) == ["question", "question~numbers-v1", "question~words-v2"]
    fresh = cli("scan", "train.jsonl")
    assert fresh.code == 0 and "WARN reworded" in fresh.out and "registered before" not in fresh.err

    # The manifest as a contam-guard without these rules wrote it.
    old = golden.model_copy(update={"views": {"question": golden.views["question"]}})
    store.save(path, manifest.model_copy(update={"sets": {"lamps": old}}))
    before = cli("scan", "train.jsonl")
    assert before.code == 0 and "WARN reworded" not in before.out
    assert "lamps:question was registered before the numbers and reworded rules" in before.err

    again = cli("register", "lamps", "golden.jsonl", "--field", "question")
    assert again.code == 0 and "unchanged (version 1" in again.out
    assert store.load(path).sets["lamps"].views.keys() == golden.views.keys()
    assert "WARN reworded" in cli("scan", "train.jsonl").out


def test_a_set_registered_without_these_rules_gets_no_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Runner
) -> None:
    """`register --rules` without numbers and reworded leaves their views out by choice: a scan
    does not tell the user to register again (it would change nothing)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    Path("golden.jsonl").write_text(json.dumps({"question": ITEM}) + "\n", encoding="utf-8")
    Path("train.jsonl").write_text(json.dumps({"text": REWORDED}) + "\n", encoding="utf-8")
    assert cli("init").code == 0
    rules = ("--rules", "gpt3,palm,llama2")
    assert cli("register", "lamps", "golden.jsonl", "--field", "question", *rules).code == 0
    assert sorted(store.load(Path(".contam-guard/manifest.json")).sets["lamps"].views) == ["question"]
    scan = cli("scan", "train.jsonl")
    assert scan.code == 0 and "WARN reworded" not in scan.out
    assert "registered before" not in scan.err
