"""``--max-pairs-per-item``: at most N pairs listed per item, everything else counted exactly.

The store lists the same pairs whatever order they arrive in (so split scans merge to the one
process result); findings keep their exact record counts, allowlist keys and marker verdicts;
the exit code never depends on the cap.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_guard.core import scan_pass as scan_module
from contam_guard.core.allowlist import Allowlist, Entry, apply
from contam_guard.core.config import Config, with_rule_overrides
from contam_guard.core.families import COLUMN_NAMES
from contam_guard.core.finish import redacted
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.match.pairs import PairStore, Unlisted, run_span
from contam_guard.core.pairs import Pair, Snippet
from contam_guard.core.register.build import GoldenSource, build_set
from contam_guard.core.result import ScanResult
from contam_guard.core.rules import RULES
from contam_guard.core.verdicts import Report, evaluate, span_digest
from contam_guard.io.manifest.model import Manifest
from contam_guard.io.readers import read_records
from contam_guard.io.readers.base import ReadOptions
from contam_guard.io.sources import Source
from tests.helpers import scan, scanner_over

# ------------------------------------------------------------------ the store


def pair(item: int, record: int, run: int, windows: int = 0, source: str = "a", marked: bool = False) -> Pair:
    text = f"shared run {run} of item {item}"
    numbers = dict.fromkeys(COLUMN_NAMES, 0.0) | {
        "longest_run": run,
        "ngrams8_found": max(run - 7, 0),
        "covered_l10": run if run >= 10 else 0,
        "window_hits": windows,
    }
    return Pair(item, source, record, record + 1, "text", numbers, Snippet("", text, "", 0), marked)


def test_the_most_telling_pairs_are_listed() -> None:
    """Longest run first, then most windows, then the first in scan order (file, record)."""
    store = PairStore(3)
    store.file("a")
    store.file("b")
    arriving = [
        pair(0, 5, 9),
        pair(0, 1, 20, source="b"),  # longest
        pair(0, 2, 12, windows=3),
        pair(0, 3, 12, windows=7),  # same run, more windows
        pair(0, 4, 12, windows=3, source="b"),  # ties with record 2 of "a", later in scan order
        pair(0, 0, 8),
    ]
    for p in arriving:
        store.add(p)
    assert [(p.source, p.record) for p in store.pairs()] == [("a", 2), ("a", 3), ("b", 1)]
    unlisted = store.unlisted()[0]
    assert unlisted.records == 3
    assert sorted((run, count) for _, run, _, count in unlisted.runs) == [(8, 1), (9, 1), (12, 1)]


def test_no_limit_lists_every_pair_in_scan_order() -> None:
    store = PairStore(0)
    for name in ("b", "a"):
        store.file(name)
    pairs = [pair(i % 3, r, 8 + r % 5, source=s) for r in range(40) for i in range(3) for s in ("a", "b")]
    random.Random(1).shuffle(pairs)
    for p in pairs:
        store.add(p)
    listed = store.pairs()
    assert store.unlisted() == {}
    assert listed == sorted(pairs, key=lambda p: ({"b": 0, "a": 1}[p.source], p.record, p.item))


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="limit"):
        PairStore(-1)


pairs_strategy = st.lists(
    st.builds(
        pair,
        item=st.integers(0, 3),
        record=st.integers(0, 30),
        run=st.integers(5, 25),
        windows=st.integers(0, 4),
        source=st.sampled_from(["a", "b", "c"]),
        marked=st.booleans(),
    ),
    max_size=80,
    unique_by=lambda p: (p.item, p.source, p.record),
)


@settings(max_examples=150, deadline=None)
@given(pairs=pairs_strategy, limit=st.integers(0, 6), parts=st.integers(1, 4), seed=st.integers(0, 1000))
def test_any_order_and_any_split_list_the_same_pairs(
    pairs: list[Pair], limit: int, parts: int, seed: int
) -> None:
    """Fed in scan order to one store, or shuffled over several stores merged into one (as
    ``--jobs`` does): the same listed pairs and the same counts; nothing lost, nothing twice."""
    files = ["a", "b", "c"]
    one = PairStore(limit)
    for name in files:
        one.file(name)
    for p in sorted(pairs, key=lambda p: (files.index(p.source), p.record, p.item)):
        one.add(p)

    shuffled = list(pairs)
    random.Random(seed).shuffle(shuffled)
    merged = PairStore(limit)
    for name in files:
        merged.file(name)
    for k in range(parts):
        part = PairStore(limit)
        for name in files:  # every store ranks files by scan order (a worker scans one file)
            part.file(name)
        for p in shuffled[k::parts]:
            part.add(p)
        merged.merge(part.pairs(), part.unlisted())

    assert merged.pairs() == one.pairs()
    assert merged.unlisted() == one.unlisted()
    listed, unlisted = one.pairs(), one.unlisted()
    for item in {p.item for p in pairs}:
        total = [p for p in pairs if p.item == item]
        shown = [p for p in listed if p.item == item]
        more = unlisted.get(item, Unlisted())
        assert len(shown) == (len(total) if limit == 0 else min(limit, len(total)))
        assert len(shown) + more.records == len(total)
        counted = Counter((run_span(p.snippet.run), p.longest_run, p.allowed_inline) for p in total)
        counted.subtract(Counter((run_span(p.snippet.run), p.longest_run, p.allowed_inline) for p in shown))
        assert +counted == Counter({(s, r, m): n for s, r, m, n in more.runs})


def test_reaching_groups_by_span_and_marker() -> None:
    more = Unlisted((("s1", 9, False, 4), ("s1", 14, False, 2), ("s1", 20, True, 1), ("s2", 13, False, 5)))
    assert more.records == 12 and more.longest == 20 and not more.all_marked
    groups = more.reaching(13)
    assert [(g.spans, g.records, g.all_marked) for g in groups] == [
        ({"s1"}, 2, False),
        ({"s1"}, 1, True),
        ({"s2"}, 5, False),
    ]


# ------------------------------------------------------------------ findings, end to end

QUESTION = (
    "a farmer keeps eleven brown hens and seven white geese in the long red barn behind "
    "the old stone house near the river"
)
OTHER = "the weather was mild and the children played in the park until the evening came"


@pytest.fixture
def index(tmp_path: Path) -> ManifestIndex:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"question": QUESTION}) + "\n" + json.dumps({"question": OTHER}) + "\n")
    built = build_set([GoldenSource(golden, "golden.jsonl")], ["question"], None, None, None)
    return ManifestIndex.from_manifest(Manifest(sets={"g": built}))


def write_training(tmp_path: Path, marked: set[int], rows: int = 12) -> Path:
    """``rows`` verbatim copies of QUESTION, then three records sharing only its first 15
    words (a shorter run: beyond any small cap), then clean filler; records in ``marked``
    carry the inline allow marker."""
    words = QUESTION.split()
    texts = [f"copy {k}: {QUESTION}" for k in range(rows)]
    texts += [f"partial {k}: {' '.join(words[:15])} and nothing else" for k in range(3)]
    texts += [f"filler {k} about nothing in particular" for k in range(5)]
    path = tmp_path / "train.jsonl"
    lines = []
    for number, text in enumerate(texts):
        row: dict[str, object] = {"text": text}
        if number in marked:
            row["contam_guard"] = "allow"
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return path


def run(index: ManifestIndex, train: Path, cap: int) -> ScanResult:
    return scan(index, [Source(train, "train.jsonl")], ReadOptions(fields=("text",)), max_pairs=cap)


def allowlisted(report: Report, spans: set[str]) -> Report:
    """``report`` with a false-positive allowlist entry for each GPT-3 span in ``spans``."""
    entries = {}
    for finding in report.findings:
        if finding.rule == "gpt3" and finding.span in spans:
            entry = Entry.model_validate(
                {
                    "set": finding.target.set_name,
                    "view": finding.target.view,
                    "item": finding.item_id,
                    "rule": "gpt3",
                    "span": finding.span,
                    "reason": "a test",
                }
            )
            entries[entry.key] = entry
    apply(report, Allowlist(Path("allowlist.yaml"), entries), dt.date(2030, 1, 1), check_stale=True)
    return report


def test_capped_findings_count_every_record(index: ManifestIndex, tmp_path: Path) -> None:
    train = write_training(tmp_path, marked=set())
    full, capped = run(index, train, 0), run(index, train, 3)
    assert len(full.pairs) == 15 and full.unlisted == {}
    assert len(capped.pairs) == 3 and capped.unlisted[0].records == 12
    assert capped.records == full.records and np.array_equal(capped.totals.run, full.totals.run)
    rules = Config().rules
    every, some = evaluate(full, rules), evaluate(capped, rules)
    per_item = {(f.rule, f.item): f for f in every.findings if not RULES[f.rule].per_pair}
    per_item_capped = {(f.rule, f.item): f for f in some.findings if not RULES[f.rule].per_pair}
    assert per_item.keys() == per_item_capped.keys() and per_item
    for key, finding in per_item.items():
        other = per_item_capped[key]
        assert (other.records, other.span, other.detail) == (finding.records, finding.span, finding.detail)
        assert len(other.pairs) == 3 and finding.records == len(finding.pairs) == 15
    gpt3_full = [f for f in every.findings if f.rule == "gpt3"]
    gpt3_capped = [f for f in some.findings if f.rule == "gpt3"]
    assert len(gpt3_full) == 15 and all(f.records == 1 for f in gpt3_full)
    listed = [f for f in gpt3_capped if f.pairs]
    summaries = [f for f in gpt3_capped if not f.pairs]
    assert len(listed) == 3 and [f.records for f in summaries] == [
        9,
        3,
    ]  # longest run first: copies, partials
    assert summaries[0].detail == (
        "and 9 more record(s) not listed (--max-pairs-per-item) share a run of up to 23 words >= N = 13"
    )
    assert {f.span for f in gpt3_capped} == {f.span for f in gpt3_full}
    assert Counter(f.span for f in gpt3_full) == Counter(
        {
            span: sum(f.records for f in gpt3_capped if f.span == span)
            for span in {f.span for f in gpt3_capped}
        }
    )
    assert some.findings == sorted(some.findings, key=lambda f: f.sort_key())
    assert summaries == gpt3_capped[-2:]  # listed findings first
    # The whole rule leaves the whole copies to GPT-3's failing findings; with GPT-3's only
    # warning, it fails the 12 whole copies (the partial ones are not), 3 listed and 9 counted.
    assert not [f for f in some.findings if f.rule == "whole"]
    warn = with_rule_overrides(Config(), {"gpt3": {"action": "warn"}}).rules
    whole = [f for f in evaluate(capped, warn).findings if f.rule == "whole"]
    assert [f.records for f in whole] == [1, 1, 1, 9]
    assert whole[-1].detail == (
        "and 9 more record(s) not listed (--max-pairs-per-item) hold the whole item (23 words) "
        "verbatim in one string"
    )


PARTIALS = {12, 13, 14}
COPIES = set(range(12))


@pytest.mark.parametrize(
    ("marked", "allow", "code"),
    [
        (set(), "", 1),
        (COPIES | PARTIALS, "", 0),  # every record marked
        (COPIES, "", 1),  # the partial copies (never listed under a cap of 3) are not marked
        (COPIES | {12, 13}, "", 1),  # one partial copy is not
        (set(), "copies", 1),  # the partial copies share another run: not allowlisted
        (set(), "copies+partials", 0),
        (COPIES, "partials", 0),  # marked copies, allowlisted partials
    ],
)
@pytest.mark.parametrize("cap", [1, 3, 14])
def test_the_exit_code_does_not_depend_on_the_cap(
    index: ManifestIndex, tmp_path: Path, marked: set[int], allow: str, code: int, cap: int
) -> None:
    train = write_training(tmp_path, marked)
    full = evaluate(run(index, train, 0), Config().rules)
    gpt3 = [f for f in full.findings if f.rule == "gpt3"]
    spans = {
        "copies": {f.span for f in gpt3 if f.pairs[0].longest_run > 15},
        "partials": {f.span for f in gpt3 if f.pairs[0].longest_run == 15},
    }
    assert all(len(found) == 1 for found in spans.values())  # one leak each, one key each
    chosen = set().union(*(spans[name] for name in allow.split("+") if name))
    capped = allowlisted(evaluate(run(index, train, cap), Config().rules), chosen)
    full = allowlisted(full, chosen)
    assert int(full.return_code) == int(capped.return_code) == code
    assert sum(f.records for f in full.failing) == sum(f.records for f in capped.failing)


def test_redaction_keeps_the_allowlist_key() -> None:
    """A redacted snippet keeps the digest of what was shared (taken before redaction), the key
    the records the cap leaves unlisted are counted under."""
    shared = "write to farmer@example.org for eleven brown hens"
    snippet = redacted(Snippet("before ", shared, " after", 7))
    assert snippet.run == "write to [EMAIL] for eleven brown hens"
    assert span_digest(pair(0, 0, 9)) != snippet.span == run_span(shared) != run_span(snippet.run)
    assert redacted(snippet).span == snippet.span  # redacting twice keeps the first key


@pytest.mark.parametrize("hits", [1, 7, 50, 1 << 30])
def test_matching_in_pieces_changes_nothing(
    index: ManifestIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hits: int
) -> None:
    """A block whose lines all hit is matched ``MATCH_HITS`` hits at a time: same totals, pairs."""
    train = write_training(tmp_path, marked={3}, rows=40)
    whole = run(index, train, 0)
    monkeypatch.setattr(scan_module, "MATCH_HITS", hits)
    pieces = run(index, train, 0)
    assert whole.pairs == pieces.pairs and len(whole.pairs) == 43
    assert np.array_equal(whole.totals.run, pieces.totals.run)
    assert np.array_equal(whole.totals.window_found, pieces.totals.window_found)


@pytest.mark.parametrize("cap", [0, 1, 3, 50])
def test_parts_merged_list_what_one_capped_scan_lists(index: ManifestIndex, tmp_path: Path, cap: int) -> None:
    """The input cut in three, each part in an accumulator of its own (capped there), the parts
    merged in any order: the same pairs listed and counted as one scan (``Accumulator.merge``,
    what ``--jobs``, Spark and Ray do)."""
    train = write_training(tmp_path, marked={2, 13})
    records = list(read_records(train, "train.jsonl", ReadOptions(fields=("text",))))
    scanner = scanner_over(index, max_pairs=cap)
    parts = [scanner.accumulator() for _ in range(3)]
    for k, part in enumerate(parts):
        part.note_input("train.jsonl")
        part.add_batch(records[k::3])
    total = scanner.accumulator()
    for part in (parts[2], parts[0], parts[1]):
        total.merge(part)
    merged = scanner.finish(total).result
    capped = run(index, train, cap)
    assert (merged.pairs, merged.unlisted, merged.max_pairs) == (capped.pairs, capped.unlisted, cap)
