"""The rewording rules' two stages (``core.reword.stage``): the compiled kernel and numpy give the
same masked 5-gram hits and the same (unit, item, score) pairs, bit for bit, keyed or not, on
random units with heavy overlaps (short and long: several windows), and both give what the
rules' own functions give on the texts' word lists (``longest_runs`` and ``reworded_scores``)."""

from __future__ import annotations

import itertools
import multiprocessing
import random
from pathlib import Path

import numpy as np
import pytest

from contam_guard.cli import main
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.reword import stage as stage_module
from contam_guard.core.reword.index import RewordIndex
from contam_guard.core.reword.stage import CompiledStage, NumpyStage, StageResult, has_compiled_stage
from contam_guard.core.reword.vocab import spell
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.normalise import CURRENT
from contam_guard.core.thread_pool import Threads
from contam_guard.io.keys import key_for, unlocked
from contam_guard.io.manifest import store
from tests.helpers import write_jsonl

pytestmark = pytest.mark.skipif(not has_compiled_stage(), reason="the compiled kernels are not built")

VOCAB = [
    *("apple", "apples", "pear", "tank", "water", "deep", "depth", "feet", "monday", "sold"),
    *("baked", "cookies", "eggs", "dozen", "three", "17", "16", "2", "25%", "$4.50", "farmer"),
    *("market", "train", "bus", "miles", "hour", "minutes", "the", "a", "of", "and", "10-foot"),
]
OTHER = ["zebra", "quartz", "violin", "harbour", "lantern", "1887", "orbit", "meadow", "cobalt"]
"""Words no item holds: windows mostly of them are too light for any item (skipped unwalked)."""
KEY = "0123456789abcdef0123456789abcdef-stage"


def project(
    root: Path, keyed: bool, monkeypatch: pytest.MonkeyPatch, golden_texts: list[str]
) -> tuple[RewordIndex, object]:
    monkeypatch.chdir(root)
    if keyed:
        monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    else:
        monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    golden = write_jsonl(root / "golden.jsonl", [{"q": t} for t in golden_texts])
    init = ["init", ".", *(["--keyed"] if keyed else [])]
    for args in (init, ["register", "golden", str(golden), "--field", "q"]):
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code in (0, None), args
    manifest = unlocked(store.load(root / ".contam-guard" / "manifest.json"), "CONTAM_GUARD_KEY")
    index = RewordIndex.build(manifest, ManifestIndex.from_manifest(manifest))
    return index, key_for(manifest, "CONTAM_GUARD_KEY")


def text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(low, high)))


def fed(stage: NumpyStage | CompiledStage, texts: list[str]) -> StageResult:
    words = extract_features(texts, windows=False)
    stage.add(spell(texts, words, stage.missing(words.word_hash), CURRENT))
    return stage.run(words.word_hash, words.record_words)


def triples(result: StageResult) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, float]]]:
    hits = sorted(zip(result.gram_unit.tolist(), result.gram_at.tolist(), result.gram_posting.tolist()))
    pairs = sorted(zip(result.pair_unit.tolist(), result.pair_item.tolist(), result.pair_score.tolist()))
    return hits, pairs


@pytest.mark.parametrize("keyed", [False, True])
@pytest.mark.parametrize("floor", [0.05, 0.2, 0.38, 0.8])
def test_compiled_and_numpy_stages_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyed: bool, floor: float
) -> None:
    rng = random.Random(int(floor * 100) + keyed)
    golden = [text(rng, 4, 30) for _ in range(60)]
    index, key = project(tmp_path, keyed, monkeypatch, golden)
    compiled = CompiledStage(index, key, numbers=True, floor=floor)  # type: ignore[arg-type]
    numpy_stage = NumpyStage(index, key, numbers=True, floor=floor)  # type: ignore[arg-type]
    for batch in range(3):  # the vocabulary grows across batches
        texts = [text(rng, 0, 40) for _ in range(120)] + [text(rng, 90, 220) for _ in range(8)]
        # words no item has, a few or most of a unit's, around some of the item's own
        texts += [
            " ".join(
                rng.choice(OTHER) if rng.random() < share else rng.choice(VOCAB)
                for _ in range(rng.randint(3, 120))
            )
            for share in (0.2, 0.5, 0.8, 0.95)
            for _ in range(20)
        ]
        # golden items with their numbers changed, inside other text: masked runs
        texts += [
            f"{text(rng, 0, 9)} {g.replace('17', '23').replace('three', '9')} {text(rng, 0, 9)}"
            for g in golden
        ]
        got, want = triples(fed(compiled, texts)), triples(fed(numpy_stage, texts))
        assert got == want, batch
        assert len(want[0]) > 50 and len(want[1]) > 0  # the texts do overlap


def test_the_compiled_stage_lets_the_decoded_views_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the pass holds a view's prefixes, the view's decoded table is memory nothing reads
    (a hundred MB against 100,000 items); a numpy stage over the same index decodes it again,
    and still agrees (the test above builds the compiled stage first)."""
    rng = random.Random(5)
    index, key = project(tmp_path, False, monkeypatch, [text(rng, 4, 30) for _ in range(40)])
    target = index.words[0]
    assert target.postings.hashes.size and "all_hashes" in target.table.__dict__  # decoded by now
    CompiledStage(index, key, numbers=True, floor=0.2)  # type: ignore[arg-type]
    assert "postings" not in target.__dict__ and "_runs" not in target.__dict__
    assert "all_hashes" not in target.table.__dict__ and "all_payloads" not in target.table.__dict__
    assert target.distinct.size and target.postings.hashes.size  # decoded again when asked


def test_rows_given_by_the_prefilter_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run``'s rows (each word's vocabulary row where the prefilter found it, -1: look it up)
    give what the hashes alone give; a row the pass does not have, or a row count that is not
    one per word, is refused rather than read."""
    rng = random.Random(5)
    index, key = project(tmp_path, False, monkeypatch, [text(rng, 4, 30) for _ in range(20)])
    stage = CompiledStage(index, key, numbers=True, floor=0.2)  # type: ignore[arg-type]
    texts = [text(rng, 5, 60) for _ in range(40)]
    words = extract_features(texts, windows=False)
    stage.add(spell(texts, words, stage.missing(words.word_hash), CURRENT))
    unknown = np.full(words.word_hash.size, -1, dtype=np.int32)
    assert triples(stage.run(words.word_hash, words.record_words, rows=unknown)) == triples(
        stage.run(words.word_hash, words.record_words)
    )
    too_far = unknown.copy()
    too_far[3] = len(VOCAB) * 10
    with pytest.raises(ValueError, match="out of range"):
        stage.run(words.word_hash, words.record_words, rows=too_far)
    with pytest.raises(ValueError, match="one item per word"):
        stage.run(words.word_hash, words.record_words, rows=unknown[:-1])


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_a_batch_cut_between_threads_gives_what_one_thread_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """A large batch run on several threads (each a run of consecutive units) gives the very
    arrays, in the same order, that one thread gives: hits, pairs, units numbered in the batch,
    line breaks and the prefilter's rows cut with their words."""
    rng = random.Random(threads)
    golden = [text(rng, 4, 30) for _ in range(40)]
    index, key = project(tmp_path, False, monkeypatch, golden)
    one = CompiledStage(index, key, numbers=True, floor=0.2)  # type: ignore[arg-type]
    many = CompiledStage(index, key, numbers=True, floor=0.2, threads=Threads(threads))  # type: ignore[arg-type]
    texts = [text(rng, 0, 60) for _ in range(150)] + [f"{text(rng, 0, 5)} {g}" for g in golden]
    rng.shuffle(texts)
    words = extract_features(texts, windows=False)
    for stage in (one, many):
        stage.add(spell(texts, words, stage.missing(words.word_hash), CURRENT))
    breaks = (np.arange(words.word_hash.size) % 7 == 3).astype(np.uint8)
    rows = np.full(words.word_hash.size, -1, dtype=np.int32)
    monkeypatch.setattr(stage_module, "SPLIT_WORDS", 1)
    cuts = stage_module.thread_cuts(words.record_words, threads)
    assert len(cuts) == threads + 1  # the batch is cut: the threads do run
    for kwargs in ({}, {"breaks": breaks, "rows": rows}):
        want = one.run(words.word_hash, words.record_words, **kwargs)
        got = many.run(words.word_hash, words.record_words, **kwargs)
        for name in StageResult.__dataclass_fields__:
            assert np.array_equal(getattr(got, name), getattr(want, name)), name
        assert want.pair_unit.size > 0 and want.gram_unit.size > 0
        assert int(want.pair_unit.max()) >= cuts[-2]  # the last thread's units are numbered in the batch


@pytest.mark.parametrize(
    ("sizes", "threads", "words_at_least"),
    [
        ([5] * 100, 2, 1),
        ([1, 1, 1, 400, 1, 1], 3, 1),
        ([0, 0, 10, 0, 10, 0], 4, 1),
        ([3] * 10, 4, 10_000),  # a small batch: one run
        ([50], 4, 1),  # one unit: one run
    ],
)
def test_thread_cuts_cover_every_unit_once_in_order(
    monkeypatch: pytest.MonkeyPatch, sizes: list[int], threads: int, words_at_least: int
) -> None:
    monkeypatch.setattr(stage_module, "SPLIT_WORDS", words_at_least)
    first = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    cuts = stage_module.thread_cuts(first, threads)
    assert cuts[0] == 0 and cuts[-1] == len(sizes)
    assert all(a < b for a, b in itertools.pairwise(cuts)) and len(cuts) - 1 <= threads
    if sum(sizes) < words_at_least or len(sizes) < 2:
        assert cuts == [0, len(sizes)]
    elif sizes == [5] * 100:
        assert cuts == [0, 50, 100]  # as many words each


def test_a_batch_whose_offsets_do_not_cover_its_words_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(3)
    index, key = project(tmp_path, False, monkeypatch, [text(rng, 4, 30) for _ in range(5)])
    stage = CompiledStage(index, key, numbers=True, floor=0.2, threads=Threads(2))  # type: ignore[arg-type]
    hashes = np.arange(10, dtype=np.uint64)
    for first in ([0, 4, 9], [1, 4, 10], []):
        with pytest.raises(ValueError, match="unit_first"):
            stage.run(hashes, np.array(first, dtype=np.int64))


def test_a_forked_process_runs_its_own_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process forked after the stage made its threads has none of them: it makes its own
    rather than wait for threads that are not there."""
    rng = random.Random(9)
    index, key = project(tmp_path, False, monkeypatch, [text(rng, 4, 30) for _ in range(20)])
    stage = CompiledStage(index, key, numbers=True, floor=0.2, threads=Threads(2))  # type: ignore[arg-type]
    texts = [text(rng, 5, 60) for _ in range(80)]
    words = extract_features(texts, windows=False)
    stage.add(spell(texts, words, stage.missing(words.word_hash), CURRENT))
    monkeypatch.setattr(stage_module, "SPLIT_WORDS", 1)
    want = triples(stage.run(words.word_hash, words.record_words))  # the pool is made here
    results: multiprocessing.SimpleQueue[object] = multiprocessing.get_context("fork").SimpleQueue()

    def child() -> None:
        results.put(triples(stage.run(words.word_hash, words.record_words)))

    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    process.join(timeout=60)
    if process.is_alive():
        process.kill()
        pytest.fail("the forked process waited for threads it does not have")
    assert process.exitcode == 0
    assert results.get() == want
