"""``scan --max-pairs-per-item N`` / ``scan.max_pairs_per_item``: reports list at most N records
per test item, count every one, and exit as they would with every record listed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import Project
from tests.helpers import write_jsonl

COPIES, PARTIALS = 30, 4


def training(project: Project) -> Path:
    """Item lx-01 copied whole into 30 records, and its first 15 words into 4 more."""
    tokens = project.question_words(0)
    full = " ".join(tokens)
    texts = [f"record {k}: {full}" for k in range(COPIES)]
    texts += [f"partial {k}: {' '.join(tokens[:15])} and nothing more" for k in range(PARTIALS)]
    return project.training("train.jsonl", texts)


def review(project: Project, *args: str, code: int = 1) -> dict[str, Any]:
    out = project.root / "review.json"
    result = project.cli("scan", "train.jsonl", "--review-json", out, *args)
    assert result.code == code, result.output
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    data["console"] = result.out
    return data


def by_rule(data: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in data["findings"] if f["rule"] == rule]


@pytest.mark.parametrize(
    ("args", "cap"), [((), 20), (("--max-pairs-per-item", "5"), 5), (("-o", "x.txt"), 20)]
)
def test_the_cap_lists_n_records_and_counts_them_all(
    registered: Project, args: tuple[str, ...], cap: int
) -> None:
    training(registered)
    data = review(registered, *args)
    assert data["summary"]["max_pairs_per_item"] == cap
    per_item = [f for f in data["findings"] if f["rule"] in ("palm", "llama2", "gpt4")]  # decided per item
    for rule in ("numbers", "reworded"):  # the rewording rules, per pair: the best ``cap`` pairs listed
        assert len(by_rule(data, rule)) == cap
    assert per_item and all(f["records"] == COPIES + PARTIALS and len(f["pairs"]) == cap for f in per_item)
    gpt3 = by_rule(data, "gpt3")
    listed = [f for f in gpt3 if f["pairs"]]
    summaries = [f for f in gpt3 if not f["pairs"]]
    assert len(listed) == cap and all(f["records"] == 1 for f in listed)
    assert [f["records"] for f in summaries] == [COPIES - cap, PARTIALS]
    assert summaries[0]["detail"].startswith(f"and {COPIES - cap} more record(s) not listed")
    assert all(f["action"] == "fail" for f in gpt3)
    if "-o" not in args:
        assert f"and {PARTIALS} more record(s) not listed (--max-pairs-per-item)" in data["console"]


def test_zero_lists_every_record_and_the_setting_sets_the_default(registered: Project) -> None:
    training(registered)
    every = review(registered, "--max-pairs-per-item", "0")
    gpt3 = by_rule(every, "gpt3")
    assert len(gpt3) == COPIES + PARTIALS and all(len(f["pairs"]) == 1 for f in gpt3)
    assert every["summary"]["max_pairs_per_item"] == 0

    config = registered.root / ".contam-guard" / "contam-guard.yaml"
    config.write_text(config.read_text().replace("max_pairs_per_item: 20", "max_pairs_per_item: 2"))
    two = review(registered)
    assert len([f for f in by_rule(two, "gpt3") if f["pairs"]]) == 2
    assert sum(f["records"] for f in by_rule(two, "gpt3")) == COPIES + PARTIALS
    assert len(json.dumps(two)) < len(json.dumps(every)) / 3
    assert {f["span"] for f in by_rule(two, "gpt3")} == {f["span"] for f in gpt3}  # the same keys


@pytest.mark.parametrize("value", ["-1", "lots"])
def test_a_bad_value_is_a_usage_error(registered: Project, value: str) -> None:
    training(registered)
    result = registered.cli("scan", "train.jsonl", "--max-pairs-per-item", value)
    assert result.code == 2, result.output
    assert "--max-pairs-per-item" in result.output


def test_a_bad_setting_is_a_config_error(registered: Project) -> None:
    training(registered)
    config = registered.root / ".contam-guard" / "contam-guard.yaml"
    config.write_text(config.read_text().replace("max_pairs_per_item: 20", "max_pairs_per_item: -3"))
    result = registered.cli("scan", "train.jsonl")
    assert result.code == 2, result.output
    assert "max_pairs_per_item" in result.output


def test_allowlisted_and_redacted_runs_pass_with_any_cap(project: Project) -> None:
    """Allowlist entries made from a full, unredacted review keep matching every record, listed
    or only counted, with ``--redact-pii`` masking the e-mail address inside the shared run."""
    question = (
        "Send the seven finished lanterns of the glassblower to ottoline.vennick@example.org before "
        "the thunderstorm reaches the harbour tonight"
    )
    write_jsonl(project.root / "golden" / "mail.jsonl", [{"id": "m-1", "question": question}])
    assert (
        project.cli("register", "mail", "golden/mail.jsonl", "--field", "question", "--id-field", "id").code
        == 0
    )
    project.training("train.jsonl", [f"note {k}: {question}" for k in range(6)])
    full = review(project, "--max-pairs-per-item", "0")
    entries = [
        {"set": "mail", "view": "question", "item": "m-1", "rule": "gpt3", "span": span, "reason": "a test"}
        for span in sorted({f["span"] for f in by_rule(full, "gpt3")})
    ]
    assert len(entries) == 1  # one leak, one key
    allowlist = project.root / ".contam-guard" / "allowlist.yaml"
    allowlist.write_text(yaml.safe_dump({"version": 1, "entries": entries}))
    for cap in ("0", "1", "3"):
        data = review(project, "--redact-pii", "--max-pairs-per-item", cap, code=0)
        gpt3 = by_rule(data, "gpt3")
        assert all(f["allowed"] for f in gpt3) and sum(f["records"] for f in gpt3) == 6
        assert all("[EMAIL]" in p["shared_text"] for f in gpt3 for p in f["pairs"])
    assert (
        review(project, "--redact-pii", "--max-pairs-per-item", "1", "--no-allowlist")["summary"]["exit_code"]
        == 1
    )


def test_people_s_reviews_say_what_the_cap_left_unlisted(registered: Project) -> None:
    """Markdown, HTML and the console group by (item, record): records beyond the cap are in no
    group, so each review says, per item, which findings count them."""
    training(registered)
    result = registered.cli(
        "scan", "train.jsonl", "--max-pairs-per-item", "4", "--review", "r.md", "--review-html", "r.html"
    )
    assert result.code == 1, result.output
    gpt3 = f"FAIL gpt3 of item lx-01: and {COPIES - 4} more record(s) not listed (--max-pairs-per-item)"
    per_item = f"of item lx-01: {COPIES + PARTIALS - 4} more contributing record(s) counted, not listed"
    markdown = (registered.root / "r.md").read_text(encoding="utf-8")
    page = (registered.root / "r.html").read_text(encoding="utf-8")
    for text in (result.out, markdown, page):
        assert gpt3 in text and per_item in text
        assert f"FAIL gpt3 of item lx-01: and {PARTIALS} more record(s) not listed" in text
