"""The attacks keyed hashing and sealing defend against, run for real (see docs/security.md).

Whoever holds an unkeyed manifest can hash candidate texts with the public spec and check them
against it: a dictionary attack that confirms which candidates are golden items. With a keyed
manifest (SipHash-2-4) the same attacker, lacking the key, learns nothing from the hashes;
whoever holds the key (the guard) can.

Keyed hashes alone would leave the shape: each item's word and character counts and which of
its keyed hashes repeat match candidates as well as the hashes would (the length-and-repetition
attack below, run on an unkeyed manifest, whose files show the shape). A keyed manifest seals
them: without the key, the attacker reads set names, versions, item totals and file sizes. And
the sizes of sealed files are padded to a bucket of the item total (``sealing.padded_size``):
registering candidate sets under one's own key gives the same sizes whichever items they hold
(the size attack below).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.register.build import GoldenSource, build_set
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.hashing import HashKey
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import GoldenFile, Manifest, Spec
from contam_guard.io.manifest.names import stem_of
from contam_guard.io.manifest.sealing import SealKey, new_salt
from contam_guard.report.golden import golden_lookup
from tests.security.shape_attack import confirmed_items, visible_index

GOLDEN = [
    "A gardener plants 14 rows of tulips with 9 bulbs in each row; how many bulbs does she plant in all",
    "Marco reads 23 pages on Monday and twice as many on Tuesday, how many pages has he read so far",
    "A train leaves at 3 pm travelling 80 miles per hour; how far has it gone by half past five",
]
DECOYS = [
    "A gardener plants 15 rows of roses with 8 bushes in each row; how many bushes are there in all",
    "Priya buys 6 notebooks at 3 dollars each and a pen for 2 dollars, how much does she spend in total",
    "A bus leaves at 9 am travelling 50 miles per hour; how far has it gone by noon that day",
]
SECRET = "a-long-secret-that-only-the-eval-team-holds-0123"
ATTACKER = "the-attackers-own-secret-that-is-long-enough-4567"


def register(
    tmp_path: Path, key: HashKey | None, texts: list[str] = GOLDEN, secret: str = SECRET
) -> Manifest:
    """``texts`` registered as set ``secret`` (view ``q``) in a manifest at ``tmp_path``, keyed
    with ``key`` (``secret``, its secret, also seals the files), read back with the key."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"q": text}) + "\n" for text in texts))
    built = build_set([GoldenSource(golden, "golden.jsonl")], ["q"], None, key, None)
    path = tmp_path / "manifest.json"
    spec = Spec(hash=key.hash_spec) if key else Spec()
    salt = new_salt() if key else None
    seal = SealKey.derive(secret, salt) if key and salt else None
    manifest = Manifest(
        spec=spec, key_check=key.check if key else None, sets={"secret": built}, salt=salt, seal=seal
    )
    store.save(path, manifest)
    return store.load(path, seal=seal)


def attacker_confirms(manifest: Manifest, candidate: str, key: HashKey | None = None) -> float:
    """Share of the candidate's 5-grams found in the manifest, hashed with the public spec (and
    ``key``, for whoever holds it)."""
    known = set(manifest.sets["secret"].views["q"].gram_hashes.tolist())
    features = extract_features([candidate], key=key, windows=False)
    grams = features.gram_hash[features.gram_valid].tolist()
    return float(np.mean([g in known for g in grams]))


def test_unkeyed_manifest_confirms_which_candidates_are_golden(tmp_path: Path) -> None:
    manifest = register(tmp_path, None)
    scores = {text: attacker_confirms(manifest, text) for text in GOLDEN + DECOYS}
    confirmed = {text for text, score in scores.items() if score > 0.5}
    assert confirmed == set(GOLDEN)  # the attack works: this is why keyed hashing exists


def test_keyed_manifest_tells_the_attacker_nothing(tmp_path: Path) -> None:
    key = HashKey(SECRET)
    manifest = register(tmp_path, key)
    assert manifest.spec.hash == key.hash_spec
    scores = [attacker_confirms(manifest, text) for text in GOLDEN + DECOYS]
    assert scores == [0.0] * len(scores)  # golden and decoys look the same: nothing learned
    # Another key is no better than none.
    other = HashKey("a-guess-at-the-secret-that-is-long-enough-9999")
    assert [attacker_confirms(manifest, text, other) for text in GOLDEN + DECOYS] == scores
    # With the key, the same test separates them: the key is all that protects the manifest.
    confirmed = {text for text in GOLDEN + DECOYS if attacker_confirms(manifest, text, key) > 0.5}
    assert confirmed == set(GOLDEN)


def test_the_length_and_repetition_attack(tmp_path: Path) -> None:
    """Without the key: per-item word and character counts and the repetition pattern of the
    hashes pick the golden items out of the candidates in a manifest whose files show them (an
    unkeyed one); a sealed one gives the same attack (the same code) nothing."""
    candidates = GOLDEN + DECOYS
    register(tmp_path / "open", None)
    before = confirmed_items(tmp_path / "open" / "manifest.json", candidates)
    assert before and all(item == candidate for item, candidate in before.items())  # right, every one
    register(tmp_path / "sealed", HashKey(SECRET))
    assert confirmed_items(tmp_path / "sealed" / "manifest.json", candidates) == {}


def test_a_sealed_manifest_shows_only_names_versions_totals_and_sizes(tmp_path: Path) -> None:
    register(tmp_path, HashKey(SECRET))
    visible = visible_index(tmp_path / "manifest.json")
    # files: the ids, q's 5-grams and windows, q~numbers-v1, q~words-v1 and its windows
    assert visible == {"secret": {"version": 1, "items": 3, "files": 6}}
    index_text = (tmp_path / "manifest.json").read_text()
    for hidden in ("golden.jsonl", '"q"', "windows.", 'id_field": "', 'rules": ['):
        assert hidden not in index_text, hidden
    for path in (tmp_path / "sets").rglob("*.bin"):
        assert path.read_bytes()[:8] == b"CGM2SEAL", path
    # With the key, everything is there.
    opened = store.load(
        tmp_path / "manifest.json", seal=SealKey.derive(SECRET, json.loads(index_text)["seal"]["salt"])
    )
    assert opened.sets["secret"].views["q"].word_counts.tolist() == [len(t.split()) for t in GOLDEN]


def sizes(folder: Path) -> dict[str, int]:
    """What anyone sees of a set's files: each file's size, by stem (``part-0.bin``, ...)."""
    return {stem_of(p.name): p.stat().st_size for p in sorted((folder / "sets" / "secret").iterdir())}


def test_the_size_attack(tmp_path: Path) -> None:
    """Without the key, the attacker registers candidate sets under a key of their own and
    compares the sizes of the sealed files with the target's. Unpadded, sizes are the plaintext's
    plus a constant (an unkeyed manifest's files show them): the right candidate set reproduces
    every size, a swapped item changes some, an added item moves them with its length. Padded
    (``sealing.padded_size``), every candidate set of the same item total gives the same sizes."""
    long_item = (
        "A baker fills 12 trays with 18 rolls each, sells two thirds of them in the morning and half "
        "of the rest by noon; how many rolls are left for the evening customers"
    )
    candidates = {"right": GOLDEN, "wrong": DECOYS, "one swapped": [*GOLDEN[:2], long_item]}
    longer, shorter = [*GOLDEN, long_item], [*GOLDEN, "A short added one"]
    # Unpadded (the positive control: the attack works on what sealing alone would show).
    plain = {
        label: sizes(_registered(tmp_path / f"plain-{label}", None, texts))
        for label, texts in candidates.items()
    }
    # A swapped item shows (the decoys, written to the same shape, may happen to match every size).
    assert plain["one swapped"] != plain["right"]
    added = [
        sizes(_registered(tmp_path / f"plain-{n}", None, texts)) for n, texts in enumerate((longer, shorter))
    ]
    assert added[0] != added[1]
    # Sealed and padded: the target, then the attacker's guesses under the attacker's key.
    target = sizes(_registered(tmp_path / "target", HashKey(SECRET), GOLDEN))
    assert len(target) == 6
    for label, texts in candidates.items():
        guessed = sizes(_registered(tmp_path / label, HashKey(ATTACKER), texts, ATTACKER))
        assert guessed == target, label  # nothing tells the right guess from a wrong one
    added = [
        sizes(_registered(tmp_path / f"added-{n}", HashKey(ATTACKER), texts, ATTACKER))
        for n, texts in enumerate((longer, shorter))
    ]
    assert added[0] == added[1] != target  # the item total shows (the index says it anyway), not the item


def _registered(folder: Path, key: HashKey | None, texts: list[str], secret: str = SECRET) -> Path:
    register(folder, key, texts, secret)
    return folder


GSM8K = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gsm8k"


def _questions(name: str) -> list[str]:
    lines = (GSM8K / name).read_text().splitlines()
    return [json.loads(line)["question"] for line in lines if line]


@pytest.mark.gsm8k
@pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}")
def test_the_length_and_repetition_attack_on_gsm8k(tmp_path: Path) -> None:
    """The issue's measurement: the 1,319 GSM8K test questions registered, the candidates those
    and the 7,473 train questions (decoys). A manifest whose files show the shape (unkeyed) gives
    many away, none wrongly; a sealed one none."""
    test, train = _questions("test.jsonl"), _questions("train.jsonl")
    register(tmp_path / "open", None, test)
    before = confirmed_items(tmp_path / "open" / "manifest.json", test + train)
    register(tmp_path / "sealed", HashKey(SECRET), test)
    after = confirmed_items(tmp_path / "sealed" / "manifest.json", test + train)
    wrong = {item: candidate for item, candidate in before.items() if candidate != item}
    print(
        f"\nlength-and-repetition attack, GSM8K test: files that show the shape confirm {len(before)} of "
        f"{len(test)} items ({len(wrong)} wrongly) among {len(test) + len(train)} candidates; "
        f"sealed: {len(after)}"
    )
    assert len(before) > 100 and wrong == {}
    assert after == {}


@pytest.mark.gsm8k
@pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}")
def test_the_size_attack_on_gsm8k(tmp_path: Path) -> None:
    """GSM8K test registered keyed; the attacker registers it (the right guess), it with one item
    swapped for a train question, and it with one long or one short train question added, under
    a key of their own. Unpadded sizes tell each apart; padded ones give the right guess and the
    swapped one the same sizes, and the two added ones the same sizes."""
    test, train = _questions("test.jsonl"), _questions("train.jsonl")
    longest, shortest = max(train, key=len), min(train, key=len)
    sets = {
        "right": test,
        "one swapped": [train[0], *test[1:]],
        "long added": [*test, longest],
        "short added": [*test, shortest],
    }
    plain = {
        label: sizes(_registered(tmp_path / f"plain-{label}", None, texts)) for label, texts in sets.items()
    }
    assert plain["one swapped"] != plain["right"] and plain["long added"] != plain["short added"]
    target = sizes(_registered(tmp_path / "target", HashKey(SECRET), test))
    guessed = {
        label: sizes(_registered(tmp_path / label, HashKey(ATTACKER), texts, ATTACKER))
        for label, texts in sets.items()
    }
    assert guessed["right"] == guessed["one swapped"] == target
    assert guessed["long added"] == guessed["short added"]


def test_show_golden_never_follows_a_manifest_path_out_of_the_project(tmp_path: Path) -> None:
    """A hand-edited manifest naming ../outside.jsonl must not make --show-golden read it."""
    project = tmp_path / "project"
    project.mkdir()
    outside = tmp_path / "outside.jsonl"
    outside.write_text("".join(json.dumps({"q": text}) + "\n" for text in GOLDEN))
    built = build_set([GoldenSource(outside, "golden.jsonl")], ["q"], None, None, None)
    escaped = built.model_copy(update={"files": [GoldenFile(path="../outside.jsonl", items=3)]})
    manifest = Manifest(sets={"secret": escaped})
    index = ManifestIndex.from_manifest(manifest)

    class FakeFinding:
        target = index.targets[0]
        item_id = "0"

    assert golden_lookup(manifest, project, None)(FakeFinding()) is None  # type: ignore[arg-type]
    inside = manifest.model_copy(
        update={"sets": {"secret": built.model_copy(update={"files": [GoldenFile(path="g.jsonl", items=3)]})}}
    )
    (project / "g.jsonl").write_text(outside.read_text())
    assert golden_lookup(inside, project, None)(FakeFinding()) == GOLDEN[0]  # type: ignore[arg-type]
