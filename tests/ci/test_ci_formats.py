"""--format text|json|markdown|sarif|github, to stdout or --output, for every scan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from contam_guard.core.config import load_config
from contam_guard.engines.pipeline import ScanRequest, execute
from contam_guard.io.readers.base import ReadOptions
from contam_guard.report import markdown
from contam_guard.report.github import escape_data, escape_property

from .conftest import FILLER, GOLDEN, Repo, jsonl, leak


@pytest.fixture
def leaky(repo: Repo) -> Repo:
    """Two failing leaks (q-01, q-02), one allowed by its record's marker (q-03)."""
    rows = [
        {"text": leak(0)},
        {"text": FILLER},
        {"text": leak(1)},
        {"text": leak(2), "contam_guard": "allow"},
    ]
    repo.write("data/train.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return repo


def test_sarif_is_valid_2_1_0_with_levels_fingerprints_and_suppressions(
    leaky: Repo, sarif_schema: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "scan.sarif"
    result = leaky.cg("scan", "data/", "--format", "sarif", "--output", out)
    assert result.code == 1
    log = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(sarif_schema).validate(log)

    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-schema-2.1.0.json")
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "contam-guard" and driver["version"] and driver["informationUri"]
    rules = ["gpt3", "whole", "palm", "llama2", "gpt4", "numbers", "reworded"]
    assert [r["id"] for r in driver["rules"]] == rules
    assert all(r["fullDescription"]["text"] for r in driver["rules"])
    gpt3 = [r for r in log["runs"][0]["results"] if r["ruleId"] == "gpt3"]
    levels = {r["properties"]["itemId"]: r["level"] for r in gpt3}
    assert levels == {"q-01": "error", "q-02": "error", "q-03": "note"}
    by_item = {r["properties"]["itemId"]: r for r in gpt3}
    location = by_item["q-02"]["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "data/train.jsonl"}, "region": {"startLine": 3}}
    assert by_item["q-03"]["suppressions"][0]["kind"] == "inSource"
    assert "suppressions" not in by_item["q-01"]
    warn = [r for r in log["runs"][0]["results"] if r["ruleId"] == "palm"]
    assert warn and all(r["level"] in ("warning", "note") for r in warn)
    assert GOLDEN[0]["question"][:40] not in out.read_text()  # numbers and ids, never the text

    # Fingerprints are content keys: the same leak on another line keeps them.
    before = by_item["q-01"]["partialFingerprints"]
    leaky.write("data/train.jsonl", jsonl([FILLER, FILLER, "new", leak(0)]))
    leaky.cg("scan", "data/", "--format", "sarif", "--output", out)
    moved = [r for r in json.loads(out.read_text())["runs"][0]["results"] if r["ruleId"] == "gpt3"]
    assert moved[0]["partialFingerprints"] == before
    assert moved[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 4


def test_sarif_of_a_clean_scan_is_valid(repo: Repo, sarif_schema: dict[str, Any]) -> None:
    result = repo.cg("scan", "data/", "--format", "sarif")
    assert result.code == 0
    log = json.loads(result.out)  # stdout holds only the SARIF
    jsonschema.Draft7Validator(sarif_schema).validate(log)
    assert log["runs"][0]["results"] == []
    assert "Scanned" in result.err  # the people's summary moved to stderr


def test_allowlisted_findings_carry_an_external_suppression(
    leaky: Repo, sarif_schema: dict[str, Any]
) -> None:
    answered = leaky.cg_proc("review", "data/", stdin="n\nknown duplicate\ns\n")
    assert answered.code == 0, answered.output
    result = leaky.cg("scan", "data/", "--format", "sarif")
    log = json.loads(result.out)
    jsonschema.Draft7Validator(sarif_schema).validate(log)
    suppressed = [r for r in log["runs"][0]["results"] if r["ruleId"] == "gpt3" and r["level"] == "note"]
    kinds = sorted(r["suppressions"][0]["kind"] for r in suppressed)
    assert kinds == ["external", "inSource"]
    assert any("known duplicate" in r["suppressions"][0]["justification"] for r in suppressed)


def test_github_annotations(leaky: Repo) -> None:
    result = leaky.cg("scan", "data/", "--format", "github")
    assert result.code == 1
    lines = result.out.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 2
    assert errors[0].startswith(
        "::error file=data/train.jsonl,line=1,title=contam-guard gpt3%3A bench%3Aquestion"
    )
    assert all(line.startswith(("::error ", "::warning ", "::notice::")) for line in lines)
    assert "q-03" not in result.out  # allowed: not annotated
    assert "\x1b[" not in result.out


def test_annotation_escaping() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_annotations_are_capped_at_ten_per_level_with_a_count_of_the_rest(repo: Repo) -> None:
    # 12 records each leaking q-01 and q-02: 24 gpt3 errors; palm etc. warn once per item.
    repo.write("data/train.jsonl", jsonl([leak(i % 2, f"copy {i}", f"end {i}") for i in range(24)]))
    # the n-gram rules only: the rewording rules would add a warning per record
    result = repo.cg("scan", "data/", "--format", "github", "--disable", "numbers", "--disable", "reworded")
    lines = result.out.splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert sum(line.startswith("::warning ") for line in lines) <= 10
    assert lines[-1] == (
        "::notice::contam-guard: 14 more finding(s) not annotated (GitHub shows 10 errors and "
        "10 warnings per step); see the job summary and the review file"
    )


def test_json_markdown_and_text_formats(leaky: Repo, tmp_path: Path) -> None:
    data = json.loads(leaky.cg("scan", "data/", "--format", "json").out)
    assert data["format"] == "contam-guard-review" and data["summary"]["failing"] == 2
    markdown = leaky.cg("scan", "data/", "--format", "markdown").out
    assert markdown.startswith("# contam-guard review") and "allowed (marker)" in markdown
    text_file = tmp_path / "out.txt"
    result = leaky.cg("scan", "data/", "--format", "text", "--output", text_file)
    assert result.code == 1
    text = text_file.read_text(encoding="utf-8")
    assert "FAIL gpt3" in text and "2 failing finding(s)" in text and "\x1b[" not in text
    assert leaky.cg("scan", "data/", "--format", "xml").code == 2


def test_job_summary_is_a_capped_markdown_table(repo: Repo, tmp_path: Path) -> None:
    repo.write("data/train.jsonl", jsonl([leak(i % 4, f"copy {i} |", f"end {i}") for i in range(40)]))
    out = tmp_path / "summary.md"
    assert repo.cg("scan", "data/", "--summary", out).code == 1
    text = out.read_text(encoding="utf-8")
    assert "| # | status | rules | set:view | item | training record | detail |" in text
    assert "**40 failing finding(s)**" in text

    # The same report, cut to a small limit: whole rows and a count of the rest.
    report = execute(load_config(), ScanRequest([Path("data")], ReadOptions())).report
    small = markdown.summary(report, limit=2000)
    assert len(small.encode("utf-8")) <= 2000
    assert "more row(s) not shown" in small
    assert all(
        line.count(" | ") >= 6 for line in small.splitlines() if line.startswith("| ") and "---" not in line
    )


def test_no_color_and_no_escape_codes_in_machine_formats(leaky: Repo) -> None:
    for fmt in ("json", "markdown", "sarif", "github"):
        proc = leaky.cg_proc("scan", "data/", "--format", fmt, env={"FORCE_COLOR": "1"})
        assert "\x1b[" not in proc.out, fmt
    proc = leaky.cg_proc("scan", "data/", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "FAIL" in proc.out and "\x1b[3" not in proc.out  # no colour (NO_COLOR wins)
