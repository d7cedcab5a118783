"""Test items wrapped over lines or cut into pieces across strings: what the rules find, on GSM8K.

    python -m benchmarks.split_items [--words 10] [--only LAYOUT ...]   # needs ../shared/data/gsm8k

Registers GSM8K's 1,319 test questions (``--field question``) in a temporary project, writes
every question in each layout below, and scans each with the real command line (every rule,
``--exit-zero``, ``--items-csv``):

- ``list``: the question cut into pieces of at most ``--words`` whitespace-separated words, as
  the elements of one list field, ``{"sentences": [...]}``, one record per question;
- ``siblings``: the same pieces as sibling fields, ``{"s0": ..., "s1": ...}``;
- ``records``: one piece per record with a document id, scanned as it is and with
  (``grouped``) with ``--group-by doc`` (consecutive records with the same ``doc``: one document);
- ``wrapped40``, ``wrapped60``, ``wrapped72``, ``quoted72``: a ``.txt`` (``.md``) file with each
  question wrapped at that many columns (``textwrap``; a quoted ``> `` block), a blank line
  between questions.

Prints, per layout, how many items the GPT-3 rule flags and how many no rule flags at all. A
whole question sits in every record, group or paragraph, so a guard that reads documents flags
all 1,319 with the GPT-3 rule.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GSM8K = ROOT.parent / "shared" / "data" / "gsm8k"


def cg(*args: object, cwd: Path) -> int:
    """Run contam-guard; its exit code (0 or 1), or a SystemExit with its error."""
    done = subprocess.run(
        [sys.executable, "-m", "contam_guard", *map(str, args)], check=False, cwd=cwd, capture_output=True
    )
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"contam-guard {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr.decode()}"
        )
    return done.returncode


def pieces(text: str, size: int) -> list[str]:
    """``text`` in pieces of at most ``size`` whitespace-separated words."""
    words = text.split()
    return [" ".join(words[k : k + size]) for k in range(0, len(words), size)]


def jsonl(records: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def wrapped(questions: list[str], width: int, prefix: str = "") -> str:
    return "\n".join(
        "".join(f"{prefix}{line}\n" for line in textwrap.wrap(q, width - len(prefix))) for q in questions
    )


def layouts(questions: list[str], size: int) -> Iterator[tuple[str, str, str, tuple[str, ...]]]:
    """(name, file suffix, file content, extra scan options) of each layout."""
    cut = [pieces(q, size) for q in questions]
    yield "list", ".jsonl", jsonl([{"sentences": p} for p in cut]), ()
    yield "siblings", ".jsonl", jsonl([{f"s{k}": piece for k, piece in enumerate(p)} for p in cut]), ()
    per_record = jsonl([{"doc": d, "text": piece} for d, p in enumerate(cut) for piece in p])
    yield "records", ".jsonl", per_record, ()
    yield "grouped", ".jsonl", per_record, ("--group-by", "doc")
    for width in (40, 60, 72):
        yield f"wrapped{width}", ".txt", wrapped(questions, width), ()
    yield "quoted72", ".md", wrapped(questions, 72, "> "), ()


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
        for number, (name, suffix, content, options) in enumerate(layouts(questions, args.words)):
            if args.only is not None and name not in args.only:
                continue
            data = work / f"layout{number}{suffix}"
            data.write_text(content, encoding="utf-8")
            out = work / f"layout{number}.csv"
            cg("scan", data, *options, "--exit-zero", "--items-csv", out, cwd=work)
            total, gpt3, none = flagged(out)
            print(f"| {name} | {gpt3} of {total} | {none} |", flush=True)


if __name__ == "__main__":
    main()
