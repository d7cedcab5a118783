"""Which rule finds a copy after each small edit that breaks word runs, at the default settings.

Each edit (``EDITS``) is applied to the 100 GSM8K test questions of the development set
(``tests/data/rewordings/number_changed.jsonl`` names them), the copies are scanned with the
command line against GSM8K test, and the share each rule finds on its own item is compared with
the table recorded here (``TABLE``, in percent). The table is a measurement, not a goal: a change
to a rule or to normalisation that moves a share must update it (and say so in README's "What
the rules catch"). Reads ../shared/data/gsm8k (skips with a reason elsewhere).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from contam_guard.cli import main
from tests.helpers import GSM8K

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "tests" / "data" / "rewordings"
RULES = ("gpt3", "palm", "llama2", "gpt4", "numbers", "reworded")
pytestmark = [
    pytest.mark.gsm8k,
    pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}"),
]
FILLERS = ("um", "basically", "like", "actually", "well", "so", "literally", "you know")


def _every(words: list[str], rng: random.Random, low: int, high: int) -> Iterator[int]:
    """Positions ``low``..``high`` words apart, the first one as far in."""
    at = rng.randint(low, high)
    while at < len(words):
        yield at
        at += rng.randint(low, high)


def filler(text: str, rng: random.Random) -> str:
    words = text.split()
    for at in sorted(_every(words, rng, 6, 10), reverse=True):
        words.insert(at, rng.choice(FILLERS))
    return " ".join(words)


def deletion(text: str, rng: random.Random) -> str:
    words = text.split()
    gone = set(_every(words, rng, 7, 12))
    return " ".join(w for k, w in enumerate(words) if k not in gone)


def html_entities(text: str, rng: random.Random) -> str:
    words = text.split()
    out = []
    for k, word in enumerate(words):
        out.append(word.replace("e", "&#101;") if k % 3 == 0 else word)
    return "&nbsp;".join(out)


def html_span(text: str, rng: random.Random) -> str:
    return "<span>".join(text.split())


def markdown_links(text: str, rng: random.Random) -> str:
    words = text.split()
    for at in range(8, len(words), 9):
        words[at] = f"[{words[at]}](https://example.com/{at})"
    return " ".join(words)


def glued_punctuation(text: str, rng: random.Random) -> str:
    return re.sub(r"([,.;:!?])\s+", r"\1", text)


def letter_spacing(text: str, rng: random.Random) -> str:
    return "   ".join(" ".join(word) for word in text.split())


def underscores(text: str, rng: random.Random) -> str:
    return "_".join(text.split())


def camel_case(text: str, rng: random.Random) -> str:
    words = text.split()
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])


EDITS: dict[str, Callable[[str, random.Random], str]] = {
    "filler word every 6-10 words": filler,
    "every 7th-12th word deleted": deletion,
    "HTML entities (&nbsp; between words, &#101; for e)": html_entities,
    "<span> between words": html_span,
    "Markdown link around every 9th word": markdown_links,
    "punctuation glued to the next word": glued_punctuation,
    "letters spaced out": letter_spacing,
    "underscores for spaces": underscores,
    "camelCase for spaces": camel_case,
}

TABLE: dict[str, tuple[int, ...]] = {
    # edit: percent found by gpt3, palm, llama2, gpt4, numbers, reworded (default settings)
    "filler word every 6-10 words": (0, 0, 1, 12, 0, 100),
    "every 7th-12th word deleted": (0, 0, 3, 23, 1, 100),
    # normalisation spec 4 reads the markup as its reader sees it: every copy is its item again
    "HTML entities (&nbsp; between words, &#101; for e)": (100, 100, 100, 100, 100, 100),
    "<span> between words": (100, 100, 100, 100, 100, 100),
    "Markdown link around every 9th word": (100, 100, 100, 100, 100, 100),
    "punctuation glued to the next word": (52, 0, 10, 100, 51, 100),
    "letters spaced out": (0, 0, 0, 100, 0, 0),
    "underscores for spaces": (0, 0, 0, 100, 0, 0),
    "camelCase for spaces": (0, 0, 0, 0, 0, 0),  # every word glued into one: nothing is found
}


def run(*args: str) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return int(exit_info.value.code or 0)


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    before, old_key = Path.cwd(), os.environ.pop("CONTAM_GUARD_KEY", None)
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)
        if old_key is not None:
            os.environ["CONTAM_GUARD_KEY"] = old_key


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, ...]]:
    """Per edit: the percent of the 100 edited copies each rule finds on its own item."""
    root = tmp_path_factory.mktemp("edits")
    test = [
        json.loads(line)["question"]
        for line in (GSM8K / "test.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    picked = [
        json.loads(line)["test_index"]
        for line in (DEV / "number_changed.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    out: dict[str, tuple[int, ...]] = {}
    with inside(root):
        assert run("init") == 0
        (root / "golden.jsonl").write_bytes((GSM8K / "test.jsonl").read_bytes())
        assert run("register", "gsm8k", "golden.jsonl", "--field", "question") == 0
        for number, (name, edit) in enumerate(EDITS.items()):
            copies = root / f"edit{number}.jsonl"
            with copies.open("w", encoding="utf-8") as handle:
                for index in picked:
                    edited = edit(test[index], random.Random(index))
                    handle.write(json.dumps({"question": edited}) + "\n")
            assert run("scan", copies.name, "--review-json", f"{copies.name}.json", "--exit-zero") == 0
            review = json.loads((root / f"{copies.name}.json").read_text(encoding="utf-8"))
            found = {
                (f["rule"], f["test_index"], p["record"])
                for f in review["findings"]
                if f["set"] == "gsm8k"
                for p in f["pairs"]
            }
            out[name] = tuple(
                round(100 * sum((rule, index, k) in found for k, index in enumerate(picked)) / len(picked))
                for rule in RULES
            )
    return out


@pytest.mark.parametrize("edit", list(EDITS))
def test_share_each_rule_finds(edit: str, measured: dict[str, tuple[int, ...]]) -> None:
    assert measured[edit] == TABLE[edit], dict(zip(RULES, measured[edit]))


def test_the_edits_change_every_copy() -> None:
    text = "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes."
    for name, edit in EDITS.items():
        assert edit(text, random.Random(0)) != text, name
