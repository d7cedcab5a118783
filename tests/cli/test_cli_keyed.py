"""Keyed hashing (``init --keyed`` and ``$CONTAM_GUARD_KEY``) through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli.conftest import LeakText, Project
from tests.helpers import Runner, manifest_view

KEY = "k3y-" + "0123456789abcdef" * 2 + "wxyz"  # 40 characters
OTHER_KEY = "another-secret-of-forty-characters-00000"
GOLDEN = "golden/bench.jsonl"


def test_init_keyed_without_the_key_exits_2_with_a_hint(cli: Runner, tmp_path: Path) -> None:
    result = cli("init", "--keyed")
    assert result.code == 2
    assert "CONTAM_GUARD_KEY" in result.err and "hint" in result.err and "secrets" in result.err
    assert not (tmp_path / ".contam-guard/manifest.json").exists()


@pytest.mark.parametrize("secret", ["short", "x" * 31])
def test_init_keyed_with_a_short_key_exits_2(
    cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str
) -> None:
    monkeypatch.setenv("CONTAM_GUARD_KEY", secret)
    result = cli("init", "--keyed")
    assert result.code == 2
    assert "too short" in result.err and f"{len(secret)} characters" in result.err
    assert not (tmp_path / ".contam-guard/manifest.json").exists()


def test_init_keyed_honours_key_env(cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET", KEY)
    result = cli("init", "--keyed", "--key-env", "MY_SECRET")
    assert result.code == 0, result.output
    assert json.loads((tmp_path / ".contam-guard/manifest.json").read_text())["key_check"]


@pytest.fixture
def keyed(project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The project, re-initialised keyed, with ``bench`` registered under KEY."""
    project.manifest.unlink()
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    assert project.cli("init", "--keyed").code == 0
    result = project.register()
    assert result.code == 0, result.output
    assert project.cli("verify").code == 0
    return project


@pytest.fixture
def leaky(keyed: Project, leak_text: LeakText) -> Path:
    tokens = keyed.items[1]["question"].split()
    return keyed.training("train.jsonl", [leak_text(tokens, 0, len(tokens))])


def hashes(manifest: Path, array: str) -> set[int]:
    view = manifest_view(manifest, "bench", "question")
    return {int(h) for h in (view.gram_hashes if array == "grams" else view.window_hashes)}


def test_keyed_hashes_share_nothing_with_unkeyed_ones(
    keyed: Project, cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyed_manifest = keyed.manifest_json()
    keyed_view = manifest_view(keyed.manifest, "bench", "question")
    keyed_hashes_of = {"grams": hashes(keyed.manifest, "grams"), "windows": hashes(keyed.manifest, "windows")}
    monkeypatch.delenv("CONTAM_GUARD_KEY")
    plain_root = tmp_path / "plain"
    assert cli("init", plain_root).code == 0
    plain_path = plain_root / ".contam-guard/manifest.json"
    assert (
        cli(
            "register", "bench", GOLDEN, "--field", "question", "--id-field", "id", "--manifest", plain_path
        ).code
        == 0
    )
    plain = json.loads(plain_path.read_text())
    assert plain["key_check"] is None and keyed_manifest["key_check"]
    for array in ("grams", "windows"):
        keyed_hashes, plain_hashes = keyed_hashes_of[array], hashes(plain_path, array)
        assert len(keyed_hashes) > 50 and len(plain_hashes) == len(keyed_hashes)
        assert not keyed_hashes & plain_hashes
    plain_view = manifest_view(plain_path, "bench", "question")
    assert np.array_equal(keyed_view.word_counts, plain_view.word_counts)


def test_a_different_key_gives_different_hashes(
    keyed: Project, cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTAM_GUARD_KEY", OTHER_KEY)
    other = tmp_path / "other"
    assert cli("init", other, "--keyed").code == 0
    other_path = other / ".contam-guard/manifest.json"
    assert (
        cli(
            "register", "bench", GOLDEN, "--field", "question", "--id-field", "id", "--manifest", other_path
        ).code
        == 0
    )
    theirs = json.loads(other_path.read_text())
    assert theirs["key_check"] != keyed.manifest_json()["key_check"]
    other_hashes = hashes(other_path, "grams")
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    assert not other_hashes & hashes(keyed.manifest, "grams")


def test_scan_with_the_right_key_finds_the_leak(keyed: Project, leaky: Path) -> None:
    result = keyed.cli("scan", leaky)
    assert result.code == 1, result.output
    assert "lx-02" in result.out


@pytest.mark.parametrize(
    ("secret", "phrase"),
    [(None, "keyed"), ("", "keyed"), (OTHER_KEY, "does not match"), ("tiny", "too short")],
    ids=["unset", "empty", "wrong", "short"],
)
def test_scan_without_the_right_key_exits_2(
    keyed: Project, leaky: Path, monkeypatch: pytest.MonkeyPatch, secret: str | None, phrase: str
) -> None:
    if secret is None:
        monkeypatch.delenv("CONTAM_GUARD_KEY")
    else:
        monkeypatch.setenv("CONTAM_GUARD_KEY", secret)
    result = keyed.cli("scan", leaky, "--review", "r.md")
    assert result.code == 2, result.output
    assert phrase in result.err
    assert "CONTAM_GUARD_KEY" in result.err
    assert not Path("r.md").exists()


def test_register_into_a_keyed_manifest_needs_the_key(
    keyed: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = keyed.manifest.read_bytes()
    monkeypatch.delenv("CONTAM_GUARD_KEY")
    keyed.items[0]["question"] += " Two lanterns cracked."
    keyed.golden.write_text("".join(json.dumps(i) + "\n" for i in keyed.items))
    result = keyed.register()
    assert result.code == 2
    assert "keyed" in result.err
    monkeypatch.setenv("CONTAM_GUARD_KEY", OTHER_KEY)
    assert keyed.register().code == 2
    assert keyed.manifest.read_bytes() == before


def test_verify_checks_the_key_of_a_keyed_manifest(keyed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Else the verify hook passes while every scan fails: no key or another key is
    exit 2, naming the variable."""
    ok = keyed.cli("verify")
    assert ok.code == 0, ok.output
    assert "keyed, $CONTAM_GUARD_KEY matches" in ok.out
    monkeypatch.setenv("CONTAM_GUARD_KEY", OTHER_KEY)
    wrong = keyed.cli("verify")
    assert wrong.code == 2 and "CONTAM_GUARD_KEY does not match" in wrong.err
    monkeypatch.delenv("CONTAM_GUARD_KEY")
    missing = keyed.cli("verify")
    assert missing.code == 2 and "CONTAM_GUARD_KEY is not set" in missing.err


def test_the_key_never_lands_in_the_guard_folder(keyed: Project, tmp_path: Path) -> None:
    files = [path for path in (tmp_path / ".contam-guard").rglob("*") if path.is_file()]
    assert any(path.suffix == ".bin" for path in files)  # the sets' files are looked at too
    for path in files:
        data = path.read_bytes()
        assert KEY.encode() not in data and KEY[4:20].encode() not in data, path


def test_the_key_can_be_changed_as_the_hint_says(
    keyed: Project, leaky: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTAM_GUARD_KEY", OTHER_KEY)
    refused = keyed.cli("scan", leaky)
    assert refused.code == 2 and "init --keyed" in refused.err and "re-register" in refused.err
    keyed.manifest.rename(keyed.manifest.with_name("manifest.json.old"))
    assert keyed.cli("init", "--keyed").code == 0
    assert keyed.register().code == 0
    assert keyed.cli("scan", leaky).code == 1


def test_init_keyed_on_an_unkeyed_manifest_is_refused(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not "left unchanged" with exit 0: the user would believe the manifest is keyed."""
    before = project.manifest.read_bytes()
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    result = project.cli("init", "--keyed")
    assert result.code == 2
    assert "unkeyed" in result.err and "init --keyed" in result.err
    assert project.manifest.read_bytes() == before


def test_plain_init_on_a_keyed_manifest_leaves_it(keyed: Project) -> None:
    before = keyed.manifest.read_bytes()
    result = keyed.cli("init")
    assert result.code == 0
    assert "(keyed)" in result.out
    assert keyed.manifest.read_bytes() == before
