"""Keyed manifests and their hash spec through the real CLI: new ones are keyed with SipHash-2-4
(``cg-poly64-v1+siphash24``) and scanned through the prefilter; one keyed before SipHash (AES,
spec ``cg-poly64-v1`` with a key_check) still scans, on the exact path, with a notice, until
``contam-guard upgrade`` re-keys it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contam_guard.engine.prefilter import FilteredBlock, LineFormat, Prefilter
from contam_guard.manifest import format1, store
from contam_guard.manifest.build import GoldenSource, build_set
from contam_guard.manifest.model import Manifest, Spec
from contam_guard.manifest.sealing import SealKey, new_salt
from contam_guard.text.hashing import HASH_SPEC, SIPHASH_SPEC, HashKey
from tests.cli.conftest import GOLDEN_REL, Project
from tests.helpers import load_manifest, manifest_view

KEY = "k3y-" + "0123456789abcdef" * 2 + "wxyz"
OTHER_KEY = "another-secret-of-forty-characters-00000"


@pytest.fixture
def filter_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per block the prefilter reads (its size)."""
    calls: list[int] = []
    original = Prefilter.filter

    def counting(self: Prefilter, block: bytes, lines: LineFormat) -> FilteredBlock:
        calls.append(len(block))
        return original(self, block, lines)

    monkeypatch.setattr(Prefilter, "filter", counting)
    return calls


def aes_manifest(project: Project) -> Manifest:
    """The project's set keyed as contam-guard keyed manifests before SipHash: spec
    ``cg-poly64-v1``, a key_check, every hash through AES-128 (``HashKey(..., "aes128")``)."""
    key = HashKey(KEY, "aes128")
    built = build_set([GoldenSource(project.golden, GOLDEN_REL)], ["question"], "id", key, None)
    salt = new_salt()
    return Manifest(
        spec=Spec(), key_check=key.check, sets={"bench": built}, salt=salt, seal=SealKey.derive(KEY, salt)
    )


@pytest.fixture
def aes_keyed(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An AES-keyed manifest of format 2: what ``upgrade`` leaves of a keyed manifest of format 1
    whose golden files are missing (converted, not re-keyed)."""
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    store.save(project.manifest, aes_manifest(project))
    return project


@pytest.fixture
def aes_keyed_format1(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An AES-keyed manifest as contam-guard wrote them before SipHash: format 1."""
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    format1.save(project.manifest, aes_manifest(project))
    return project


@pytest.fixture
def leaky(project: Project, leak_text: Any) -> Path:
    tokens = project.items[1]["question"].split()
    return project.training("train.jsonl", [leak_text(tokens, 0, len(tokens)), "nothing to see here"])


def findings(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if line.startswith(("FAIL", "WARN")))


def view_arrays(manifest: Path, set_name: str = "bench") -> dict[str, list[int]]:
    view = manifest_view(manifest, set_name, "question")
    return {"grams": view.gram_hashes.tolist(), "windows": sorted(view.window_hashes.tolist())}


def test_init_keyed_makes_a_siphash_manifest_and_unkeyed_is_unchanged(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert project.manifest_json()["spec"]["hash"] == HASH_SPEC
    project.manifest.unlink()
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    assert project.cli("init", "--keyed").code == 0
    manifest = store.load(project.manifest)
    assert manifest.spec.hash == SIPHASH_SPEC and manifest.key_check == HashKey(KEY).check
    assert manifest.spec.is_current(keyed=True)


def test_a_siphash_keyed_scan_uses_the_prefilter(
    project: Project, leaky: Path, monkeypatch: pytest.MonkeyPatch, filter_calls: list[int]
) -> None:
    plain = project.register()
    assert plain.code == 0, plain.output
    unkeyed = project.cli("scan", leaky)
    project.manifest.unlink()
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    assert project.cli("init", "--keyed").code == 0 and project.register().code == 0
    filter_calls.clear()
    keyed = project.cli("scan", leaky)
    assert keyed.code == 1, keyed.output
    assert filter_calls  # through the prefilter
    assert findings(keyed.out) == findings(unkeyed.out) and findings(keyed.out)
    assert "upgrade" not in keyed.err


def test_an_aes_keyed_manifest_still_scans_on_the_exact_path_with_a_notice(
    aes_keyed: Project, leaky: Path, filter_calls: list[int]
) -> None:
    before = aes_keyed.manifest.read_bytes()
    result = aes_keyed.cli("scan", leaky)
    assert result.code == 1, result.output
    assert "lx-02" in result.out
    assert "AES" in result.err and "contam-guard upgrade" in result.err
    assert filter_calls == []  # AES stays in Python: no prefilter
    assert aes_keyed.manifest.read_bytes() == before


@pytest.mark.parametrize(
    ("secret", "phrase"), [(None, "not set"), (OTHER_KEY, "does not match")], ids=["unset", "wrong"]
)
def test_an_aes_keyed_manifest_with_a_wrong_key_exits_2(
    aes_keyed: Project, leaky: Path, monkeypatch: pytest.MonkeyPatch, secret: str | None, phrase: str
) -> None:
    before = aes_keyed.manifest.read_bytes()
    for command in (("scan", leaky), ("upgrade",)):
        if secret is None:
            monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
        else:
            monkeypatch.setenv("CONTAM_GUARD_KEY", secret)
        result = aes_keyed.cli(*command)
        assert result.code == 2, result.output
        assert phrase in result.err and "CONTAM_GUARD_KEY" in result.err
        assert aes_keyed.manifest.read_bytes() == before


def test_register_into_an_aes_keyed_manifest_keys_with_aes(aes_keyed: Project, leak_text: Any) -> None:
    """A manifest has one keyed function: a set added to an AES-keyed manifest is keyed with AES
    (its spec says so) and found by the next scan."""
    aes_keyed.items = [{**item, "id": item["id"] + "-b"} for item in aes_keyed.items]
    aes_keyed.golden.write_text("".join(json.dumps(item) + "\n" for item in aes_keyed.items))
    assert aes_keyed.register(name="second").code == 0
    manifest = load_manifest(aes_keyed.manifest)
    assert manifest.spec.hash == HASH_SPEC and set(manifest.sets) == {"bench", "second"}
    assert view_arrays(aes_keyed.manifest) == view_arrays(
        aes_keyed.manifest, "second"
    )  # the same questions, the same AES key: the same hashes
    tokens = aes_keyed.items[3]["question"].split()
    result = aes_keyed.cli("scan", aes_keyed.training("t.jsonl", [leak_text(tokens, 0, len(tokens))]))
    assert result.code == 1 and "second" in result.out and "lx-04-b" in result.out


@pytest.mark.parametrize("fixture", ["aes_keyed", "aes_keyed_format1"])
def test_upgrade_rekeys_an_aes_manifest_with_siphash(
    fixture: str,
    request: pytest.FixtureRequest,
    leaky: Path,
    monkeypatch: pytest.MonkeyPatch,
    filter_calls: list[int],
) -> None:
    aes_keyed: Project = request.getfixturevalue(fixture)
    old = aes_keyed.manifest_json()
    old_arrays = view_arrays(aes_keyed.manifest)
    before = aes_keyed.cli("scan", leaky)
    result = aes_keyed.cli("upgrade")
    assert result.code == 0, result.output
    assert "version 1 -> 2" in result.out and "SipHash-2-4" in result.out
    new = aes_keyed.manifest_json()
    assert new["spec"]["hash"] == SIPHASH_SPEC and new["key_check"] == old["key_check"]
    bench = new["sets"]["bench"]
    assert bench["version"] == 2 and [h["digest"] for h in bench["history"]] == [
        old["sets"]["bench"]["digest"],
        bench["digest"],
    ]
    # Every hash re-keyed; counts unchanged.
    new_arrays = view_arrays(aes_keyed.manifest)
    for name in ("grams", "windows"):
        assert len(new_arrays[name]) == len(old_arrays[name]) > 0
        assert not set(new_arrays[name]) & set(old_arrays[name])
    # The same hashes a fresh `init --keyed` + `register` gives.
    fresh = aes_keyed.root / "fresh"
    fresh_manifest = fresh / ".contam-guard/manifest.json"
    assert aes_keyed.cli("init", fresh, "--keyed").code == 0
    options = ["--field", "question", "--id-field", "id", "--manifest", fresh_manifest]
    assert aes_keyed.cli("register", "bench", aes_keyed.golden, *options).code == 0
    assert view_arrays(fresh_manifest) == new_arrays
    # Scans find the same, now through the prefilter and without the notice.
    filter_calls.clear()
    after = aes_keyed.cli("scan", leaky)
    assert after.code == 1 and findings(after.out) == findings(before.out)
    assert filter_calls and "upgrade" not in after.err
    again = aes_keyed.cli("upgrade")
    assert again.code == 0 and "nothing to do" in again.out
    monkeypatch.setenv("CONTAM_GUARD_KEY", OTHER_KEY)
    wrong = aes_keyed.cli("scan", leaky)
    assert wrong.code == 2 and "does not match" in wrong.err


def test_keyed_hashes_without_a_key_check_are_refused(project: Project, leaky: Path) -> None:
    """A SipHash spec with no key_check (hand-edited) would silently miss everything: exit 2."""
    store.save(project.manifest, Manifest(spec=Spec(hash=SIPHASH_SPEC)))
    result = project.cli("scan", leaky)
    assert result.code == 2, result.output
    assert "no key_check" in result.err


def test_the_numpy_kernels_scan_a_siphash_manifest_alike(
    project: Project, leaky: Path, monkeypatch: pytest.MonkeyPatch, cg_proc: Any
) -> None:
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    project.manifest.unlink()
    assert project.cli("init", "--keyed").code == 0 and project.register().code == 0
    env = {"CONTAM_GUARD_KEY": KEY}
    compiled = cg_proc("scan", leaky, cwd=project.root, env=env)
    pure = cg_proc("scan", leaky, cwd=project.root, env={**env, "CONTAM_GUARD_PURE": "1"})
    assert compiled.code == pure.code == 1, pure.output
    assert findings(pure.out) == findings(compiled.out) and "lx-02" in pure.out
    assert "numpy kernels" in pure.err
