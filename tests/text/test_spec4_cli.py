"""A manifest of spec 3 once spec 4 exists, through the command line: its scans hash text exactly
as before (markup and the Hangul filler stay what spec 3 made of them), and ``contam-guard
upgrade`` moves it to spec 4 as it moved spec 2 to spec 3: a set whose hashes do not change keeps
its version, the others get the next one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Spec
from tests.helpers import Runner
from tests.security.hostile import LONG
from tests.text.test_spec_cli import MANIFEST, _project

V3_SPEC = Spec(words="words-v3", alnum="alnum-v3")
# An item whose own text holds markup and a Hangul filler: spec 4 hashes it otherwise.
MARKED = "Press <kbd>Ctrl</kbd>&nbsp;+&nbsp;S to save the file\u3164 before you close the editor window today"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)


def _register(cli: Runner, root: Path, name: str, text: str) -> None:
    (root / f"{name}.jsonl").write_text(json.dumps({"id": name, "q": text}) + "\n", encoding="utf-8")
    options = ["--field", "q", "--id-field", "id", "--manifest", root / MANIFEST]
    assert cli("register", name, root / f"{name}.jsonl", *options).code == 0


def test_a_v3_manifest_hashes_as_before_and_upgrade_moves_it_to_v4(cli: Runner, tmp_path: Path) -> None:
    _project(cli, tmp_path, V3_SPEC)
    _register(cli, tmp_path, "plain", LONG)
    _register(cli, tmp_path, "marked", MARKED)
    words = LONG.split()
    leak = " ".join(f"[{w}](http://example.com/{i})" if i % 9 == 8 else w for i, w in enumerate(words))
    train = tmp_path / "train.jsonl"
    train.write_text(json.dumps({"text": leak}) + "\n" + json.dumps({"text": MARKED}) + "\n")

    before = cli("scan", train, "--only", "gpt3", "--items-csv", tmp_path / "v3.csv")
    assert before.code == 1 and "contam-guard upgrade" in before.err  # the notice names spec 4's reach
    assert "HTML entities and tags, and Markdown links" in before.err
    # Under spec 3 only the verbatim copy fails; the link-edited copy of the plain item passes.
    assert "FAIL    marked:q item marked" in before.out and "plain:q" not in before.out

    upgraded = cli("upgrade")
    assert upgraded.code == 0, upgraded.output
    assert "plain: re-hashed under words-v4/alnum-v4 (hashes unchanged)" in upgraded.out
    assert "marked: re-hashed under words-v4/alnum-v4 (version 1 -> 2)" in upgraded.out
    manifest = store.load(tmp_path / MANIFEST)
    assert (manifest.spec.words, manifest.spec.alnum) == ("words-v4", "alnum-v4")
    assert manifest.sets["plain"].version == 1 and manifest.sets["marked"].version == 2

    after = cli("scan", train, "--only", "gpt3")
    assert after.code == 1 and "contam-guard upgrade" not in after.err
    assert "FAIL    marked:q item marked" in after.out and "FAIL    plain:q item plain" in after.out
