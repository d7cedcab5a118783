"""Reviews group by (test item, training record): one section with every rule that fired on the
pair, in Markdown, HTML, the console and the JSON ``groups`` view (``report.groups``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from contam_guard.cli import main
from contam_guard.report.groups import MAX_RECORDS_SHOWN

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Original text, not from any benchmark: a long item so that 12-word pieces of it make many records.
ITEM = (
    "The clockmaker of Dunmere Hollow repaired nineteen brass pendulums on Monday and then "
    "polished twice as many walnut cases on Tuesday while the apprentice wound every spring. "
    "How many pendulums and cases did the workshop finish before the harvest fair began?"
)


def run(args: list[str | Path], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    return int(exit_info.value.code or 0), capsys.readouterr().out


def ngram_rules_only(root: Path) -> None:
    """Turn the rewording rules off in the project's config: these tests are about how
    the n-gram rules' findings group (tests/reword checks the rewording rules in every review)."""
    config = root / ".contam-guard" / "contam-guard.yaml"
    text = config.read_text(encoding="utf-8")
    for rule in ("numbers", "reworded"):
        text = text.replace(f"{rule}: {{enabled: true", f"{rule}: {{enabled: false")
    config.write_text(text, encoding="utf-8")


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """The bundled demo's set and leaky training file, registered as examples/demo.sh does."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    (tmp_path / "golden").mkdir()
    (tmp_path / "data").mkdir()
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", tmp_path / "golden")
    shutil.copy(EXAMPLES / "data" / "train.jsonl", tmp_path / "data")
    assert run(["init"], capsys)[0] == 0
    register = ["register", "arith-mini", "golden/arith-mini.jsonl", "--field", "question"]
    assert run([*register, "--field", "answer", "--id-field", "id"], capsys)[0] == 0
    ngram_rules_only(tmp_path)
    return tmp_path


# The demo's four planted leaks: one (item, record) pair each, with every rule that fired on it.
DEMO_GROUPS = [
    (
        "arith-mini:answer",
        "am-011",
        "data/train.jsonl:34 record 33, field text",
        "FAIL gpt3, WARN palm llama2 gpt4",
    ),
    (
        "arith-mini:question",
        "am-003",
        "data/train.jsonl:6 record 5, field text",
        "FAIL gpt3, WARN palm llama2 gpt4",
    ),
    ("arith-mini:question", "am-007", "data/train.jsonl:13 record 12, field text", "FAIL gpt3, WARN gpt4"),
    (
        "arith-mini:question",
        "am-010",
        "data/train.jsonl:20 record 19, field text",
        "FAIL gpt3, WARN palm llama2 gpt4",
    ),
]


def test_the_demo_leaks_make_four_sections_with_all_their_rules(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        [
            "scan",
            "data/train.jsonl",
            "--review",
            "r.md",
            "--review-json",
            "r.json",
            "--review-html",
            "r.html",
        ],
        capsys,
    )
    assert code == 1
    review = (demo / "r.md").read_text(encoding="utf-8")
    headings = re.findall(
        r"^## \d+\. (\S+) v1, item (\S+) \(test index \d+\) in `([^`]+)`: (.*)$", review, re.M
    )
    assert headings == DEMO_GROUPS
    # Each section gives each of its rules' numbers once, and the shared snippet once.
    sections = review.split("\n## ")[1:]
    for section, (_, _, _, verdicts) in zip(sections, DEMO_GROUPS):
        rules = verdicts.replace("FAIL ", "").replace("WARN ", "").replace(",", "").split()
        assert [line.split("**")[1] for line in section.splitlines() if line.startswith("- **")] == rules
        assert section.count("  > …") == 1
    assert "| 3 | fail | FAIL gpt3, WARN gpt4 | arith-mini:question (v1) | am-007 (#6) |" in review

    data = json.loads((demo / "r.json").read_text(encoding="utf-8"))
    assert len(data["findings"]) == 14  # one per rule, for machines (SARIF, allowlist keys)
    got = [(g["set"] + ":" + g["view"], g["item_id"], g["verdicts"]) for g in data["groups"]]
    assert got == [(label, item, verdicts) for label, item, _, verdicts in DEMO_GROUPS]
    for group in data["groups"]:
        for rule in group["rules"]:  # each rule points at its finding
            finding = data["findings"][rule["finding"]]
            assert (finding["rule"], finding["item_id"]) == (rule["rule"], group["item_id"])
            assert rule["scope"] == ("pair" if rule["rule"] == "gpt3" else "item")

    page = (demo / "r.html").read_text(encoding="utf-8")
    assert page.count('<section class="finding ') == 4
    assert [m for m in re.findall(r'<span class="verdicts">([^<]*)</span>', page)] == [
        g[3] for g in DEMO_GROUPS
    ]

    lines = [line for line in out.splitlines() if line.startswith(("FAIL ", "WARN ", "ALLOWED "))]
    assert [line.split(": ", 1)[1].split(";")[0] for line in lines] == [g[3] for g in DEMO_GROUPS]
    assert all(
        f"item {g[1]} " in line and f"in {g[2].split(' record')[0]} " in line
        for g, line in zip(DEMO_GROUPS, lines)
    )
    assert "14 finding(s) in 4 (test item, training record) pair(s), 4 failing finding(s)." in out


@pytest.fixture
def spread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """ITEM copied whole into record 0 (GPT-3 fires there), and in overlapping 12-word pieces
    into records 1..n: they only add to the per-item rules (PaLM, Llama 2, GPT-4)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    (tmp_path / "golden.jsonl").write_text(json.dumps({"id": "cm-1", "question": ITEM}) + "\n")
    words = ITEM.split()
    pieces = [" ".join(words[s : s + 12]) for s in range(0, len(words) - 12, 4)]
    rows = [{"text": "quoted in full: " + ITEM}] + [
        {"text": f"piece {k}: {p} (end)"} for k, p in enumerate(pieces)
    ]
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert run(["init"], capsys)[0] == 0
    assert run(["register", "cm", "golden.jsonl", "--field", "question", "--id-field", "id"], capsys)[0] == 0
    ngram_rules_only(tmp_path)
    return tmp_path


def test_per_item_rules_name_their_other_records_and_extra_records_are_counted(
    spread: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(["scan", "train.jsonl", "--review", "r.md", "--review-json", "r.json"], capsys)
    assert code == 1
    data = json.loads((spread / "r.json").read_text(encoding="utf-8"))
    records = len(data["groups"])
    assert records > MAX_RECORDS_SHOWN + 1  # the case the cap is for
    [first, *rest] = data["groups"]
    assert first["record"] == 0 and first["verdicts"] == "FAIL gpt3, WARN palm llama2 gpt4"
    assert all("gpt3" not in g["verdicts"] and g["status"] == "warn" for g in rest)

    review = (spread / "r.md").read_text(encoding="utf-8")
    assert review.count("\n## ") == MAX_RECORDS_SHOWN  # the pair GPT-3 fired on, and 4 more
    hidden = records - MAX_RECORDS_SHOWN
    assert f"… and {hidden} more record(s) contribute to palm, llama2, gpt4 of item cm-1" in review
    section = review.split("\n## ")[1]
    rule_lines = [line for line in section.splitlines() if line.startswith("- **")]
    assert rule_lines[0].startswith("- **gpt3** fail: shared run of 41 words")
    assert [line.split(" (per item): ")[0] for line in rule_lines[1:]] == [
        "- **palm** warn",
        "- **llama2** warn",
        "- **gpt4** warn",
    ]
    # The per-item rules share their records: named once, five of them, the rest counted.
    [note] = [line for line in section.splitlines() if "decided per item" in line]
    assert note.startswith(
        f"- palm, llama2, gpt4 are decided per item over everything scanned: {records - 1} other "
        "record(s) contribute too: `train.jsonl:2 record 1, field text`, "
    )
    assert note.count("`train.jsonl:") == 5 and note.endswith(f" and {records - 1 - 5} more")
    later = review.split("\n## ")[2]
    assert "`train.jsonl:1 record 0, field text`" in later  # a later record names the GPT-3 one

    lines = [line for line in out.splitlines() if line.startswith(("FAIL ", "WARN "))]
    assert len(lines) == MAX_RECORDS_SHOWN and lines[0].startswith("FAIL ") and "record 0," in lines[0]
    assert f"… and {hidden} more record(s) contribute to palm, llama2, gpt4 of item cm-1" in out


def test_allowed_and_confirmed_notes_stay_with_their_rule(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (demo / "data" / "train.jsonl").write_text(
        "".join(
            json.dumps({**json.loads(line), "contam_guard": "allow"}) + "\n"
            for line in (EXAMPLES / "data" / "train.jsonl").read_text(encoding="utf-8").splitlines()
        )
    )
    code, out = run(["scan", "data/train.jsonl", "--review", "r.md"], capsys)
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("ALLOWED ")]
    assert len(lines) == 4 and all(": ALLOWED gpt3" in line for line in lines)
    # One note for the rules that share it, naming them all (not once per rule).
    assert '[gpt3 palm llama2 gpt4: allowed by marker ("contam_guard": "allow" on the record)]' in lines[0]
    review = (demo / "r.md").read_text(encoding="utf-8")
    assert "- **gpt3** allowed (marker): shared run of 38 words >= N = 13" in review
