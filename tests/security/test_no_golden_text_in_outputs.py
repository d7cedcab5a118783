"""A full run writes every output there is; none holds a golden-only word unless --show-golden."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from contam_guard.core.spec.normalise import words

# The training file holds part of item 1 (so there are findings), never these golden-only words.
GOLDEN = [
    {
        "id": "q1",
        "question": "Quintessa arranges seventeen marigolds beside the lighthouse while Bartholomew "
        "counts how many marigolds remain after the storm washes nine of them into the harbour",
    },
    {
        "id": "q2",
        "question": "Zebulon paints twelve xylophones vermilion and sells four to Philippa; how many "
        "vermilion xylophones does Zebulon keep for the orchestra's winter concert",
    },
]
LEAKED = "counts how many marigolds remain after the storm washes nine of them into the harbour"


def golden_only_words() -> set[str]:
    training = set(words(LEAKED))
    return {w for g in GOLDEN for w in words(g["question"]) if len(w) >= 5 and w not in training}


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_every_output_of_a_full_run_is_free_of_golden_text(tmp_path: Path) -> None:
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(g) + "\n" for g in GOLDEN))
    (tmp_path / "train.jsonl").write_text(
        json.dumps({"text": "From the forum: " + LEAKED + ". Thanks!"}) + "\n"
    )
    logs = [
        run(tmp_path, "init"),
        run(tmp_path, "register", "gold", "golden.jsonl", "--field", "question", "--id-field", "id"),
        run(tmp_path, "sets"),
        run(tmp_path, "verify"),
        run(
            tmp_path,
            "scan",
            "train.jsonl",
            "--review",
            "r.md",
            "--review-json",
            "r.json",
            "--review-html",
            "r.html",
            "--sarif",
            "r.sarif",
            "--summary",
            "summary.md",
            "--items-csv",
            "items.csv",
            "--pairs-csv",
            "pairs.csv",
            "--format",
            "github",
            "--output",
            "annotations.txt",
        ),
        run(tmp_path, "sweep", "train.jsonl", "--csv", "sweep.csv"),
        run(tmp_path, "dupes", "gold", "--review", "dupes.md"),
        run(
            tmp_path,
            "scrub",
            "train.jsonl",
            "-o",
            "clean.jsonl",
            "--log",
            "removed.jsonl",
            "--n",
            "8",
            "--window",
            "0",
            "--min-piece-chars",
            "1",
        ),
        run(tmp_path, "scan", "missing.jsonl"),  # an error path too
    ]
    assert logs[4].returncode == 1, logs[4].stderr  # the leak was found: the outputs have content
    secret = golden_only_words()
    assert len(secret) > 10
    texts = {f"log {i}": log.stdout + log.stderr for i, log in enumerate(logs)}
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name not in ("golden.jsonl", "manifest.json"):
            texts[path.name] = path.read_text(errors="replace")
    assert {
        "r.md",
        "r.json",
        "r.html",
        "r.sarif",
        "summary.md",
        "items.csv",
        "pairs.csv",
        "annotations.txt",
        "sweep.csv",
        "dupes.md",
        "clean.jsonl",
        "removed.jsonl",
    } <= set(texts)
    leaks = {(name, w) for name, text in texts.items() for w in secret if w in text.lower()}
    assert leaks == set()
    # The check can fail: asked for, with the golden file present, the golden text does appear.
    shown = run(tmp_path, "scan", "train.jsonl", "--review", "shown.md", "--show-golden")
    assert shown.returncode == 1
    assert any(w in (tmp_path / "shown.md").read_text().lower() for w in secret)
