"""Lines as units (the reworded rule on multiple choice): a string of several lines is scored
whole, line by line, and without its first line, and each item keeps the best of them.

The compiled pass and numpy give the same pairs and scores, bit for bit, with the line breaks
(keyed and not); the breaks the prefilter reports are the exact path's; and through the command
line, a question and its reworded choices in one string are found on their own item, where the
whole string's score alone stays under the threshold (before: not found).
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

import contam_guard.engines.local as local_engine
from contam_guard import Scanner
from contam_guard.cli import main
from contam_guard.core.families.reword import line_breaks
from contam_guard.core.result import ScanResult
from contam_guard.core.reword.stage import (
    CompiledStage,
    NumpyStage,
    StageResult,
    has_compiled_stage,
    line_units,
)
from contam_guard.core.reword.vocab import spell
from contam_guard.core.spec import native
from contam_guard.core.spec.features import extract_features
from contam_guard.core.spec.normalise import CURRENT
from contam_guard.engines.local import scan_sources
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.sources import Source
from tests.helpers import Runner, write_jsonl
from tests.reword.test_stage import project, text, triples

DEV = Path(__file__).resolve().parents[1] / "data" / "rewordings"
QUESTION = "Which sociologist argued that the Protestant ethic encouraged the growth of capitalism?"
CHOICES = ["Max Weber", "Karl Marx", "Emile Durkheim", "Herbert Spencer"]


def test_line_units_are_each_line_and_the_rest() -> None:
    # unit 0: words 0-2, lines [0] [1 2]; unit 1: words 3-7, lines [3 4] [5 6] [7];
    # unit 2: empty; unit 3: words 8-11, a break on its first word (ignored), lines [8 9] [10 11]
    first = np.array([0, 3, 8, 8, 12], dtype=np.int64)
    breaks = np.array([0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0], dtype=np.uint8)
    words, line_first, owner = line_units(first, breaks)
    got = [words[a:b].tolist() for a, b in itertools.pairwise(line_first)]
    assert sorted(zip(owner.tolist(), got)) == sorted(
        [(0, [0]), (0, [1, 2]), (0, [1, 2]), (1, [3, 4]), (1, [5, 6]), (1, [7]), (1, [5, 6, 7]),
         (3, [8, 9]), (3, [10, 11]), (3, [10, 11])]
    )  # fmt: skip
    # no line breaks: no extra units
    words, line_first, owner = line_units(first, np.zeros(12, dtype=np.uint8))
    assert words.size == owner.size == 0 and line_first.tolist() == [0]


def test_line_breaks_follow_the_newlines_between_words() -> None:
    texts = ["one two\nthree\n\n four five", "no newline here", "a\nb"]
    words = extract_features(texts, windows=False)
    assert line_breaks(texts, words).tolist() == [0, 0, 1, 1, 0, 0, 0, 0, 0, 1]


def _multiline(rng: random.Random) -> str:
    return "\n".join(text(rng, 1, 14) for _ in range(rng.randint(1, 6)))


def _run(stage: NumpyStage | CompiledStage, texts: list[str], with_breaks: bool) -> StageResult:
    words = extract_features(texts, windows=False)
    stage.add(spell(texts, words, stage.missing(words.word_hash), CURRENT))
    breaks = line_breaks(texts, words) if with_breaks else None
    return stage.run(words.word_hash, words.record_words, numbers=False, breaks=breaks)


@pytest.mark.skipif(not has_compiled_stage(), reason="the compiled kernels are not built")
@pytest.mark.parametrize("keyed", [False, True])
def test_compiled_and_numpy_agree_on_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyed: bool
) -> None:
    rng = random.Random(7 + keyed)
    golden = [text(rng, 3, 12) for _ in range(50)]
    index, key = project(tmp_path, keyed, monkeypatch, golden)
    compiled = CompiledStage(index, key, numbers=False, floor=0.2)  # type: ignore[arg-type]
    numpy_stage = NumpyStage(index, key, numbers=False, floor=0.2)  # type: ignore[arg-type]
    texts = [_multiline(rng) for _ in range(150)] + [g + "\n" + text(rng, 30, 60) for g in golden[:20]]
    texts += ["\n".join(text(rng, 20, 40) for _ in range(5))]  # lines of several windows' worth
    with_lines = triples(_run(compiled, texts, True))
    assert with_lines == triples(_run(numpy_stage, texts, True))
    without = triples(_run(compiled, texts, False))
    assert without == triples(_run(numpy_stage, texts, False))
    # the lines find more (an item on a line of its own, after a long line of other words)
    assert set(with_lines[1]) != set(without[1])
    best_with = {(u, i): s for u, i, s in with_lines[1]}
    assert all(best_with[(u, i)] >= s for u, i, s in without[1])


def test_a_question_and_its_choices_in_one_string_are_found(
    cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before (each string one unit): the record's score stays under 0.32 and nothing is found;
    after: the stem's line reaches it (a warning: exit 0)."""
    monkeypatch.chdir(tmp_path)
    assert cli("init").code == 0
    golden = write_jsonl(
        tmp_path / "golden.jsonl",
        [
            {"question": QUESTION, "choices": "\n".join(CHOICES)},
            {"question": "What term describes the movement of individuals between social classes?",
             "choices": "Social mobility\nSocial closure\nCaste\nMeritocracy"},
        ],
    )  # fmt: skip
    assert cli("register", "mc", golden, "--field", "question", "--field", "choices").code == 0
    record = (
        "Which thinker claimed that the Protestant ethic encouraged the rise of capitalism?\n"
        "A. Karl Marx, who wrote on class struggle and the ownership of the means of production\n"
        "B. Max Weber, author of studies on bureaucracy, authority and the spirit of modern economies\n"
        "C. Herbert Spencer, who applied evolutionary ideas to whole societies and their growth\n"
        "D. Emile Durkheim, who examined solidarity, the division of labour and religious life"
    )
    write_jsonl(tmp_path / "train.jsonl", [{"text": record}])
    one_line = write_jsonl(tmp_path / "flat.jsonl", [{"text": record.replace("\n", " ")}])
    flat = cli("scan", one_line, "--review-json", "flat.json")
    assert flat.code == 0, flat.output
    assert not [f for f in json.loads(Path("flat.json").read_text())["findings"] if f["rule"] == "reworded"]
    result = cli("scan", "train.jsonl", "--review-json", "review.json")
    assert result.code == 0, result.output
    found = [f for f in json.loads(Path("review.json").read_text())["findings"] if f["rule"] == "reworded"]
    assert [(f["test_index"], f["view"]) for f in found] == [(0, "question")]


@pytest.mark.skipif(not native.has_prefilter(), reason="the compiled kernels are not built")
def test_the_prefilters_line_breaks_are_the_exact_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled prefilter's words (with their line breaks) give the scores the exact path
    gives, on records whose reworded questions stand on a line among long lines of other text."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    golden = [
        json.loads(line)["question"] for line in (DEV / "number_changed.jsonl").read_text().splitlines()
    ]
    write_jsonl(tmp_path / "golden.jsonl", [{"question": q} for q in golden])
    for args in (["init"], ["register", "gold", "golden.jsonl", "--field", "question"]):
        with pytest.raises(SystemExit) as done:
            main(args)
        assert not done.value.code
    rng = random.Random(3)
    filler = [
        "the",
        "river",
        "bank",
        "holds",
        "pages",
        "of",
        "notes",
        "about",
        "coins",
        "trains",
        "and",
        "gardens",
        "in",
        "spring",
    ]
    rows = []
    for k, other in enumerate(golden):
        noise = [" ".join(rng.choice(filler) for _ in range(rng.randint(40, 70))) for _ in range(2)]
        lines = [noise[0], other, noise[1]] if k % 2 else [other, "\r\n".join(noise)]
        rows.append({"text": "\n".join(lines), "tag": "a\nb c"})
    write_jsonl(tmp_path / "train.jsonl", rows)

    def scanned() -> ScanResult:
        scanner = Scanner.open(tmp_path / ".contam-guard")
        scanner.expect(1 << 40)  # a large scan: the prefilter and the compiled pass
        acc = scan_sources(scanner, [Source(tmp_path / "train.jsonl", "train.jsonl")], ReadOptions())
        return scanner.finish(acc).result  # type: ignore[no-any-return]

    filtered = scanned()
    with monkeypatch.context() as m:
        m.setattr(local_engine, "line_format", lambda fmt, options: None)
        exact = scanned()
    assert filtered.reword is not None and exact.reword is not None
    assert np.array_equal(filtered.reword.reworded, exact.reword.reworded)
    assert filtered.pairs == exact.pairs
    assert (exact.reword.reworded >= 0.32).sum() >= 90  # found on their lines (before: 0)
