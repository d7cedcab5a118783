"""Template n-grams through the command line, on real GSM8K questions wrapped in an MMLU header:
a record sharing only the header is clean; the whole item, or the item without its
header, still fires every word rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_jsonl

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "gsm8k"
if not DATA.is_dir():  # the worktree layout: /work/<tree>/tests -> /work/shared
    DATA = Path("/work/shared/data/gsm8k")
HEADER = "The following are multiple choice questions (with answers) about high school mathematics."
KEY = "k3y-" + "0123456789abcdef" * 2 + "wxyz"
WORD_RULES = ("gpt3", "palm", "llama2")

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data/gsm8k")


def _questions(split: str, count: int) -> list[str]:
    with (DATA / f"{split}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line)["question"] for _, line in zip(range(count), handle, strict=False)]


TEST = _questions("test", 200)
TRAIN = _questions("train", 40)


@pytest.fixture
def project(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with 200 GSM8K test questions, each behind the header, and training files."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    assert cli("init").code == 0
    write_jsonl(tmp_path / "golden/mmlu_gsm.jsonl", ({"question": f"{HEADER}\n\n{q}"} for q in TEST))
    # The header around unrelated questions (GSM8K's training split): the false hits.
    write_jsonl(tmp_path / "header_only.jsonl", ({"text": f"{HEADER}\n\n{q}"} for q in TRAIN))
    write_jsonl(
        tmp_path / "whole.jsonl", [{"text": f"Practice set.\n{HEADER}\n\n{TEST[7]}\nWork it out below."}]
    )
    write_jsonl(tmp_path / "stripped.jsonl", [{"text": f"Practice set.\n{TEST[9]}\nWork it out below."}])
    return tmp_path


def _register(cli: Any, *extra: str) -> None:
    result = cli("register", "mmlu_gsm", "golden/mmlu_gsm.jsonl", "--field", "question", *extra)
    assert result.code == 0, result.output


def _fired(cli: Any, training: str) -> dict[str, set[int]]:
    """Per word rule, the test items it fired on for ``training``."""
    result = cli("scan", training, "--format", "json")
    assert result.code in (0, 1), result.output
    fired: dict[str, set[int]] = {rule: set() for rule in WORD_RULES}
    for finding in json.loads(result.out)["findings"]:
        if finding["rule"] in fired:
            fired[finding["rule"]].add(int(finding["item_id"]))
    return fired


@pytest.mark.parametrize(
    ("training", "expected"),
    [
        ("header_only.jsonl", {"gpt3": set(), "palm": set(), "llama2": set()}),
        ("whole.jsonl", {"gpt3": {7}, "palm": {7}, "llama2": {7}}),
        ("stripped.jsonl", {"gpt3": {9}, "palm": {9}, "llama2": {9}}),
    ],
)
def test_truth_table(cli: Any, project: Path, training: str, expected: dict[str, set[int]]) -> None:
    _register(cli)
    assert _fired(cli, training) == expected


def test_without_marks_the_header_alone_fires(cli: Any, project: Path) -> None:
    """Before: an n-gram must be in more items than the set has, so nothing is template."""
    _register(cli, "--template-min-items", "1000")
    assert len(_fired(cli, "header_only.jsonl")["gpt3"]) > 0
    # ... and the same set marked again (unchanged content, same version) is clean.
    _register(cli, "--template-min-items", "5")
    assert _fired(cli, "header_only.jsonl")["gpt3"] == set()


def test_thresholds_are_kept_with_the_set(cli: Any, project: Path) -> None:
    _register(cli, "--template-share", "0.5", "--template-min-items", "7")
    index = json.loads((project / ".contam-guard/manifest.json").read_text())
    assert index["sets"]["mmlu_gsm"]["templates"] == {"share": 0.5, "min_items": 7}
    _register(cli)  # re-registering without the options keeps them
    index = json.loads((project / ".contam-guard/manifest.json").read_text())
    assert index["sets"]["mmlu_gsm"]["templates"] == {"share": 0.5, "min_items": 7}
    # The header is in every item: more than half of them.
    assert _fired(cli, "header_only.jsonl")["gpt3"] == set()
    result = cli(
        "register", "mmlu_gsm", "golden/mmlu_gsm.jsonl", "--field", "question", "--template-share", "1"
    )
    assert result.code == 2 and "--template-share" in result.output


def test_sets_and_dupes_report_the_marks_without_text(cli: Any, project: Path) -> None:
    _register(cli)
    listing = cli("sets")
    assert listing.code == 0
    row = next(line for line in listing.out.splitlines() if "mmlu_gsm" in line)
    # The header's 8 template 5-grams at least (with common first words, a few more); its most
    # common one is in all 200 items.
    cells = [cell.strip() for cell in row.split("│") if cell.strip()]
    count, top = cells[-2].split()
    assert int(count) >= 8 and top == "(200)"
    assert "template 5-grams" in listing.out
    dupes = cli("dupes", "mmlu_gsm")
    assert dupes.code == 0, dupes.output
    assert f"most common in 200 of {len(TEST)} items" in dupes.out
    # Items sharing only the header are not pairs (GSM8K's test split has no 13-word repeats
    # among these 200 questions).
    assert "shared run of" not in dupes.out
    for shown in (listing.output, dupes.output):
        assert "multiple choice" not in shown and "mathematics" not in shown


def test_a_keyed_manifest_seals_the_settings_and_still_ignores_the_header(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / ".contam-guard/manifest.json").unlink()
    monkeypatch.setenv("CONTAM_GUARD_KEY", KEY)
    assert cli("init", "--keyed").code == 0
    _register(cli, "--template-share", "0.02")
    text = (project / ".contam-guard/manifest.json").read_text()
    assert "templates" not in text and "0.02" not in text
    assert _fired(cli, "header_only.jsonl") == {rule: set() for rule in WORD_RULES}
    assert _fired(cli, "whole.jsonl")["gpt3"] == {7}
    monkeypatch.delenv("CONTAM_GUARD_KEY")
    sealed = cli("sets")
    assert sealed.code == 0 and "(sealed)" in sealed.out


def test_registration_is_deterministic(cli: Any, project: Path, tmp_path: Path, monkeypatch: Any) -> None:
    _register(cli)
    first = {p.name: p.read_bytes() for p in (project / ".contam-guard/sets/mmlu_gsm").iterdir()}
    other = tmp_path / "again"
    other.mkdir()
    (other / "golden").mkdir()
    (other / "golden/mmlu_gsm.jsonl").write_bytes((project / "golden/mmlu_gsm.jsonl").read_bytes())
    monkeypatch.chdir(other)
    assert cli("init").code == 0
    _register(cli)
    again = {p.name: p.read_bytes() for p in (other / ".contam-guard/sets/mmlu_gsm").iterdir()}
    assert first == again


def test_scrub_leaves_the_header_and_removes_the_item(cli: Any, project: Path) -> None:
    _register(cli)
    out = project / "clean.jsonl"
    result = cli("scrub", "header_only.jsonl", "-o", out)
    assert result.code == 0, result.output
    assert out.read_bytes() == (project / "header_only.jsonl").read_bytes()
    result = cli("scrub", "whole.jsonl", "-o", out)
    assert result.code == 0, result.output
    text = out.read_text(encoding="utf-8")  # the record cut, or dropped (its pieces too short)
    assert TEST[7][:40] not in text and "mathematics" not in text  # the header: in the 200-char window
    # Before (nothing template): a 13-gram of the header and a question's first word is golden.
    _register(cli, "--template-min-items", "1000")
    result = cli("scrub", "header_only.jsonl", "-o", out)
    assert result.code == 0, result.output
    assert out.read_bytes() != (project / "header_only.jsonl").read_bytes()
