"""Write number_changed.jsonl: each picked GSM8K test question with its numbers changed.

Run from the repository root (it reads GSM8K's test split from ../shared/data/gsm8k):

    python tests/data/rewordings/change_numbers.py

Every run of digits becomes another of the same length (no leading zero unless it was one
digit), and every number word from zero to twenty becomes another; nothing else changes. The
random choices are seeded by the test index, so the output is the same on every run. (The
reworded copies, reworded.jsonl, were written by hand; only these copies are generated.)
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from contam_guard.core.reword.numbers import CARDINALS

HERE = Path(__file__).resolve().parent
GSM8K_TEST = HERE.parents[2] / ".." / "shared" / "data" / "gsm8k" / "test.jsonl"
WORDS = list(CARDINALS[:21])  # zero .. twenty
PATTERN = re.compile(r"\d+|\b(?:" + "|".join(WORDS) + r")\b", re.IGNORECASE)


def change(text: str, rng: random.Random) -> str:
    """``text`` with every number (digits, or a word zero..twenty) replaced by another."""

    def swap(match: re.Match[str]) -> str:
        old = match.group()
        if old.isdigit():
            for _ in range(100):
                low = 10 ** (len(old) - 1) if len(old) > 1 else 0
                new = str(rng.randrange(low, 10 ** len(old)))
                if new != old:
                    return new
            return old
        choices = [w for w in WORDS[1:] if w != old.lower()]
        new = rng.choice(choices)
        return new.capitalize() if old[0].isupper() else new

    return PATTERN.sub(swap, text)


def main() -> None:
    questions = [json.loads(line)["question"] for line in GSM8K_TEST.open(encoding="utf-8")]
    picked = [json.loads(line)["test_index"] for line in (HERE / "reworded.jsonl").open(encoding="utf-8")]
    with (HERE / "number_changed.jsonl").open("w", encoding="utf-8") as out:
        for index in picked:
            changed = change(questions[index], random.Random(index))
            assert changed != questions[index], index
            out.write(json.dumps({"test_index": index, "question": changed}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
