"""Scrub against a slow, obvious reference, on random small corpora (hypothesis).

The reference works on Python lists: words re-tokenised with their character offsets, sets of
n-gram tuples, document frequencies counted by brute force, removals marked in a per-character
mask (so "overlapping or adjacent windows merge" needs no code at all), and rounds repeated until
nothing collides. A vocabulary of a few short words makes collisions, partial words at cuts,
common n-grams (the >max_doc_freq rule) and second rounds all frequent; small n, window and
piece sizes let tiny inputs exercise every branch.
"""

from __future__ import annotations

import json
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from contam_guard.core import scrub
from contam_guard.core.config import ScrubSettings
from contam_guard.core.match.index import ManifestIndex, Target
from contam_guard.core.register.views import hash_view
from contam_guard.core.spec import normalise
from contam_guard.io.readers import ReadOptions, read_records
from contam_guard.io.sources import Source
from tests.helpers import scan

# ---------------------------------------------------------------- the reference


def ref_words(text: str) -> list[tuple[str, int, int]]:
    """Normalised words with [start, end) from first to last kept character, by scanning."""
    out = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        j = i
        while j < len(text) and not text[j].isspace():
            j += 1
        kept = [k for k in range(i, j) if unicodedata.category(text[k])[0] not in "PS"]
        if kept:
            out.append(("".join(text[k] for k in kept).lower(), kept[0], kept[-1] + 1))
        i = j
    return out


def ref_grams(text: str, n: int) -> list[tuple[tuple[str, ...], int, int]]:
    words = ref_words(text)
    return [
        (tuple(w for w, _, _ in words[i : i + n]), words[i][1], words[i + n - 1][2])
        for i in range(len(words) - n + 1)
    ]


def runs(mask: list[bool], value: bool) -> list[tuple[int, int]]:
    out, i = [], 0
    while i < len(mask):
        if mask[i] != value:
            i += 1
            continue
        j = i
        while j < len(mask) and mask[j] == value:
            j += 1
        out.append((i, j))
        i = j
    return out


@dataclass
class RefRecord:
    removed: list[tuple[int, int, str, int, tuple[int, ...], tuple[tuple[int, int], ...]]] = field(
        default_factory=list
    )
    kept: list[tuple[int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Params:
    n: int
    window: int
    min_piece: int
    max_pieces: int
    max_df: int
    mode: str


def ref_cut(
    length: int,
    spans: list[tuple[int, int, tuple[str, ...]]],
    golden: dict[tuple[str, ...], set[int]],
    p: Params,
) -> tuple[list[tuple[int, int, str, tuple[int, ...], list[tuple[int, int]]]], list[tuple[int, int]]]:
    """One text's removals (start, end, reason, items, n-gram spans) and kept pieces."""
    mask = [False] * length
    gram_mask = [False] * length
    for s, e, _ in spans:
        for c in range(max(s - p.window, 0), min(e + p.window, length)):
            mask[c] = True
        for c in range(s, e):
            gram_mask[c] = True
    gram_runs = runs(gram_mask, True)

    def inside(lo: int, hi: int) -> tuple[tuple[int, ...], list[tuple[int, int]]]:
        items = {i for s, _, g in spans if lo <= s < hi for i in golden[g]}
        return tuple(sorted(items)), [(s, e) for s, e in gram_runs if lo <= s < hi]

    pieces = runs(mask, False)
    if p.mode == "drop" or len(pieces) > p.max_pieces:
        reason = "drop mode" if p.mode == "drop" else "too many pieces"
        return [(0, length, reason, *inside(0, length))], []
    removed = [(s, e, "window", *inside(s, e)) for s, e in runs(mask, True)]
    removed += [(s, e, "short piece", (), []) for s, e in pieces if e - s < p.min_piece]
    return removed, [(s, e) for s, e in pieces if e - s >= p.min_piece]


def reference(records: list[str], items: list[str], p: Params) -> dict[int, RefRecord]:
    """Touched records (by global number) and what happens to them."""
    golden: dict[tuple[str, ...], set[int]] = {}
    for g, item in enumerate(items):
        words = normalise.words(item)
        for i in range(len(words) - p.n + 1):
            golden.setdefault(tuple(words[i : i + p.n]), set()).add(g)
    docs = [(r, 0, len(t)) for r, t in enumerate(records)]
    touched: dict[int, RefRecord] = {}
    round_number = 0
    while True:
        df: Counter[tuple[str, ...]] = Counter()
        for r, a, b in docs:
            df.update({g for g, _, _ in ref_grams(records[r][a:b], p.n) if g in golden})
        active = {g for g, c in df.items() if c <= p.max_df}
        if not active:
            return touched
        round_number += 1
        survivors = []
        for r, a, b in docs:
            spans = [(s, e, g) for g, s, e in ref_grams(records[r][a:b], p.n) if g in active]
            if not spans:
                survivors.append((r, a, b))
                continue
            rec = touched.setdefault(r, RefRecord(kept=[(0, len(records[r]))]))
            rec.kept.remove((a, b))
            removed, kept = ref_cut(b - a, spans, golden, p)
            rec.removed += [
                (a + s, a + e, why, round_number, i, tuple((a + x, a + y) for x, y in g))
                for s, e, why, i, g in removed
            ]
            rec.kept = sorted(rec.kept + [(a + s, a + e) for s, e in kept])
            survivors += [(r, a + s, a + e) for s, e in kept]
        docs = survivors


def doc_freq_of_golden(texts: list[str], items: list[str], n: int) -> Counter[tuple[str, ...]]:
    golden = {tuple(w[i : i + n]) for w in map(normalise.words, items) for i in range(len(w) - n + 1)}
    df: Counter[tuple[str, ...]] = Counter()
    for text in texts:
        df.update({g for g, _, _ in ref_grams(text, n) if g in golden})
    return df


# ---------------------------------------------------------------- running the real thing


def build_index(items: list[str]) -> ManifestIndex:
    view = hash_view("text", items, None)
    ids = [f"i{g}" for g in range(len(items))]
    return ManifestIndex.from_views([Target("gold", "text", 1, ids, np.arange(len(items)), 0)], [view])


def write_inputs(folder: Path, records: list[str], split: int, fmt: str) -> list[Path]:
    parts = [records[:split], records[split:]] if 0 < split < len(records) else [records]
    paths = []
    for number, part in enumerate(parts):
        if fmt == "text":  # a paragraph per record (a text may be wrapped over lines)
            path = folder / f"in{number}.txt"
            path.write_text("".join(t + "\n\n" for t in part), encoding="utf-8")
        else:
            path = folder / f"in{number}.jsonl"
            path.write_text(
                "".join(json.dumps({"text": t, "k": number}) + "\n" for t in part), encoding="utf-8"
            )
        paths.append(path)
    return paths


def run_scrub(
    paths: list[Path], out: Path, index: ManifestIndex, p: Params
) -> tuple[scrub.ScrubPlan, list[dict[str, Any]]]:
    out.mkdir()
    jobs = [
        scrub.Job(path, path.name, scrub.scrub_format(path, path.name), out / path.name) for path in paths
    ]
    settings = ScrubSettings(
        mode=p.mode,
        n=p.n,
        window=p.window,
        min_piece_chars=p.min_piece,
        max_pieces=p.max_pieces,
        max_doc_freq=p.max_df,
    )
    options = scrub.ScrubOptions(settings, batch_chars=1024)  # several batches per input
    plan = scrub.plan(index, jobs, options, None)
    log = out.parent / f"{out.name}.log.jsonl"
    scrub.apply(plan, log)
    return plan, [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def expected_output(
    paths: list[Path], records: list[str], ref: dict[int, RefRecord], fmt: str
) -> list[bytes]:
    """What the output files must hold: every JSONL line is a record (none is blank); every text
    record a paragraph with a blank line after it, its pieces paragraphs of their own."""
    outputs, number = [], 0
    for file_number, path in enumerate(paths):
        chunks = []
        data = path.read_bytes()
        raws = data.split(b"\n\n")[:-1] if fmt == "text" else data.splitlines(keepends=True)
        for index, raw in enumerate(raws):
            rec, text = ref.get(number), records[number]
            number += 1
            if rec is None:
                chunks.append(raw + b"\n\n" if fmt == "text" else raw)
            elif fmt == "text":
                pieces = b"\n\n".join(text[a:b].encode() for a, b in rec.kept)
                chunks.append(pieces + b"\n\n" if rec.kept else b"\n")
            else:
                for a, b in rec.kept:
                    piece = {"source_record": index, "id": None, "start": a, "end": b}
                    obj = {"text": text[a:b], "k": file_number, "contam_guard_piece": piece}
                    chunks.append(json.dumps(obj, ensure_ascii=False).encode() + b"\n")
        outputs.append(b"".join(chunks))
    return outputs


# ---------------------------------------------------------------- strategies

VOCAB = ["a", "b", "ab", "ba", "c"]
SEPARATORS = [" ", " ", " ", "  ", ", ", ". ", " - ", "\t", " (", ") ", "\n"]  # "\n": wrapped

word_lists = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=8)


@st.composite
def texts(draw: st.DrawFn, phrases: list[list[str]]) -> str:
    """Random words with shared phrases mixed in, so n-grams recur across records."""
    words: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        words += draw(st.sampled_from(phrases)) if draw(st.booleans()) else draw(word_lists)
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(words), max_size=len(words)))
    text = "".join(w + s for w, s in zip(words, seps)).strip()
    return text or "x"


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[str], list[str], Params, int, str]:
    phrases = draw(
        st.lists(st.lists(st.sampled_from(VOCAB), min_size=7, max_size=14), min_size=1, max_size=3)
    )
    records = draw(st.lists(texts(phrases), min_size=1, max_size=10))
    # Items: mostly a slice of a phrase or a record (so collisions happen), else random words.
    items = []
    for _ in range(draw(st.integers(1, 3))):
        choice = draw(st.integers(0, 3))
        if choice == 0:
            items.append(" ".join(draw(word_lists)) or "a")
            continue
        source = (
            draw(st.sampled_from(phrases)) if choice == 1 else normalise.words(draw(st.sampled_from(records)))
        )
        a = draw(st.integers(0, max(len(source) - 7, 0)))
        items.append(" ".join(source[a : a + draw(st.integers(7, 20))]) or "a")
    p = Params(
        n=draw(st.sampled_from([5, 5, 6])),
        window=draw(st.integers(0, 8)),
        min_piece=draw(st.integers(0, 12)),
        max_pieces=draw(st.integers(1, 4)),
        max_df=draw(st.integers(1, 3)),
        mode=draw(st.sampled_from(["pieces", "pieces", "pieces", "drop"])),
    )
    return records, items, p, draw(st.integers(0, len(records))), draw(st.sampled_from(["text", "jsonl"]))


def read_back(paths: list[Path]) -> list[str]:
    return [r.joined() for p in paths for r in read_records(p, p.name, ReadOptions(detect_shape=True))]


# ---------------------------------------------------------------- the properties


def test_reference_words_are_the_spec() -> None:
    text = "Hello, (big) WORLD -- it's 3.5 o'clock!  ¿Qué?"
    assert [w for w, _, _ in ref_words(text)] == normalise.words(text)
    assert [text[s:e] for _, s, e in ref_words(text)] == [
        "Hello",
        "big",
        "WORLD",
        "it's",
        "3.5",
        "o'clock",
        "Qué",
    ]


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_scrub_matches_the_reference(case: tuple[list[str], list[str], Params, int, str]) -> None:
    records, items, p, split, fmt = case
    index = build_index(items)
    ref = reference(records, items, p)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = write_inputs(folder, records, split, fmt)
        plan, log = run_scrub(paths, folder / "out", index, p)

        # Removed spans, reasons, rounds, causes and kept pieces: exactly the reference's.
        offsets = np.cumsum([0] + [len(read_back([q])) for q in paths])
        got = {int(offsets[[q.name for q in paths].index(e["source"])]) + e["record"]: e for e in log}
        assert sorted(got) == sorted(ref)
        for number, entry in got.items():
            removed = [
                (
                    r["start"],
                    r["end"],
                    r["reason"],
                    r["round"],
                    tuple(int(m["item"][1:]) for m in r["matches"]),
                    tuple(tuple(g) for g in r["ngrams"]),
                )
                for r in entry["removed"]
            ]
            assert removed == sorted(ref[number].removed), number
            assert [tuple(k) for k in entry["kept"]] == ref[number].kept
        assert plan.stats.touched == len(ref)
        for reason in {r[2] for rec in ref.values() for r in rec.removed}:
            event(f"reason: {reason}")
        event(f"rounds: {plan.stats.rounds}")
        event(f"left alone: {min(plan.stats.left_alone, 1)}")
        assert plan.stats.dropped == sum(1 for r in ref.values() if not r.kept)

        # The output: untouched records byte for byte, pieces as the reference cuts them.
        outputs = [folder / "out" / q.name for q in paths]
        assert [o.read_bytes() for o in outputs] == expected_output(paths, records, ref, fmt)

        # Every golden n-gram left in the output is in more than max_doc_freq output records,
        # and scan (the GPT-3 rule's runs) sees exactly the items holding such an n-gram.
        left = read_back(outputs)
        df = doc_freq_of_golden(left, items, p.n)
        assert all(count > p.max_df for count in df.values()), df
        result = scan(index, [Source(o, o.name) for o in outputs], ReadOptions(), windows=False)
        flagged = {
            g
            for g in range(len(items))
            if result.totals.run[index.word_base[g] : index.word_base[g] + index.word_counts[g]].max(
                initial=0
            )
            >= p.n
        }
        holding = {
            g
            for g, item in enumerate(items)
            for w in [normalise.words(item)]
            for i in range(len(w) - p.n + 1)
            if tuple(w[i : i + p.n]) in df
        }
        assert flagged == holding

        # Scrubbing the output again changes nothing, byte for byte.
        _, again_log = run_scrub(outputs, folder / "again", index, p)
        assert again_log == []
        assert [(folder / "again" / q.name).read_bytes() for q in paths] == [o.read_bytes() for o in outputs]
