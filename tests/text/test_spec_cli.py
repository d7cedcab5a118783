"""Spec v1 and v2 through the command line: hostile leaks, old manifests, ``contam-guard upgrade``.

``data/v1_manifest.json`` and ``data/v1_items_*.csv`` were written by contam-guard before spec
v2 existed (commit 10d5861: ``init``, ``register hostile v1_golden.jsonl --field question
--id-field id``, ``scan v1_train.jsonl|v1_variants.jsonl --items-csv``): a manifest of spec v1
must keep giving exactly those hashes and numbers. The manifest is a record of what was written
then (one JSON file holding every array in base64, a layout contam-guard no longer reads): the
test reads its arrays itself.
"""

from __future__ import annotations

import base64
import csv
import json
import shutil
import unicodedata
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from contam_guard.core.spec.hashing import SIPHASH_SPEC, HashKey
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest, Spec
from contam_guard.io.manifest.sealing import SealKey, new_salt
from tests.helpers import Runner

DATA = Path(__file__).parent / "data"
MANIFEST = Path(".contam-guard/manifest.json")
V1_SPEC = Spec(words="words-v1", alnum="alnum-v1")

# Original text, GSM8K-like, with an accented word in every 12 words (so that NFD text shares
# no 13-word run with it under spec v1).
GOLDEN = (
    "Zoé's café in Montréal sells crème brûlée; each crème brûlée costs 4 euros, and Zoé sells 35 "
    "crème brûlée every Sunday to tourists from Orléans. How much does Zoé earn from crème brûlée "
    "on four Sundays?"
)


def _inside_words(mark: str) -> Callable[[str], str]:
    """Put ``mark`` after the first character of every word."""
    return lambda text: " ".join(w[:1] + mark + w[1:] for w in text.split(" "))


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _math_bold(text: str) -> str:
    def bold(c: str) -> str:
        if "A" <= c <= "Z":
            return chr(0x1D400 + ord(c) - ord("A"))
        if "a" <= c <= "z":
            return chr(0x1D41A + ord(c) - ord("a"))
        return chr(0x1D7CE + ord(c) - ord("0")) if "0" <= c <= "9" else c

    return "".join(bold(c) for c in text)


LEAKS: list[tuple[str, Callable[[str], str]]] = [
    ("zero width space between words", lambda t: t.replace(" ", "\u200b")),
    ("zero width non-joiner", _inside_words("\u200c")),
    ("zero width joiner", _inside_words("\u200d")),
    ("soft hyphen", _inside_words("\u00ad")),
    ("word joiner", _inside_words("\u2060")),
    ("byte order mark U+FEFF", _inside_words("\ufeff")),
    ("left-to-right mark", _inside_words("\u200e")),
    ("right-to-left mark", _inside_words("\u200f")),
    ("bidi embedding", lambda t: " ".join("\u202a" + w + "\u202c" for w in t.split(" "))),
    ("bidi isolate", _inside_words("\u2066\u2069")),
    ("variation selector 16", _inside_words("\ufe0f")),
    ("ideographic variation selector", _inside_words("\U000e0100")),
    ("tag characters", _inside_words("\U000e0074\U000e0061\U000e0067")),
    ("fullwidth letters", _fullwidth),
    ("mathematical bold", _math_bold),
    ("NFD against an NFC golden item", lambda t: unicodedata.normalize("NFD", t)),
]


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)


def _project(
    cli: Runner, root: Path, spec: Spec | None, key: HashKey | None = None, secret: str | None = None
) -> None:
    """A project at ``root``: init, then (for ``spec``) an empty manifest of that spec."""
    assert cli("init", root).code == 0
    if spec is not None:
        if key is None or secret is None:
            store.save(root / MANIFEST, Manifest(spec=spec))
        else:  # keyed: hashed with SipHash, sealed with a key from the secret and a new salt
            salt = new_salt()
            keyed = spec.model_copy(update={"hash": SIPHASH_SPEC})
            seal = SealKey.derive(secret, salt)
            store.save(root / MANIFEST, Manifest(spec=keyed, key_check=key.check, salt=salt, seal=seal))


def _register_golden(cli: Runner, root: Path, text: str = GOLDEN) -> None:
    (root / "golden.jsonl").write_text(json.dumps({"id": "q1", "question": text}) + "\n", encoding="utf-8")
    options = ["--field", "question", "--id-field", "id", "--manifest", root / MANIFEST]
    assert cli("register", "demo", root / "golden.jsonl", *options).code == 0


def _train(path: Path, leak: str) -> Path:
    path.write_text(json.dumps({"text": "Worked example: " + leak + " Thanks!"}) + "\n", encoding="utf-8")
    return path


CASES = [("plain copy (control)", lambda t: t), *LEAKS]


@pytest.mark.parametrize(("name", "hide"), CASES, ids=[name for name, _ in CASES])
def test_hostile_leaks_caught_under_v2_missed_under_v1(
    cli: Runner, tmp_path: Path, name: str, hide: Callable[[str], str]
) -> None:
    """Each hidden copy of the item fails the GPT-3 rule under spec v2 (exit 1); under spec v1
    every one but the plain copy passed (exit 0): the misses v2 exists for."""
    leak = hide(GOLDEN)
    assert leak != GOLDEN or name.startswith("plain")
    train = _train(tmp_path / "train.jsonl", leak)
    codes = {}
    for label, spec in (("v1", V1_SPEC), ("v2", None)):
        root = tmp_path / label
        _project(cli, root, spec)
        _register_golden(cli, root)
        result = cli("scan", train, "--only", "gpt3", "--manifest", root / MANIFEST)
        codes[label] = result.code
        assert ("contam-guard upgrade" in result.err) == (label == "v1")
    assert codes == {"v1": 0 if leak != GOLDEN else 1, "v2": 1}


# ------------------------------------------------------------------------------------------
# A manifest of spec v1 keeps working with v1; ``upgrade`` converts it


def _items(path: Path) -> dict[str, dict[str, str]]:
    """Items CSV rows by item id, without columns a later version may add."""
    keep = ["words", "longest_run", "ngrams8", "ngrams8_found", "tokens_covered_L10"]
    keep += ["sub50_windows", "sub50_hits"]
    with path.open(encoding="utf-8") as handle:
        return {row["item_id"]: {k: row[k] for k in keep} for row in csv.DictReader(handle)}


@pytest.fixture
def v1_project(cli: Runner, tmp_path: Path) -> Path:
    for name in ("v1_golden.jsonl", "v1_train.jsonl", "v1_variants.jsonl"):
        shutil.copy(DATA / name, tmp_path / name)
    _project(cli, tmp_path, V1_SPEC)
    result = cli("register", "hostile", "v1_golden.jsonl", "--field", "question", "--id-field", "id")
    assert result.code == 0
    assert "contam-guard upgrade" in result.err  # registering into it says so too
    return tmp_path


def _array(text: str, dtype: str) -> list[int]:
    values: list[int] = (
        np.frombuffer(base64.b64decode(text), dtype=dtype)
        .astype(np.int64 if "i" in dtype else np.uint64)
        .tolist()
    )
    return values


def test_v1_manifest_is_what_contam_guard_wrote_before_v2(v1_project: Path) -> None:
    written = store.load(v1_project / MANIFEST)
    raw = json.loads((DATA / "v1_manifest.json").read_text(encoding="utf-8"))
    assert written.spec.core() == Spec.model_validate(raw["spec"]).core() == V1_SPEC.core()
    golden, want = written.sets["hostile"], raw["sets"]["hostile"]
    # The registered set is the same: ids, id field, files, version, history, digests (the
    # rewording rules' derived views, which v1 did not have, are outside the set's digest).
    assert (list(golden.ids), golden.id_field, golden.version) == (
        want["ids"],
        want["id_field"],
        want["version"],
    )
    assert [f.model_dump() for f in golden.files] == want["files"]
    assert [h.model_dump() for h in golden.history] == want["history"]
    assert golden.digest == want["digest"]
    view, old = golden.views["question"], want["views"]["question"]
    assert (view.field, view.digest) == (old["field"], old["digest"])
    # The same arrays: counts and 5-grams in item order; a window table keeps each window's item,
    # not its place in the item (no rule needs it), so each item's windows are compared as a multiset.
    assert view.word_counts.tolist() == _array(old["words"], "<i4")
    assert view.alnum_counts.tolist() == _array(old["alnum_chars"], "<i4")
    assert view.gram_hashes.tolist() == _array(old["grams"], "<u8")
    counts = view.window_counts
    windows = [
        _windows_by_item(np.asarray(hashes, np.uint64), counts)
        for hashes in (view.window_hashes, _array(old["windows"], "<u8"))
    ]
    assert windows[0] == windows[1] and len(windows[0]) == 11


def _windows_by_item(hashes: np.ndarray, counts: np.ndarray) -> list[list[int]]:
    return [sorted(part.tolist()) for part in np.split(hashes, np.cumsum(counts)[:-1])]


@pytest.mark.parametrize("corpus", ["copies", "variants"])
def test_v1_manifest_scans_with_v1(cli: Runner, v1_project: Path, corpus: str) -> None:
    train = "v1_train.jsonl" if corpus == "copies" else "v1_variants.jsonl"
    result = cli("scan", train, "--items-csv", "items.csv", "--exit-zero")
    assert result.code == 0
    notices = [line for line in result.err.splitlines() if "contam-guard upgrade" in line]
    assert len(notices) == 1 and "words-v1/alnum-v1" in notices[0]
    assert _items(v1_project / "items.csv") == _items(DATA / f"v1_items_{corpus}.csv")


def test_upgrade_rehashes_under_v2(cli: Runner, v1_project: Path) -> None:
    before = store.load(MANIFEST)
    result = cli("upgrade")
    assert result.code == 0, result.output
    assert "hostile: re-hashed under words-v4/alnum-v4 (version 1 -> 2)" in result.out
    after = store.load(MANIFEST)
    assert after.spec.core() == Spec().core()
    golden = after.sets["hostile"]
    assert golden.version == 2
    assert [h.digest for h in golden.history] == [before.sets["hostile"].digest, golden.digest]
    assert list(golden.ids) == list(before.sets["hostile"].ids)
    assert golden.files == before.sets["hostile"].files
    verify = cli("verify")
    assert verify.code == 0 and "contam-guard upgrade" not in verify.output
    # Under v2 every variant in v1_variants.jsonl is its item, whole (v1 missed most of them).
    assert cli("scan", "v1_variants.jsonl", "--items-csv", "items.csv", "--exit-zero").code == 0
    items = _items(v1_project / "items.csv")
    assert {name: row["longest_run"] for name, row in items.items()} == {
        name: row["words"] for name, row in items.items()
    }
    v1_rows = _items(DATA / "v1_items_variants.csv").items()
    missed = {name for name, row in v1_rows if row["longest_run"] != row["words"]}
    assert missed == {"plain", "german", "ligature", "fullwidth", "nfd", "invisible", "math", "fractions"}
    # A second upgrade has nothing to do and writes nothing.
    data = MANIFEST.read_bytes()
    again = cli("upgrade")
    assert again.code == 0 and "nothing to do" in again.out and MANIFEST.read_bytes() == data


def test_upgrade_keeps_the_version_of_a_set_whose_hashes_do_not_change(cli: Runner, tmp_path: Path) -> None:
    _project(cli, tmp_path, V1_SPEC)
    _register_golden(cli, tmp_path, "Plain ASCII text is normalised the same way by both specs, every word.")
    result = cli("upgrade")
    assert result.code == 0 and "demo: re-hashed under words-v4/alnum-v4 (hashes unchanged)" in result.out
    golden = store.load(MANIFEST).sets["demo"]
    assert golden.version == 1 and len(golden.history) == 1


def _unchanged(before: bytes) -> None:
    assert MANIFEST.read_bytes() == before
    assert not [p for p in MANIFEST.parent.iterdir() if p.name.endswith(".tmp")]


def test_upgrade_needs_every_golden_file(cli: Runner, v1_project: Path) -> None:
    before = MANIFEST.read_bytes()
    (v1_project / "v1_golden.jsonl").rename(v1_project / "moved.jsonl")
    result = cli("upgrade")
    assert result.code == 2
    assert "missing: set 'hostile': v1_golden.jsonl" in result.err and "Traceback" not in result.output
    _unchanged(before)


def test_upgrade_refuses_golden_files_changed_since_registration(cli: Runner, v1_project: Path) -> None:
    before = MANIFEST.read_bytes()
    golden = v1_project / "v1_golden.jsonl"
    golden.write_text(golden.read_text(encoding="utf-8").replace("Natalia", "Natasha"), encoding="utf-8")
    result = cli("upgrade")
    assert result.code == 2 and "changed since version 1 was registered" in result.err
    assert "Natasha" not in result.output and "Natalia" not in result.output  # no golden text
    _unchanged(before)


def test_upgrade_of_a_keyed_manifest_needs_the_key(
    cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "k" * 40
    monkeypatch.setenv("CONTAM_GUARD_KEY", secret)
    _project(cli, tmp_path, V1_SPEC, HashKey(secret), secret)
    _register_golden(cli, tmp_path)
    train = _train(tmp_path / "train.jsonl", GOLDEN.replace(" ", "\u200b"))
    assert cli("scan", train, "--only", "gpt3").code == 0  # v1 misses it
    before = MANIFEST.read_bytes()
    monkeypatch.delenv("CONTAM_GUARD_KEY")
    result = cli("upgrade")
    assert result.code == 2 and "CONTAM_GUARD_KEY" in result.err
    _unchanged(before)
    monkeypatch.setenv("CONTAM_GUARD_KEY", secret)
    assert cli("upgrade").code == 0
    upgraded = store.load(MANIFEST)
    assert upgraded.key_check == HashKey(secret).check
    assert upgraded.spec.hash == SIPHASH_SPEC and upgraded.spec.is_current(keyed=True)
    assert cli("scan", train, "--only", "gpt3").code == 1  # v2 catches it


def test_scrub_follows_the_manifest_spec(cli: Runner, tmp_path: Path) -> None:
    """Scrub hashes under the manifest's spec too: the NFD copy stays under v1, goes under v2."""
    leak = unicodedata.normalize("NFD", GOLDEN)
    train = tmp_path / "train.jsonl"
    train.write_text(
        json.dumps({"text": "Worked example: " + leak}) + "\n" + json.dumps({"text": "clean"}) + "\n",
        encoding="utf-8",
    )
    kept = {}
    for label, spec in (("v1", V1_SPEC), ("v2", None)):
        root = tmp_path / label
        _project(cli, root, spec)
        _register_golden(cli, root)
        out = tmp_path / f"{label}.jsonl"
        result = cli("scrub", train, "-o", out, "--mode", "drop", "--manifest", root / MANIFEST)
        assert result.code == 0, result.output
        kept[label] = [json.loads(line)["text"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert kept == {"v1": ["Worked example: " + leak, "clean"], "v2": ["clean"]}


def test_homoglyphs_are_not_caught(cli: Runner, tmp_path: Path) -> None:
    """README, "What no n-gram rule can catch": Cyrillic а, е, о for Latin a, e, o in every word
    is the same text to a reader and to no rule here (NFKC keeps scripts apart)."""
    leak = GOLDEN.translate(str.maketrans("aeo", "\u0430\u0435\u043e"))
    _project(cli, tmp_path, None)
    _register_golden(cli, tmp_path)
    assert cli("scan", _train(tmp_path / "train.jsonl", leak)).code == 0
    assert cli("scan", _train(tmp_path / "train.jsonl", GOLDEN)).code == 1  # control
