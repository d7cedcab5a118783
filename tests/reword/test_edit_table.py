"""Which rule finds a copy after each small edit that breaks word runs, at each setting.

Each edit (``EDITS``) is applied to the 100 GSM8K test questions of the development set
(``tests/data/rewordings/number_changed.jsonl`` names them), the copies are scanned with the
command line against GSM8K test at three settings (``SETTINGS``: the defaults, Llama 2's
skip-gram budget on, the gapped rule on), and the share each rule finds on its own item is
compared with the table recorded here (``TABLE``, in percent), as are the false hits: the share
of GSM8K's 7,473 train questions each rule names at each setting (``TRAIN``). The tables are
measurements, not goals: a change to a rule or to normalisation that moves a share must update
them (and say so in README's "What the rules catch"). ``CAUGHT`` says which rule catches each
edit at which setting, failing or warning; the test checks it finds at least ``CAUGHT_SHARE``.

Print the tables: ``python -m tests.reword.test_edit_table`` (from the repository's root).
Reads ../shared/data/gsm8k (skips with a reason elsewhere).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from contam_guard.cli import main
from tests.helpers import GSM8K

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "tests" / "data" / "rewordings"
RULES = ("gpt3", "gapped", "palm", "llama2", "gpt4", "numbers", "reworded")
SETTINGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "skip-gram": ("--skip-budget", "4"),  # Llama 2's skip-gram budget
    "gapped": ("--gaps", "2"),  # the gapped rule on, at its default: 2 edited words per 8
}
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

TABLE: dict[str, dict[str, tuple[int, ...]]] = {
    # setting: {edit: percent found by gpt3, gapped, palm, llama2, gpt4, numbers, reworded}
    "default": {
        "filler word every 6-10 words": (0, 0, 0, 1, 12, 0, 100),
        "every 7th-12th word deleted": (0, 0, 0, 3, 23, 1, 100),
        "HTML entities (&nbsp; between words, &#101; for e)": (100, 0, 100, 100, 100, 100, 100),
        "<span> between words": (100, 0, 100, 100, 100, 100, 100),
        "Markdown link around every 9th word": (100, 0, 100, 100, 100, 100, 100),
        "punctuation glued to the next word": (52, 0, 0, 10, 100, 51, 100),
        "letters spaced out": (0, 0, 0, 0, 100, 0, 0),
        "underscores for spaces": (0, 0, 0, 0, 100, 0, 5),
        "camelCase for spaces": (100, 0, 96, 98, 0, 100, 100),
    },
    "skip-gram": {
        "filler word every 6-10 words": (0, 0, 0, 99, 12, 0, 100),
        "every 7th-12th word deleted": (0, 0, 0, 99, 23, 1, 100),
        "HTML entities (&nbsp; between words, &#101; for e)": (100, 0, 100, 100, 100, 100, 100),
        "<span> between words": (100, 0, 100, 100, 100, 100, 100),
        "Markdown link around every 9th word": (100, 0, 100, 100, 100, 100, 100),
        "punctuation glued to the next word": (52, 0, 0, 67, 100, 51, 100),
        "letters spaced out": (0, 0, 0, 0, 100, 0, 0),
        "underscores for spaces": (0, 0, 0, 0, 100, 0, 5),
        "camelCase for spaces": (100, 0, 96, 100, 0, 100, 100),
    },
    "gapped": {
        "filler word every 6-10 words": (0, 100, 0, 1, 12, 0, 100),
        "every 7th-12th word deleted": (0, 100, 0, 3, 23, 1, 100),
        "HTML entities (&nbsp; between words, &#101; for e)": (100, 100, 100, 100, 100, 100, 100),
        "<span> between words": (100, 100, 100, 100, 100, 100, 100),
        "Markdown link around every 9th word": (100, 100, 100, 100, 100, 100, 100),
        "punctuation glued to the next word": (52, 92, 0, 10, 100, 51, 100),
        "letters spaced out": (0, 0, 0, 0, 100, 0, 0),
        "underscores for spaces": (0, 0, 0, 0, 100, 0, 5),
        "camelCase for spaces": (100, 100, 96, 98, 0, 100, 100),
    },
}
TRAIN: dict[str, tuple[float, ...]] = {
    # setting: percent of GSM8K train questions each rule names (gpt3, gapped, ...), test registered
    "default": (0.05, 0.0, 0.0, 0.0, 0.08, 0.11, 0.87),
    "skip-gram": (0.05, 0.0, 0.0, 0.0, 0.08, 0.11, 0.87),
    "gapped": (0.05, 0.12, 0.0, 0.0, 0.08, 0.11, 0.87),
}
CAUGHT: dict[str, tuple[tuple[str, str, str], ...]] = {
    # edit: (setting, rule, its action there), each catching the edit; a failing one listed last
    "filler word every 6-10 words": (
        ("default", "reworded", "warn"),
        ("skip-gram", "llama2", "warn"),
        ("gapped", "gapped", "fail"),
    ),
    "every 7th-12th word deleted": (
        ("default", "reworded", "warn"),
        ("skip-gram", "llama2", "warn"),
        ("gapped", "gapped", "fail"),
    ),
    "HTML entities (&nbsp; between words, &#101; for e)": (("default", "gpt3", "fail"),),
    "<span> between words": (("default", "gpt3", "fail"),),
    "Markdown link around every 9th word": (("default", "gpt3", "fail"),),
    "punctuation glued to the next word": (
        ("default", "gpt4", "warn"),
        ("default", "reworded", "warn"),
        ("gapped", "gapped", "fail"),
    ),
    # GPT-4's character rule; ``--fail-on gpt4`` (``gpt4: {action: fail}``) makes them fail
    "letters spaced out": (("default", "gpt4", "warn"),),
    "underscores for spaces": (("default", "gpt4", "warn"),),
    # read a second time with the capitals as word boundaries (``core.spec.glued``): the item's runs
    "camelCase for spaces": (("default", "gpt3", "fail"),),
}
CAUGHT_SHARE = 90
"""The share of the edited copies (percent) a rule must find to catch the edit."""
NOT_CAUGHT: dict[str, str] = {}
"""Edits no rule catches at any setting, and why (none left: camelCase, the last one, is read a
second time with its capitals as word boundaries since decision E6)."""


@dataclass(frozen=True)
class Measured:
    shares: dict[str, dict[str, tuple[int, ...]]]
    """setting: edit: percent of the copies each rule (``RULES``) finds on its own item."""
    train: dict[str, tuple[float, ...]]
    """setting: percent of GSM8K train questions each rule names."""


def run(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as exit_info:
        return int(exit_info.code or 0)
    return 0


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


def _findings(root: Path, name: str, *args: str) -> set[tuple[str, int, int]]:
    """(rule, test index, record) of every pair the scan's findings name."""
    assert (
        run("scan", *args, "--review-json", f"{name}.json", "--max-pairs-per-item", "0", "--exit-zero") == 0
    )
    review = json.loads((root / f"{name}.json").read_text(encoding="utf-8"))
    return {
        (f["rule"], f["test_index"], p["record"])
        for f in review["findings"]
        if f["set"] == "gsm8k"
        for p in f["pairs"]
    }


def measure(root: Path) -> Measured:
    """Scan every edit's copies and GSM8K train at every setting, in ``root``."""
    test = [
        json.loads(line)["question"]
        for line in (GSM8K / "test.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    picked = [
        json.loads(line)["test_index"]
        for line in (DEV / "number_changed.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    shares: dict[str, dict[str, tuple[int, ...]]] = {}
    train: dict[str, tuple[float, ...]] = {}
    questions = len((GSM8K / "train.jsonl").read_text(encoding="utf-8").splitlines())
    with inside(root):
        assert run("init") == 0
        (root / "golden.jsonl").write_bytes((GSM8K / "test.jsonl").read_bytes())
        assert run("register", "gsm8k", "golden.jsonl", "--field", "question") == 0
        for number, edit in enumerate(EDITS.values()):
            with (root / f"edit{number}.jsonl").open("w", encoding="utf-8") as handle:
                for index in picked:
                    handle.write(json.dumps({"question": edit(test[index], random.Random(index))}) + "\n")
        for setting, options in SETTINGS.items():
            shares[setting] = {}
            for number, name in enumerate(EDITS):
                found = _findings(root, f"{setting}-edit{number}", f"edit{number}.jsonl", *options)
                shares[setting][name] = tuple(
                    round(
                        100 * sum((rule, index, k) in found for k, index in enumerate(picked)) / len(picked)
                    )
                    for rule in RULES
                )
            found = _findings(
                root, f"{setting}-train", str(GSM8K / "train.jsonl"), "--field", "question", *options
            )
            train[setting] = tuple(
                round(100 * len({record for r, _, record in found if r == rule}) / questions, 2)
                for rule in RULES
            )
    return Measured(shares, train)


def markdown(measured: Measured) -> str:
    """The tables as README and the decision records show them."""
    lines = [f"| edit | setting | {' | '.join(RULES)} |", "| --- | --- |" + " --- |" * len(RULES)]
    for name in EDITS:
        for setting in SETTINGS:
            row: tuple[float, ...] = measured.shares[setting][name]
            lines.append(f"| {name} | {setting} | " + " | ".join(f"{v}%" for v in row) + " |")
    for setting in SETTINGS:
        row = measured.train[setting]
        lines.append(
            f"| GSM8K train questions named (false hits) | {setting} | "
            + " | ".join(f"{v}%" for v in row)
            + " |"
        )
    return "\n".join(lines)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    return measure(tmp_path_factory.mktemp("edits"))


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("edit", list(EDITS))
def test_share_each_rule_finds(edit: str, setting: str, measured: Measured) -> None:
    got = measured.shares[setting][edit]
    assert got == TABLE[setting][edit], dict(zip(RULES, got))


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_false_hits_on_gsm8k_train(setting: str, measured: Measured) -> None:
    got = measured.train[setting]
    assert got == TRAIN[setting], dict(zip(RULES, got))


@pytest.mark.parametrize("edit", [e for e in EDITS if e not in NOT_CAUGHT])
def test_each_edit_is_caught_at_its_documented_setting(edit: str, measured: Measured) -> None:
    for setting, rule, action in CAUGHT[edit]:
        assert measured.shares[setting][edit][RULES.index(rule)] >= CAUGHT_SHARE, (setting, rule)
        options = dict(zip(SETTINGS[setting][::2], SETTINGS[setting][1::2]))
        assert _action(rule, options) == action, (setting, rule)


def test_the_edits_not_caught_are_not_caught(measured: Measured) -> None:
    """A known gap stays documented: when a rule starts catching one, move it to ``CAUGHT``."""
    for edit in NOT_CAUGHT:
        for setting in SETTINGS:
            assert max(measured.shares[setting][edit]) < CAUGHT_SHARE, (edit, setting)


def _action(rule: str, options: dict[str, str]) -> str:
    """The rule's action in the default config with the command line's options."""
    from contam_guard.cli.options import Rules as RuleOptions  # noqa: PLC0415
    from contam_guard.core.config import Config, with_rule_overrides  # noqa: PLC0415

    flags = RuleOptions(
        skip_budget=int(options.get("--skip-budget", 0)) or None, gaps=int(options.get("--gaps", 0)) or None
    )
    rules = with_rule_overrides(Config(), flags.overrides()).rules
    settings = rules.of(rule)
    assert settings.enabled, rule
    return str(settings.action)


def test_the_edits_change_every_copy() -> None:
    text = "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes."
    for name, edit in EDITS.items():
        assert edit(text, random.Random(0)) != text, name


if __name__ == "__main__":
    import contextlib
    import io
    import tempfile

    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
        measured_here = measure(Path(folder))
    print(markdown(measured_here))
