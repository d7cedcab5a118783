"""A keyed manifest that cannot be opened: exit 2, a message naming the file, no traceback,
nothing changed.

Its binary files (``sets/hb/_ids.<digest>.bin``, ``part-0.<digest>.bin``, ...) are sealed (AES-GCM
under a key derived from the secret). A damaged file is caught by its digest in the index; one
whose digest was recomputed into the index by an attacker without the key by the index's MAC;
by a careless tool holding the key (the MAC recomputed too) by the file's authentication tag; a
file moved from another place by the tag too (its stem is authenticated).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from contam_guard.io.manifest.disk_files import file_digest
from contam_guard.io.manifest.index_text import dumps_index, mac_body
from contam_guard.io.manifest.names import stem_of
from contam_guard.io.manifest.schema import Index
from contam_guard.io.manifest.sealing import SealKey
from tests.helpers import load_manifest
from tests.manifest.test_manifest_errors import ROWS, cut, flip_a_byte, run, run_fresh, snapshot

SECRET = "a-long-secret-for-the-keyed-error-matrix-0123456789"
OTHER = "another-long-secret-for-the-keyed-error-matrix-9876"
MANIFEST = ".contam-guard/manifest.json"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTAM_GUARD_KEY", SECRET)
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "train.jsonl").write_text(json.dumps({"text": ROWS[1]["q"]}) + "\n")
    assert run("init", "--keyed")[0] == 0
    assert run("register", "hb", "g.jsonl", "--field", "q", "--id-field", "id")[0] == 0
    # part-0/1: q's 5-grams and windows; part-2: q~numbers-v1; part-3/4: q~words-v1
    assert sorted(stem_of(p.name) for p in (tmp_path / ".contam-guard/sets/hb").iterdir()) == [
        "_ids.bin",
        "part-0.bin",
        "part-1.bin",
        "part-2.bin",
        "part-3.bin",
        "part-4.bin",
    ]
    assert run("scan", "train.jsonl")[0] == 1  # the key opens it, and the leak is found
    return tmp_path


def set_file(name: str) -> Path:
    return stems()[name]


def stems() -> dict[str, Path]:
    """Each set file by its stem (``part-0.bin``): its name without the digest of its bytes."""
    return {stem_of(p.name): p for p in Path(".contam-guard/sets/hb").iterdir()}


def reader(blob: bytes) -> Callable[[int, int], bytes]:
    return lambda size, at: blob[at : at + size]


def record_digest(*names: str, secret: str | None = SECRET) -> None:
    """Write each file's current size and digest into the index, and reseal the index: its
    digest, and its MAC when ``secret`` is given (a tool holding the key; without it the old MAC
    stays)."""
    index = Path(MANIFEST)
    data = json.loads(index.read_text())
    for name in names:
        path = set_file(name)
        blob = path.read_bytes()
        entry = data["sets"]["hb"]["data"][f"sets/hb/{path.name}"]
        entry.update(bytes=len(blob), digest=file_digest(reader(blob), len(blob)))
    data.pop("digest")
    if secret is not None:
        data["mac"] = SealKey.derive(secret, data["seal"]["salt"]).index_mac(
            mac_body(Index.model_validate(data))
        )
    index.write_text(dumps_index(Index.model_validate(data)))


def damaged(
    name: str, change: Callable[[Path], None], *, resealed: bool = False, with_key: bool = True
) -> Callable[[], None]:
    def apply() -> None:
        change(set_file(name))
        if resealed:
            record_digest(name, secret=SECRET if with_key else None)

    return apply


def swap_parts() -> None:
    """part-0 and part-1 trade places, each with a correct digest in the index."""
    a, b = set_file("part-0.bin"), set_file("part-1.bin")
    blob_a, blob_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(blob_b)
    b.write_bytes(blob_a)
    record_digest("part-0.bin", "part-1.bin")


def with_key(secret: str | None) -> Callable[[pytest.MonkeyPatch], None]:
    def apply(monkeypatch: pytest.MonkeyPatch) -> None:
        if secret is None:
            monkeypatch.delenv("CONTAM_GUARD_KEY")
        else:
            monkeypatch.setenv("CONTAM_GUARD_KEY", secret)

    return apply


# case: (damage to the files, change to the environment, the file named, the words of the message)
CASES: dict[str, tuple[Callable[[], None] | None, Callable[[pytest.MonkeyPatch], None] | None, str, str]] = {
    "wrong-key": (None, with_key(OTHER), "manifest.json", "does not match the key"),
    "no-key": (None, with_key(None), "manifest.json", "CONTAM_GUARD_KEY is not set"),
    "part-byte": (damaged("part-0.bin", flip_a_byte), None, "part-0.", "digest is not the one"),
    "part-byte-resealed": (
        damaged("part-0.bin", flip_a_byte, resealed=True),
        None,
        "part-0.",
        "does not open with this key",
    ),
    "part-cut": (damaged("part-1.bin", cut), None, "part-1.", "bytes, but the manifest's index says"),
    "part-cut-resealed": (damaged("part-1.bin", cut, resealed=True), None, "part-1.", "does not open"),
    "part-missing": (damaged("part-1.bin", Path.unlink), None, "part-1.", "missing"),
    "part-byte-resealed-without-the-key": (
        damaged("part-0.bin", flip_a_byte, resealed=True, with_key=False),
        None,
        "manifest.json",
        "MAC does not match",
    ),
    "ids-resealed": (damaged("_ids.bin", flip_a_byte, resealed=True), None, "_ids.", "does not open"),
    "parts-swapped": (swap_parts, None, "part-", "does not open with this key"),
}
COMMANDS = {"verify": ["verify"], "scan": ["scan", "train.jsonl"]}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", list(CASES))
def test_a_keyed_manifest_that_cannot_be_opened_is_refused_naming_the_file(
    project: Path, monkeypatch: pytest.MonkeyPatch, case: str, command: str
) -> None:
    damage, environment, named, words = CASES[case]
    if damage is not None:
        damage()
    if environment is not None:
        environment(monkeypatch)
    before = snapshot(project)
    code, output = run(*COMMANDS[command])
    assert code == 2, output  # README, "Exit codes": a manifest error
    assert named in output and words in output, output
    assert "hint:" in output and "internal error" not in output
    assert snapshot(project) == before
    for row in ROWS:  # no golden text in any message
        assert row["q"][:40] not in output


@pytest.mark.parametrize("case", ["wrong-key", "part-byte-resealed", "part-missing", "parts-swapped"])
def test_in_a_fresh_process_there_is_no_traceback(project: Path, case: str) -> None:
    damage, _, named, words = CASES[case]
    if damage is not None:
        damage()
    env = {"CONTAM_GUARD_KEY": OTHER if case == "wrong-key" else SECRET}
    for command in COMMANDS.values():
        code, output = run_fresh(project, *command, env=env)
        assert code == 2, output
        assert named in output and words in output, output
        assert "Traceback" not in output and "internal error" not in output


def test_the_right_key_after_a_wrong_one_still_opens_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused key changes nothing: the manifest opens with the right one afterwards."""
    monkeypatch.setenv("CONTAM_GUARD_KEY", OTHER)
    assert run("scan", "train.jsonl")[0] == 2
    monkeypatch.setenv("CONTAM_GUARD_KEY", SECRET)
    assert run("scan", "train.jsonl")[0] == 1
    assert run("verify")[0] == 0


def test_a_keyed_sets_n_is_sealed_with_its_metadata(project: Path) -> None:
    """A set's own GPT-3 N (``register --n``) is per-set metadata: in a keyed manifest it is
    sealed, readable only with the key."""
    assert run("register", "hb", "g.jsonl", "--field", "q", "--id-field", "id", "--n", "21")[0] == 0
    entry = json.loads(Path(MANIFEST).read_text())["sets"]["hb"]
    assert "n" not in entry and entry["sealed"]
    assert load_manifest(Path(MANIFEST)).sets["hb"].n == 21
