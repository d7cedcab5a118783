"""The rewording rules on the prefilter's words equal the rules on the exact path.

On a large scan the compiled prefilter hands the rewording family the words of every record it
reads (``core.match.prefilter.BlockWords``) and spells the words the family has not met, so no line is
decoded twice. Whatever a training file holds (rewordings, copies with numbers changed, a question
cut into strings or held in a key, markup, scripts without spaces, characters the word loop drops,
lines the filter leaves to the exact path), the scan must find what the exact path finds: the same
per-item numbers, the same pairs with the same numbers and snippets.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import contam_guard.engines.local as local_engine
from contam_guard import Scanner
from contam_guard.cli import main
from contam_guard.core.families.reword import RewordFamily
from contam_guard.core.match import prefilter as prefilter_module
from contam_guard.core.result import ScanResult
from contam_guard.core.reword import stage as stage_module
from contam_guard.core.spec import native
from contam_guard.engines.local import scan_sources
from contam_guard.io.readers import blocks as block_reader
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.sources import Source

DEV = Path(__file__).resolve().parents[1] / "data" / "rewordings"
KEY = "a-fixed-test-secret-for-the-prefilter-words-0123456789"
pytestmark = pytest.mark.skipif(not native.has_prefilter(), reason="the compiled kernels are not built")


def questions(name: str) -> list[str]:
    return [json.loads(line)["question"] for line in (DEV / name).read_text(encoding="utf-8").splitlines()]


def training_lines() -> list[str]:
    """Every shape the filter reads or leaves to the exact path, around the golden items."""
    golden, reworded = questions("number_changed.jsonl"), questions("reworded.jsonl")
    rng = random.Random(7)
    filler = ["the", "of", "river", "bank", "pages", "apples", "train", "Müller", "naïve", "coins"]
    lines: list[str] = []

    def add(obj: object) -> None:
        lines.append(json.dumps(obj, ensure_ascii=rng.random() < 0.5))

    for k, (gold, other) in enumerate(zip(golden, reworded)):
        words = gold.split()
        shapes = [
            {"text": other},
            {"question": gold, "meta": "copied"},
            {"parts": [" ".join(words[:7]), " ".join(words[7:15]), " ".join(words[15:])]},
            {gold: 1},
            {"text": "数学题：" + other},
            {"text": "\u200b".join(other[:40]) + other[40:]},
            {"text": other.replace(" and ", " &amp; ").replace(" the ", " <b>the</b> ")},
            {"text": other.upper()},
            {"text": "İstanbul " + other},  # İ lowers to two code points: the exact path's line
            {"text": "ქართული " + gold},  # a script not classified yet, the first time
            # glued words: the line goes to the exact path and its words leave the filter's
            {"text": "Notes: " + "".join(w[:1].upper() + w[1:] for w in other.split())},
            # a rewording on a line of its own after a long one: scored as a line of its own
            {"text": " ".join(rng.choice(filler) for _ in "x" * 60) + "\n" + other + "\nThe end."},
        ]
        add(shapes[k % len(shapes)])
        add(shapes[(k * 7 + 3) % len(shapes)])
        for _ in range(rng.randint(1, 6)):
            noise = [
                rng.choice(filler) if rng.random() < 0.7 else str(rng.randint(0, 999999)) for _ in "x" * 30
            ]
            add({"text": " ".join(noise), "id": f"f{k}"})
        if k % 9 == 0:
            lines.append("   ")
    return lines


@pytest.fixture(scope="module", params=[None, KEY], ids=["unkeyed", "keyed"])
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("words")
    before, old_key = Path.cwd(), os.environ.pop("CONTAM_GUARD_KEY", None)
    os.chdir(root)
    if request.param is not None:
        os.environ["CONTAM_GUARD_KEY"] = request.param
    try:
        golden = root / "golden.jsonl"
        golden.write_bytes((DEV / "number_changed.jsonl").read_bytes())
        for args in (["init", *(["--keyed"] if request.param else [])], ["register", "gold", str(golden)]):
            with pytest.raises(SystemExit) as done:
                main(args)
            assert not done.value.code
        (root / "train.jsonl").write_text("\n".join(training_lines()) + "\n", encoding="utf-8")
        yield root
    finally:
        os.chdir(before)
        os.environ.pop("CONTAM_GUARD_KEY", None)
        if old_key is not None:
            os.environ["CONTAM_GUARD_KEY"] = old_key


def scanned(root: Path, threads: int = 1) -> ScanResult:
    scanner = Scanner.open(root / ".contam-guard", threads=threads)
    scanner.expect(1 << 40)  # a large scan: the prefilter and the compiled pass
    acc = scan_sources(scanner, [Source(root / "train.jsonl", "train.jsonl")], ReadOptions())
    return scanner.finish(acc).result  # type: ignore[no-any-return]


@pytest.mark.parametrize("threads", [1, 2], ids=["one-thread", "threads"])
@pytest.mark.parametrize("block_bytes", [3000, None], ids=["small-blocks", "one-block"])
def test_rewording_rules_on_the_filters_words_equal_the_exact_path(
    project: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int | None, threads: int
) -> None:
    """With threads, every block is filtered in two parts and its rewording pass cut in runs."""
    if block_bytes is not None:
        monkeypatch.setattr(block_reader, "BLOCK_BYTES", block_bytes)
    monkeypatch.setattr(prefilter_module, "SPLIT_BYTES", 1)
    monkeypatch.setattr(stage_module, "SPLIT_WORDS", 1)
    read_words: list[int] = []
    original = RewordFamily.observe_words

    def spying(self: RewordFamily, words: object, totals: object) -> object:
        found = original(self, words, totals)  # type: ignore[arg-type]
        read_words.append(-1 if found is None else len(words.hashes))  # type: ignore[attr-defined]
        return found

    monkeypatch.setattr(RewordFamily, "observe_words", spying)
    filtered = scanned(project, threads)
    with monkeypatch.context() as m:
        m.setattr(local_engine, "line_format", lambda fmt, options: None)
        exact = scanned(project)

    # The words path ran, on every block, on many words, and never fell back.
    assert read_words and min(read_words) >= 0 and sum(read_words) > 5000
    if block_bytes is not None:
        assert len(read_words) > 10
    assert filtered.reword is not None and exact.reword is not None
    assert np.array_equal(filtered.reword.numbers_run, exact.reword.numbers_run)
    assert np.array_equal(filtered.reword.reworded, exact.reword.reworded)
    assert filtered.pairs == exact.pairs
    assert (filtered.records, filtered.chars) == (exact.records, exact.chars)
    # Not vacuous: both rules found copies, and rewordings only the reworded rule could find.
    assert (exact.reword.numbers_run >= 5).sum() >= 10
    assert (exact.reword.reworded >= 0.32).sum() >= 10
    assert any(p.numbers["reworded"] >= 0.32 and p.numbers["numbers_run"] == 0 for p in exact.pairs)


@pytest.mark.parametrize("fields", [(), ("text",)], ids=["every-string", "field-text"])
def test_a_block_filtered_in_two_parts_is_the_block_filtered_whole(
    project: Path, fields: tuple[str, ...]
) -> None:
    """Cut anywhere at a line's end, the two parts filtered at once and joined give every array
    the whole block gives: each line's end, status and characters, the hits (lines numbered on
    from the first part), the words, their lines and rows, each new word spelled once."""
    scanner = Scanner.open(project / ".contam-guard")
    scanner.expect(1 << 40)
    prefilter = scanner.prefilter
    lines = prefilter_module.line_format("jsonl", ReadOptions(fields=fields))
    assert prefilter is not None and lines is not None
    data = (project / "train.jsonl").read_bytes()
    block = data[: data.rfind(b"\n", 0, 60_000) + 1]
    prefilter.filter(block, lines)  # the code points never seen before are classified once
    whole = prefilter.filter(block, lines)
    prefilter.threads.count = 2
    assert (
        whole.words is not None and whole.words.new_words and (whole.status == prefilter_module.EXACT).any()
    )
    for size in (3_000, 17_000, len(block)):  # parts of every shape, the cut at other lines
        part = block[: block.rfind(b"\n", 0, size) + 1]
        with pytest.MonkeyPatch.context() as m:
            m.setattr(prefilter_module, "SPLIT_BYTES", 1)
            assert prefilter._cut(part, lines) > 0  # the block is cut
            split = prefilter.filter(part, lines)
        prefilter.threads.count = 1
        one = prefilter.filter(part, lines)
        prefilter.threads.count = 2
        for name in ("end", "status", "chars"):
            assert np.array_equal(getattr(split, name), getattr(one, name)), name
        for hits in ("grams", "windows"):
            for field in ("record", "at", "posting"):
                got, want = getattr(getattr(split, hits), field), getattr(getattr(one, hits), field)
                assert np.array_equal(got, want), (hits, field)
        assert split.words is not None and one.words is not None
        for name in one.words.__dataclass_fields__:
            got, want = getattr(split.words, name), getattr(one.words, name)
            assert (got == want) if isinstance(want, tuple) else np.array_equal(got, want), name
    assert one.grams.record.size > 0 and one.windows.record.size > 0  # the block does hit
    # A first line longer than half the block: nowhere to cut before the middle, filtered whole.
    long_first = b'{"text": "' + b"river bank " * 4_000 + b'"}\n' + block[:3_000]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(prefilter_module, "SPLIT_BYTES", 1)
        assert prefilter._cut(long_first, lines) == 0
