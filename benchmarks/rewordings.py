"""What the rules catch (issue 15): number-changed and reworded copies, and GSM8K's train split.

    .venv/bin/python -m benchmarks.rewordings              # prints the tables of README's section
    .venv/bin/python -m benchmarks.rewordings --json out.json

Runs the CLI as a user would, in a temporary project: ``register`` the 1,319 GSM8K test
questions (``--field question``), then ``scan --review-json`` three files:

- ``tests/data/rewordings/number_changed.jsonl``: 100 test questions with their numbers changed;
- ``tests/data/rewordings/reworded.jsonl``: the same 100 questions reworded by hand;
- GSM8K's 7,473 training questions (other problems).

A copy counts as caught by a rule when the rule has a finding on its own test item that names
its record. For the train split: the share of training questions with a finding of the rule
(any test item), and the share of test items with one. The wall time of each scan is printed
too: all rules, and the n-gram rules alone (``--disable numbers --disable reworded``).
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
    args = parser.parse_args()
    if not GSM8K.is_dir():
        raise SystemExit(f"GSM8K is not at {GSM8K}")
    with tempfile.TemporaryDirectory(prefix="cg-rewordings-") as work:
        results = measure(Path(work))
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
