"""The GPT-3 rule's N for text written without spaces, measured on CMMLU (spec words-v3).

    python -m benchmarks.unspaced            # needs ../shared/data/cmmlu and ../shared/seeds

Registers CMMLU's test questions (67 CSV files, 11,582 items, view ``Question``) in a temporary
project and scans, with the real command line:

- false hits: CMMLU's ``dev/`` split (335 records, every string read), and the Chinese seed
  text (``002_72b300b4dbcfe553.txt``, one record per line). A test item sharing a run of n
  characters with a dev record whose question is the same text (difflib ratio >= 0.8 of the
  normalised words: dev repeats some test questions, e.g. "下列四组字中，全是形声字的一组是"
  with other options) is a true copy of the question view, counted apart; any other is a
  false hit. Pairs are listed from a run of 8 words, so the table starts at n = 8.
- recall: every test question planted in Chinese prose (a seed line before and after it, no
  space between), verbatim, and as a fragment (its first half, by characters); an item counts
  as found at n when its longest shared run reaches n.
- the seed text at small n (5 to 7), where general prose starts to share runs with questions;
- the choices views (``A`` to ``D``, one set of their own): their length in characters and how
  many share a run of 10 with a dev record.

Prints a Markdown table and three lines (README, "Languages and templates").
"""

from __future__ import annotations

import csv
import difflib
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from contam_guard.core.spec.normalise import words

ROOT = Path(__file__).resolve().parents[1]
CMMLU = ROOT.parent / "shared" / "data" / "cmmlu"
SEED = ROOT.parent / "shared" / "seeds" / "002_72b300b4dbcfe553.txt"
NS = (8, 9, 10, 11, 12, 13, 15, 20)
SAME_QUESTION = 0.8


def cg(*args: object, cwd: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "contam_guard", *map(str, args)], cwd=cwd, check=True, capture_output=True
    )


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def longest(items_csv: Path) -> list[int]:
    found = rows(items_csv)
    return [int(row["longest_run"]) for row in sorted(found, key=lambda r: int(r["item_id"]))]


def main() -> None:
    tests = sorted((CMMLU / "test").glob("*.csv"))
    questions = [row["Question"] for path in tests for row in rows(path)]
    seed_lines = [line for line in SEED.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cg("init", cwd=work)
        cg("register", "cmmlu", *tests, "--field", "Question", cwd=work)
        scan = ("scan", "--only", "gpt3", "--exit-zero")
        cg(*scan, CMMLU / "dev", "--items-csv", "dev.csv", "--pairs-csv", "pairs.csv", cwd=work)
        (work / "seed.txt").write_text("\n".join(seed_lines) + "\n", encoding="utf-8")
        cg(*scan, "seed.txt", "--items-csv", "seed.csv", cwd=work)
        cuts: dict[str, Callable[[str], str]] = {
            "verbatim": lambda q: q,
            "fragment": lambda q: q[: len(q) // 2],
        }
        for kind, cut in cuts.items():
            with (work / f"{kind}.jsonl").open("w", encoding="utf-8") as out:
                for k, question in enumerate(questions):
                    before, after = seed_lines[k % len(seed_lines)], seed_lines[(k + 7) % len(seed_lines)]
                    out.write(json.dumps({"text": before + cut(question) + after}, ensure_ascii=False) + "\n")
            cg(*scan, f"{kind}.jsonl", "--items-csv", f"{kind}.items.csv", cwd=work)
        dev_questions = {
            (path.resolve(), record): row["Question"]
            for path in (CMMLU / "dev").glob("*.csv")
            for record, row in enumerate(rows(path))
        }
        same: dict[int, list[tuple[int, bool]]] = {}
        for pair in rows(work / "pairs.csv"):
            item = int(pair["item_id"])
            dev = dev_questions[(Path(pair["source"]).resolve(), int(pair["record"]))]
            a, b = "".join(words(questions[item])), "".join(words(dev))
            is_same = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= SAME_QUESTION
            same.setdefault(item, []).append((int(pair["longest_run"]), is_same))
        dev_runs, seed_runs = longest(work / "dev.csv"), longest(work / "seed.csv")
        verbatim, fragment = longest(work / "verbatim.items.csv"), longest(work / "fragment.items.csv")
        choices = choice_items(tests, work / "choices")
    total = len(questions)
    print(
        f"CMMLU test: {total} questions; dev: {len(dev_questions)} records; seed: {len(seed_lines)} lines\n"
    )
    print("| n | verbatim found | fragment found | false hits vs dev | same question in dev | hits vs seed |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in NS:
        hit = [i for i, run in enumerate(dev_runs) if run >= n]
        true = [i for i in hit if any(same_q for run, same_q in same.get(i, []) if run >= n)]
        false = len(hit) - len(true)
        cells = [
            f"{sum(r >= n for r in verbatim) / total:.1%}",
            f"{sum(r >= n for r in fragment) / total:.1%}",
            f"{false} ({false / total:.2%})",
            f"{len(true)}",
            f"{sum(r >= n for r in seed_runs)}",
        ]
        print(f"| {n} | " + " | ".join(cells) + " |")
    small = ", ".join(f"{sum(r >= n for r in seed_runs)} at n = {n}" for n in (5, 6, 7))
    print(f"\nQuestions sharing a run of n characters with the seed text: {small}")
    lengths = sorted(int(row["words"]) for row in choices)
    print(
        f"Choices (views A to D): {len(choices)} items, median {statistics.median(lengths):g} characters, "
        f"{sum(length < 10 for length in lengths) / len(lengths):.0%} under 10; "
        f"{sum(int(row['longest_run']) >= 10 for row in choices)} share a run of 10 with a dev record"
    )


def choice_items(tests: list[Path], work: Path) -> list[dict[str, str]]:
    """The items CSV rows of CMMLU's four choices views scanned against its dev split."""
    work.mkdir()
    cg("init", cwd=work)
    cg("register", "choices", *tests, *(f"--field={view}" for view in "ABCD"), cwd=work)
    cg("scan", "--only", "gpt3", "--exit-zero", CMMLU / "dev", "--items-csv", "dev.csv", cwd=work)
    return rows(work / "dev.csv")


if __name__ == "__main__":
    main()
