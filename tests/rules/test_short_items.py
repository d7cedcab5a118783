"""Short items: GPT-3's N per set and view (``n: auto``, the default) and the ``whole`` rule.

Truth tables, each row a tiny commented set or corpus run through the engine, as in
``test_rules_truth_tables.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from contam_guard.core.config import Config, with_rule_overrides
from contam_guard.core.match.index import ManifestIndex, Target
from contam_guard.core.match.matcher import ItemTotals, match_batch
from contam_guard.core.match.stats import ItemStats, item_stats
from contam_guard.core.register.views import hash_view
from contam_guard.core.rules import RULES, gpt3, whole
from contam_guard.core.spec.features import extract_features
from contam_guard.core.verdicts import evaluate
from contam_guard.io.manifest.templates import TemplateSettings
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from tests.helpers import GSM8K, scan


def words(count: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(count))


def index_of(*views: tuple[str, list[str]], n: int | None = None) -> ManifestIndex:
    """One set ``s`` with one view per ``(field, items)`` (every view the same item count)."""
    targets, hashed, first = [], [], 0
    for field, items in views:
        ids = [str(k) for k in range(len(items))]
        targets.append(Target("s", field, 1, ids, np.arange(len(items)), first, n))
        hashed.append(hash_view(field, items, None))
        first += len(items)
    return ManifestIndex.from_views(targets, hashed)


def scanned(index: ManifestIndex, records: list[str]) -> ItemStats:
    totals = ItemTotals.empty(index)
    match_batch(index, extract_features(records), totals)
    return item_stats(index, totals)


def fired(name: str, index: ManifestIndex, stats: ItemStats, **settings: object) -> list[bool]:
    rule = RULES[name]
    return [bool(f) for f in rule.evaluate(stats, rule.settings(**settings), index).fired]


# --- GPT-3's N: auto --------------------------------------------------------------------------

# (comment, item lengths in words, N): the 5th-percentile length by nearest rank (the
# ceil(5% of the items)-th shortest), clipped to 8..13.
AUTO_N = [
    ("20 items of 9 words: the 5th percentile is 9", [9] * 20, 9),
    ("9-12-word items (ARC, TriviaQA style): 1st rank of 20", [9] + [10, 11, 12] * 6 + [12], 9),
    ("20 items of 12 words", [12] * 20, 12),
    ("20 items of 5 words: GPT-3's floor of 8", [5] * 20, 8),
    ("40 items, 2 of 6 words: the 2nd shortest is 6, so 8", [6, 6] + [30] * 38, 8),
    ("40 items, 1 of 6 words: the 2nd shortest is 30, so 13", [6] + [30] * 39, 13),
    ("20 items of 30 words: the ceiling of 13", [30] * 20, 13),
    ("empty items (a field missing) are no examples", [0] * 5 + [10] * 15, 10),
    ("every item empty: the ceiling", [0] * 4, 13),
]


@pytest.mark.parametrize(("comment", "lengths", "n"), AUTO_N, ids=[row[0] for row in AUTO_N])
def test_auto_n_per_set(comment: str, lengths: list[int], n: int) -> None:
    index = index_of(("text", [words(k) for k in lengths]))
    assert gpt3.thresholds(index, gpt3.Settings()).tolist() == [n] * len(lengths), comment


def test_auto_is_the_default_and_a_number_or_a_sets_own_n_still_wins() -> None:
    nine = [words(9)] * 20
    assert gpt3.Settings().n == "auto"
    assert gpt3.thresholds(index_of(("text", nine)), gpt3.Settings()).tolist() == [9] * 20
    assert gpt3.thresholds(index_of(("text", nine)), gpt3.Settings(n=13)).tolist() == [13] * 20
    assert gpt3.thresholds(index_of(("text", nine), n=11), gpt3.Settings()).tolist() == [11] * 20


def test_auto_n_is_per_view() -> None:
    """A set's question view of 9-word items and answer view of 30-word ones: N 9 and 13."""
    index = index_of(("question", [words(9)] * 20), ("answer", [words(30)] * 20))
    assert gpt3.thresholds(index, gpt3.Settings()).tolist() == [9] * 20 + [13] * 20


# (comment, item lengths of the set, the record, gpt3 fires on item 0 at auto, at n = 13)
AUTO_FIRES = [
    ("a 9-word set, item 0 copied: N = 9", [9] * 20, words(9), True, False),
    ("a 9-word set, 8 of item 0's words: under N = 9", [9] * 20, words(8), False, False),
    ("a 12-word set, a 12-word run: N = 12", [12] * 20, "so " + words(12) + " then", True, False),
    ("a 5-word set: N = 8, more than its items' words", [5] * 20, words(5), False, False),
]


@pytest.mark.parametrize(
    ("comment", "lengths", "record", "auto", "at13"), AUTO_FIRES, ids=[r[0] for r in AUTO_FIRES]
)
def test_gpt3_at_auto_n(comment: str, lengths: list[int], record: str, auto: bool, at13: bool) -> None:
    # item 0 is w0 w1 ...; the others share no 5 words with it
    items = [words(lengths[0])] + [words(k, f"x{j}x") for j, k in enumerate(lengths[1:])]
    index = index_of(("text", items))
    stats = scanned(index, [record])
    assert fired("gpt3", index, stats)[0] is auto, comment
    assert fired("gpt3", index, stats, n=13)[0] is at13, comment


@pytest.mark.gsm8k
@pytest.mark.skipif(not (GSM8K / "test.jsonl").is_file(), reason=f"GSM8K not found at {GSM8K}")
def test_gsm8k_questions_get_n_13_under_auto() -> None:
    """The seed article: GSM8K's 5th-percentile test question is 24 words, so N clips to 13."""
    lines = (GSM8K / "test.jsonl").read_text(encoding="utf-8").splitlines()
    index = index_of(("question", [json.loads(line)["question"] for line in lines]))
    assert index.items == 1319
    assert int(np.sort(index.word_counts)[int(np.ceil(0.05 * 1319)) - 1]) == 24
    assert set(gpt3.thresholds(index, gpt3.Settings()).tolist()) == {13}
    assert int(index.word_counts.min()) == 15  # so the whole rule never reaches under N here


# --- whole: the whole item in one string --------------------------------------------------------

CHAT = "quick question for you {} thanks a lot"

# (comment, item, records, whole fires, whole sees the item, gpt3 fires at n = 13)
WHOLE = [
    ("5 words, copied into a chat message", words(5), [CHAT.format(words(5))], True, True, False),
    ("6 words, copied", words(6), [CHAT.format(words(6))], True, True, False),
    ("9 words, copied", words(9), [CHAT.format(words(9))], True, True, False),
    ("12 words, copied", words(12), [CHAT.format(words(12))], True, True, False),
    ("12 words, alone in the record", words(12), [words(12)], True, True, False),
    ("30 words, copied: gpt3 fires too", words(30), [CHAT.format(words(30))], True, True, True),
    ("4 words, copied: not measurable (no 5-gram)", words(4), [CHAT.format(words(4))], False, False, False),
    (
        "12 words, one changed in the middle: two runs of 6 and 5",
        words(12),
        [CHAT.format(words(12).replace("w6", "changed"))],
        False,
        True,
        False,
    ),
    ("12 words, the last one missing: a run of 11", words(12), [CHAT.format(words(11))], False, True, False),
    (
        "12 words split across two records: runs of 6 each",
        words(12),
        [words(12)[: words(12).index(" w6")], words(12)[words(12).index("w6") :]],
        False,
        True,
        False,
    ),
    ("9 words in another order", words(9), [" ".join(reversed(words(9).split()))], False, True, False),
    # the worked example of whole.py's docstring
    (
        "11-word question in a chat message",
        "Which gas do green plants release into the air during photosynthesis",
        ["Quick one: which gas do green plants release into the air during photosynthesis? Thanks!"],
        True,
        True,
        False,
    ),
    (
        "the same with 'release' changed to 'give off': runs of 5",
        "Which gas do green plants release into the air during photosynthesis",
        ["Quick one: which gas do green plants give off into the air during photosynthesis? Thanks!"],
        False,
        True,
        False,
    ),
]


@pytest.mark.parametrize(
    ("comment", "item", "records", "fires", "sees", "g3"), WHOLE, ids=[row[0] for row in WHOLE]
)
def test_whole_item_truth_table(
    comment: str, item: str, records: list[str], fires: bool, sees: bool, g3: bool
) -> None:
    index = index_of(("text", [item]))
    stats = scanned(index, records)
    assert fired("whole", index, stats) == [fires], comment
    assert whole.RULE.sees(index, whole.Settings()).tolist() == [sees], comment
    assert fired("gpt3", index, stats, n=13) == [g3], comment


def test_whole_is_decided_per_pair_with_its_own_wording() -> None:
    index = index_of(("text", [words(9)]))
    stats = scanned(index, [CHAT.format(words(9)), words(8)])
    outcome = whole.evaluate(stats, whole.Settings(), index)
    assert whole.RULE.per_pair and outcome.pair_bar is not None and outcome.pair_bar.tolist() == [9]
    assert whole.RULE.pair_detail(9, 9) == "the whole item (9 words) found verbatim in one string"


def test_whole_min_words_raises_the_floor_never_lowers_it() -> None:
    index = index_of(("text", [words(9)]))
    stats = scanned(index, [words(9)])
    assert fired("whole", index, stats, min_words=10) == [False]
    assert fired("whole", index, stats, min_words=9) == [True]
    with pytest.raises(ValueError, match="greater than or equal to 5"):
        whole.Settings(min_words=4)


def test_whole_item_with_a_template_header() -> None:
    """Six items open with the same 9-word header (template: every item holds it). A copy of
    a whole item shares the run left when the header is trimmed: its 6 own words."""
    header = "answer the following question about the natural sciences please"
    bodies = [words(6, f"q{k}x") for k in range(6)]
    view = hash_view("text", [f"{header} {body}" for body in bodies], None, templates=TemplateSettings())
    index = ManifestIndex.from_views([Target("s", "text", 1, list("abcdef"), np.arange(6), 0)], [view])
    assert index.whole_runs.tolist() == [6] * 6
    stats = scanned(index, [f"{header} {bodies[2]}", header])
    assert fired("whole", index, stats) == [False, False, True, False, False, False]


@pytest.mark.parametrize(
    ("gpt3_settings", "expected"),
    [
        # the 30-word copy is GPT-3's failing finding; the 9-word one is under N = 13: whole's
        ({"n": 13}, {("gpt3", "fail", 1), ("whole", "fail", 0)}),
        # auto: the set's N is 9 (its shorter item), so GPT-3 fails both copies itself
        ({}, {("gpt3", "fail", 0), ("gpt3", "fail", 1)}),
        # GPT-3 only warns, or is off: every whole copy fails here
        ({"n": 13, "action": "warn"}, {("gpt3", "warn", 1), ("whole", "fail", 0), ("whole", "fail", 1)}),
        ({"enabled": False}, {("whole", "fail", 0), ("whole", "fail", 1)}),
    ],
)
def test_whole_reports_the_copies_gpt3_does_not_fail(
    tmp_path: Path, gpt3_settings: dict[str, object], expected: set[tuple[str, str, int]]
) -> None:
    index = index_of(("text", [words(9), words(30, "y")]))
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps({"text": CHAT.format(t)}) + "\n" for t in (words(9), words(30, "y"))))
    result = scan(index, [Source(train, "train")], ReadOptions())
    rules = with_rule_overrides(Config(), {"gpt3": gpt3_settings, "whole": {}}).rules
    report = evaluate(result, rules)
    got = {(f.rule, f.action, f.item) for f in report.findings if f.rule in ("gpt3", "whole")}
    assert got == expected
    assert report.return_code == 1
