"""Test items cut into pieces across strings: what each rule finds, measured on GSM8K.

    python -m benchmarks.split_items [--words 10]   # needs ../shared/data/gsm8k

Registers GSM8K's 1,319 test questions (``--field question``) in a temporary project, then
writes every question cut into pieces of at most ``--words`` whitespace-separated words, one
record per question, in three layouts, and scans each with the real command line (every rule,
``--exit-zero``, ``--items-csv``):

- ``list``: the pieces as the elements of one list field, ``{"sentences": [...]}``;
- ``siblings``: the pieces as sibling fields, ``{"s0": ..., "s1": ...}``;
- ``records``: one piece per record with a document id, scanned as it is and with
  ``--group-by doc`` (consecutive records with the same ``doc`` read as one document).

Prints, per layout, how many items the GPT-3 rule flags and how many no rule flags at all. A
whole question sits in every record (or group), so a guard that reads a record as one document
flags all 1,319 with the GPT-3 rule.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GSM8K = ROOT.parent / "shared" / "data" / "gsm8k"


def cg(*args: object, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "contam_guard", *map(str, args)], cwd=cwd, capture_output=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"contam-guard {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr.decode()}")


def pieces(text: str, size: int) -> list[str]:
    """``text`` in pieces of at most ``size`` whitespace-separated words."""
    words = text.split()
    return [" ".join(words[k : k + size]) for k in range(0, len(words), size)]


def layouts(questions: list[str], size: int) -> Iterator[tuple[str, list[dict[str, object]], tuple[str, ...]]]:
    """(name, records, extra scan options) of each layout."""
    cut = [pieces(q, size) for q in questions]
    yield "list", [{"sentences": p} for p in cut], ()
    yield "siblings", [{f"s{k}": piece for k, piece in enumerate(p)} for p in cut], ()
    per_record = [{"doc": d, "text": piece} for d, p in enumerate(cut) for piece in p]
    yield "records", per_record, ()
    yield "records --group-by doc", per_record, ("--group-by", "doc")


def flagged(items_csv: Path) -> tuple[int, int, int]:
    """(items, flagged by gpt3, flagged by no rule) of an items CSV."""
    with items_csv.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    flags = [[column for column in row if column.startswith("flag_") and row[column] == "1"] for row in rows]
    return len(rows), sum("flag_gpt3" in f for f in flags), sum(not f for f in flags)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--words", type=int, default=10, help="words per piece at most (default 10)")
    parser.add_argument("--only", nargs="*", default=None, help="layouts to run (default: all)")
    args = parser.parse_args()
    with (GSM8K / "test.jsonl").open(encoding="utf-8") as handle:
        questions = [json.loads(line)["question"] for line in handle if line.strip()]
    print(f"GSM8K test: {len(questions)} questions, cut into pieces of at most {args.words} words\n")
    print("| layout | gpt3 flags | no rule flags |")
    print("| --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cg("init", cwd=work)
        cg("register", "gsm8k", GSM8K / "test.jsonl", "--field", "question", cwd=work)
        for number, (name, records, options) in enumerate(layouts(questions, args.words)):
            if args.only is not None and name.split()[0] not in args.only:
                continue
            data = work / f"layout{number}.jsonl"
            data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
            out = work / f"layout{number}.csv"
            cg("scan", data, *options, "--exit-zero", "--items-csv", out, cwd=work)
            total, gpt3, none = flagged(out)
            print(f"| {name} | {gpt3} of {total} | {none} |", flush=True)


if __name__ == "__main__":
    main()
