"""Scrub with a SipHash-keyed manifest: its counting pass goes through the prefilter (with the key)
and removes exactly what the exact path removes, and what an unkeyed manifest makes it remove."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contam_guard.core.match.prefilter import CLEAN, HITS, FilteredBlock, LineFormat, Prefilter
from contam_guard.core.scrub import count
from contam_guard.core.spec import native

KEY = "k" * 40


def _train(kit: Any) -> None:
    rows = [{"text": kit.leaky(0, 3, 20)}, {"text": kit.filler}, {"text": kit.leaky(1, 10, 16)}]
    rows += [{"id": n, "text": f"{kit.filler} {n}"} for n in range(30)]
    kit.write_jsonl(Path("t.jsonl"), rows)


def _register(cli: Any, kit: Any, root: Path, keyed: bool) -> None:
    args = ["--keyed"] if keyed else []
    assert cli("init", root, *args).code == 0
    kit.write_jsonl(root / "gold.jsonl", kit.golden)
    manifest = root / ".contam-guard/manifest.json"
    options = ["--field", "question", "--id-field", "id", "--manifest", manifest]
    assert cli("register", "gold", root / "gold.jsonl", *options).code == 0


@pytest.mark.skipif(not native.has_prefilter(), reason="the compiled prefilter is not loaded")
def test_keyed_scrub_through_the_prefilter_equals_the_exact_path(
    tmp_path: Path, cli: Any, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _train(kit)
    _register(cli, kit, tmp_path / "plain", keyed=False)
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    _register(cli, kit, tmp_path / "keyed", keyed=True)
    statuses: list[int] = []
    original = Prefilter.filter

    def spying(self: Prefilter, block: bytes, lines: LineFormat) -> FilteredBlock:
        out = original(self, block, lines)
        statuses.extend(out.status.tolist())
        return out

    monkeypatch.setattr(Prefilter, "filter", spying)

    def scrub(root: str, out: str) -> bytes:
        manifest = tmp_path / root / ".contam-guard/manifest.json"
        result = cli("scrub", "t.jsonl", "-o", out, "--manifest", manifest)
        assert result.code == 0, result.output
        assert "2 touched" in result.out
        return Path(out).read_bytes()

    # Unkeyed first: the filter meets the file's code points for the first time (their lines go
    # to the exact path once), so that the keyed run below is decided by the filter itself.
    monkeypatch.delenv("CONTAM_GUARD_KEY")
    plain = scrub("plain", "plain.jsonl")
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    statuses.clear()
    keyed = scrub("keyed", "keyed.jsonl")
    assert set(statuses) == {CLEAN, HITS}  # every line decided by the keyed filter
    with monkeypatch.context() as m:
        m.setattr(count, "line_format", lambda fmt, options: None)
        statuses.clear()
        exact = scrub("keyed", "exact.jsonl")
        assert not statuses
    assert keyed == exact == plain
    assert keyed != Path("t.jsonl").read_bytes()
