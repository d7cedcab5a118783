"""The attack keyed hashing defends against, run for real (see docs/security.md).

Whoever holds an unkeyed manifest can hash candidate texts with the public spec and check them
against it: a dictionary attack that confirms which candidates are golden items. With a keyed
manifest (SipHash-2-4, or AES for manifests keyed before it) the same attacker, lacking the key,
learns nothing from the hashes; whoever holds the key (the guard) can.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from contam_guard.commands.golden import golden_lookup
from contam_guard.engine.index import ManifestIndex
from contam_guard.manifest import store
from contam_guard.manifest.build import GoldenSource, build_set
from contam_guard.manifest.model import GoldenFile, Manifest, Spec
from contam_guard.text.features import extract_features
from contam_guard.text.hashing import HashKey

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


def register(tmp_path: Path, key: HashKey | None) -> Manifest:
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"q": text}) + "\n" for text in GOLDEN))
    built = build_set([GoldenSource(golden, "golden.jsonl")], ["q"], None, key, None)
    path = tmp_path / "manifest.json"
    spec = Spec(hash=key.hash_spec) if key else Spec()
    store.save(path, Manifest(spec=spec, key_check=key.check if key else None, sets={"secret": built}))
    return store.load(path)


def attacker_confirms(manifest: Manifest, candidate: str, key: HashKey | None = None) -> float:
    """Share of the candidate's 5-grams found in the manifest, hashed with the public spec (and
    ``key``, for whoever holds it)."""
    known = set(manifest.sets["secret"].views["q"].gram_hashes.tolist())
    features = extract_features([candidate], key=key, windows=False)
    grams = features.gram_hash[features.gram_valid].tolist()
    return float(np.mean([g in known for g in grams]))


SECRET = "a-long-secret-that-only-the-eval-team-holds-0123"
KEYS = [
    pytest.param(HashKey(SECRET), id="siphash24"),
    pytest.param(HashKey(SECRET, "aes128"), id="aes128-before-siphash"),
]


def test_unkeyed_manifest_confirms_which_candidates_are_golden(tmp_path: Path) -> None:
    manifest = register(tmp_path, None)
    scores = {text: attacker_confirms(manifest, text) for text in GOLDEN + DECOYS}
    confirmed = {text for text, score in scores.items() if score > 0.5}
    assert confirmed == set(GOLDEN)  # the attack works: this is why keyed hashing exists


@pytest.mark.parametrize("key", KEYS)
def test_keyed_manifest_tells_the_attacker_nothing(tmp_path: Path, key: HashKey) -> None:
    manifest = register(tmp_path, key)
    assert manifest.spec.hash == key.hash_spec
    scores = [attacker_confirms(manifest, text) for text in GOLDEN + DECOYS]
    assert scores == [0.0] * len(scores)  # golden and decoys look the same: nothing learned
    # Another key is no better than none.
    other = HashKey("a-guess-at-the-secret-that-is-long-enough-9999", key.prf)
    assert [attacker_confirms(manifest, text, other) for text in GOLDEN + DECOYS] == scores
    # With the key, the same test separates them: the key is all that protects the manifest.
    confirmed = {text for text in GOLDEN + DECOYS if attacker_confirms(manifest, text, key) > 0.5}
    assert confirmed == set(GOLDEN)


def test_the_manifest_still_shows_counts_and_lengths(tmp_path: Path) -> None:
    """What keyed hashing does not hide (documented): how many items, and how long each is."""
    manifest = register(tmp_path, HashKey(SECRET))
    view = manifest.sets["secret"].views["q"]
    assert manifest.sets["secret"].items == 3
    assert view.word_counts.tolist() == [len(t.split()) for t in GOLDEN]


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
