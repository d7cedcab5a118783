"""Template n-grams on real templated sets: false hits and recall, before and after.

    python -m benchmarks.templates            # GSM8K behind an MMLU header, and CMMLU
    python -m benchmarks.templates --quick    # the first 300 test items of each

Each set is registered twice in a fresh project: *before*, with ``--template-min-items`` above
its item count (no n-gram can be template: what contam-guard did before), and *after*, with
the defaults (more than 1% of the items and at least 5). Each training corpus is scanned against
both, and the table gives, per rule (gpt3, palm, llama2), how many test items it fired on.

- **GSM8K behind an MMLU header**: the 1,319 GSM8K test questions, each after "The following
  are multiple choice questions (with answers) about high school mathematics." Corpora: the
  first 1,000 GSM8K training questions (``--train``) behind the same header (the header around unrelated text:
  every hit is false, but for the few real overlaps of GSM8K's own split, which the row without
  the header gives); every test item whole, one record each inside prose; every test item
  without its header.
- **CMMLU**: the test split's questions (``../shared/data/cmmlu/test``, 67 subjects), whose
  items share recurring phrasing. Corpora: the dev split's questions (other items, same
  phrasing: false hits), and every test question inside Chinese prose (recall). Its words are
  those of the manifest's normalisation spec: under one that splits on spaces only (words-v2),
  a Chinese question is one word and no word rule can fire.

Inputs are written under ``--work`` (default: a new temporary folder), never in the repository.
Nothing asserts; the numbers are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

SHARED = Path(os.environ.get("CONTAM_GUARD_SHARED", "/work/shared"))
HEADER = "The following are multiple choice questions (with answers) about high school mathematics."
PROSE_BEFORE = "Notes from the study group, week three. "
PROSE_AFTER = " We went through it together after lunch."
ZH_BEFORE = "今天下午我们在图书馆复习了很多内容，大家都觉得收获不少。"
ZH_AFTER = "复习结束以后，我们一起去食堂吃了晚饭。"
RULES = ("gpt3", "palm", "llama2")
NEVER = "1000000000"
PART = 200


@dataclass(frozen=True)
class Case:
    name: str
    golden: list[str]
    corpora: list[tuple[str, list[str]]]


def _cli(*args: str) -> tuple[int, str]:
    from contam_guard.cli import main  # noqa: PLC0415 (after argument parsing)

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
    return code, out.getvalue() + err.getvalue()


def _jsonl(path: Path, field: str, texts: list[str]) -> None:
    path.write_text(
        "".join(json.dumps({field: t}, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8"
    )


def _gsm8k(split: str, limit: int | None) -> list[str]:
    with (SHARED / "data/gsm8k" / f"{split}.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line)["question"] for line in handle]
    return rows[:limit] if limit else rows


def _cmmlu(split: str, limit: int | None) -> list[str]:
    out: list[str] = []
    for path in sorted((SHARED / "data/cmmlu" / split).glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as handle:
            out += [row["Question"] for row in csv.DictReader(handle) if row.get("Question")]
    return out[:limit] if limit else out


def _spaced(text: str) -> str:
    """Every character a word (what spec words-v3 makes of Han text), for a manifest of words-v2."""
    return " ".join(text)


def cases(limit: int | None, train_limit: int | None, only: str, spaced: bool) -> Iterator[Case]:
    if only in ("all", "gsm8k"):
        yield _gsm8k_case(limit, train_limit)
    if only in ("all", "cmmlu"):
        yield _cmmlu_case(limit, spaced)


def _gsm8k_case(limit: int | None, train_limit: int | None) -> Case:
    test = _gsm8k("test", limit)
    train = _gsm8k("train", train_limit)
    return Case(
        "GSM8K test behind an MMLU header",
        [f"{HEADER}\n\n{q}" for q in test],
        [
            ("train questions, no header", train),
            ("train questions behind the header", [f"{HEADER}\n\n{q}" for q in train]),
            ("test items whole, in prose", [f"{PROSE_BEFORE}{HEADER}\n\n{q}{PROSE_AFTER}" for q in test]),
            ("test items without the header", [f"{PROSE_BEFORE}{q}{PROSE_AFTER}" for q in test]),
        ],
    )


def _cmmlu_case(limit: int | None, spaced: bool) -> Case:
    cmmlu, dev = _cmmlu("test", limit), _cmmlu("dev", None)
    prose = [f"{ZH_BEFORE}{q}{ZH_AFTER}" for q in cmmlu]
    if spaced:
        cmmlu, dev, prose = (
            [_spaced(q) for q in cmmlu],
            [_spaced(q) for q in dev],
            [_spaced(q) for q in prose],
        )
    return Case(
        "CMMLU test questions" + (" (characters spaced)" if spaced else ""),
        cmmlu,
        [("dev questions (other items)", dev), ("test questions in Chinese prose", prose)],
    )


def _fired(report: Path) -> dict[str, int]:
    findings = json.loads(report.read_text(encoding="utf-8"))["findings"]
    return {rule: len({f["item_id"] for f in findings if f["rule"] == rule}) for rule in RULES}


def measure(case: Case, work: Path) -> list[tuple[str, dict[str, int], dict[str, int]]]:
    """Per corpus: (name, items fired before, after)."""
    root = work / case.name.replace(" ", "_")
    root.mkdir(parents=True)
    os.chdir(root)
    _jsonl(root / "golden.jsonl", "question", case.golden)
    for number, (_, texts) in enumerate(case.corpora):
        # Files of PART records: a scan batches each file on its own, and before templates a
        # header shared by every record and item gives records x items hits per batch.
        folder = root / f"corpus{number}"
        folder.mkdir()
        for part in range(0, len(texts), PART):
            _jsonl(folder / f"part{part // PART:04d}.jsonl", "text", texts[part : part + PART])
    assert _cli("init")[0] == 0
    results: dict[str, list[dict[str, int]]] = {}
    defaults = ["--template-share", "0.01", "--template-min-items", "5"]
    for label, extra in (("before", ["--template-min-items", NEVER]), ("after", defaults)):
        code, text = _cli("register", "bench", "golden.jsonl", "--field", "question", *extra)
        assert code == 0, text
        if label == "after":
            print(f"  {case.name}: {text.strip().splitlines()[-1]}", file=sys.stderr)
        for number in range(len(case.corpora)):
            out = root / f"{label}{number}.json"
            code, text = _cli("scan", f"corpus{number}", "--format", "json", "-o", str(out))
            assert code in (0, 1), text
            results.setdefault(label, []).append(_fired(out))
    return [(name, results["before"][k], results["after"][k]) for k, (name, _) in enumerate(case.corpora)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="the first 300 test items of each set")
    parser.add_argument(
        "--train",
        type=int,
        default=1000,
        help="GSM8K training questions per corpus (default 1000; 0: all 7,473; before templates, "
        "each behind the header is a pair with every test item, which takes a while)",
    )
    parser.add_argument("--only", choices=("all", "gsm8k", "cmmlu"), default="all")
    parser.add_argument(
        "--spaced",
        action="store_true",
        help="CMMLU with a space between every character: each a word, as spec words-v3 makes them, "
        "for a contam-guard whose new manifests are words-v2",
    )
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="cg-templates-"))
    here = Path.cwd()
    lines = [
        "| set | corpus | items / records | gpt3 before → after | palm before → after "
        "| llama2 before → after |",
        "|---|---|---:|---:|---:|---:|",
    ]
    try:
        for case in cases(300 if args.quick else None, args.train or None, args.only, args.spaced):
            records = {name: len(texts) for name, texts in case.corpora}
            for name, before, after in measure(case, work):
                cells = [f"{before[r]} → {after[r]}" for r in RULES]
                size = f"{len(case.golden):,} / {records[name]:,}"
                lines.append(f"| {case.name} | {name} | {size} | " + " | ".join(cells) + " |")
    finally:
        os.chdir(here)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
