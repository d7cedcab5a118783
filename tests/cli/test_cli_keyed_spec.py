"""Keyed manifests and their hash spec through the real CLI: they are keyed with SipHash-2-4
(``cg-poly64-v1+siphash24``) and scanned through the prefilter; a spec that contradicts the
key check (keyed hashes without one, a key check over unkeyed hashes) is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contam_guard.core.match.prefilter import FilteredBlock, LineFormat, Prefilter
from contam_guard.core.spec.hashing import HASH_SPEC, SIPHASH_SPEC, HashKey
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest, Spec
from contam_guard.io.manifest.sealing import SealKey, new_salt
from tests.cli.conftest import Project
from tests.helpers import manifest_view

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


def test_keyed_hashes_without_a_key_check_are_refused(project: Project, leaky: Path) -> None:
    """A SipHash spec with no key_check (hand-edited) would silently miss everything: exit 2."""
    store.save(project.manifest, Manifest(spec=Spec(hash=SIPHASH_SPEC)))
    result = project.cli("scan", leaky)
    assert result.code == 2, result.output
    assert "no key_check" in result.err


def test_a_key_check_over_unkeyed_hashes_is_refused(project: Project, leaky: Path) -> None:
    """A key check with the unkeyed hash spec (hand-edited) would hash scans with a key the
    manifest's hashes never saw: exit 2."""
    salt = new_salt()
    keyed = Manifest(spec=Spec(), key_check=HashKey(KEY).check, salt=salt, seal=SealKey.derive(KEY, salt))
    store.save(project.manifest, keyed)
    result = project.cli("scan", leaky)
    assert result.code == 2, result.output
    assert "hashes are not keyed" in result.err


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
