"""Living with findings: the allowlist (keyed by content), the inline marker, and `review`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import yaml

from .conftest import FILLER, Repo, jsonl, leak

ALLOWLIST = ".contam-guard/allowlist.yaml"


def allowlist_entries(repo: Repo) -> list[dict[str, object]]:
    data = yaml.safe_load((repo.root / ALLOWLIST).read_text(encoding="utf-8"))
    entries: list[dict[str, object]] = data["entries"]
    return entries


def review_n(repo: Repo, reason: str, *args: str) -> None:
    result = repo.cg_proc("review", *args, stdin=f"n\n{reason}\n")
    assert result.code == 0, result.output
    assert "Real leak?" in result.err  # the prompt is on stderr


def test_review_n_writes_an_entry_and_the_next_scan_passes(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0)]))
    assert repo.cg("scan", "data/").code == 1
    review_n(repo, "quoted in our style guide on purpose", "data/")
    [entry] = allowlist_entries(repo)
    assert entry["set"] == "bench" and entry["item"] == "q-01" and entry["rule"] == "gpt3"
    assert entry["decision"] == "false-positive" and entry["reason"] == "quoted in our style guide on purpose"
    assert set(entry) == {"set", "view", "item", "rule", "span", "decision", "reason"}  # no line, no time

    result = repo.cg("scan", "data/")
    assert result.code == 0, result.output
    assert "ALLOWED gpt3" in result.out and "allowlisted as a false positive" in result.out
    # Nothing left to review.
    again = repo.cg_proc("review", "data/")
    assert again.code == 0 and "Nothing to review" in again.out


def test_the_same_leak_moved_elsewhere_still_matches(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    review_n(repo, "fine", "data/")
    repo.write("data/train.jsonl", jsonl([FILLER, FILLER]))
    repo.write("data/other/moved.jsonl", jsonl([FILLER, "x", leak(0, "other words before", "after")]))
    assert repo.cg("scan", "data/").code == 0


def test_a_second_different_leak_in_the_same_record_still_fails(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    review_n(repo, "fine", "data/")
    repo.write("data/train.jsonl", jsonl([leak(0) + " and also " + leak(1)]))
    result = repo.cg("scan", "data/")
    assert result.code == 1, result.output
    assert "FAIL    gpt3   bench:question item q-02" in result.out
    assert "ALLOWED gpt3   bench:question item q-01" in result.out


def test_no_allowlist_audits_everything(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    review_n(repo, "fine", "data/")
    assert repo.cg("scan", "data/").code == 0
    assert repo.cg("scan", "data/", "--no-allowlist").code == 1


def test_stale_entries_are_reported_not_failed(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    review_n(repo, "fine", "data/")
    repo.write("data/train.jsonl", jsonl([FILLER]))
    result = repo.cg("scan", "data/")
    assert result.code == 0
    assert "matches nothing in this scan (stale)" in result.err


def test_expired_entries_apply_no_more_and_are_reported(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    review_n(repo, "fine until the cleanup", "data/")
    text = (repo.root / ALLOWLIST).read_text(encoding="utf-8")
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    tomorrow = (dt.date.today() + dt.timedelta(days=1)).isoformat()
    (repo.root / ALLOWLIST).write_text(text + f"  until: '{tomorrow}'\n", encoding="utf-8")
    assert repo.cg("scan", "data/").code == 0
    (repo.root / ALLOWLIST).write_text(text + f"  until: {yesterday}\n", encoding="utf-8")
    result = repo.cg("scan", "data/")
    assert result.code == 1
    assert f"expired on {yesterday}" in result.err


def test_inline_marker_is_honoured_and_reported_and_ignored_under_audit(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)], contam_guard="allow"))
    result = repo.cg("scan", "data/", "--review", repo.root.parent / "review.md")
    assert result.code == 0, result.output
    assert "allowed by marker" in result.out
    assert "allowed (marker)" in (repo.root.parent / "review.md").read_text(encoding="utf-8")
    assert repo.cg("scan", "data/", "--no-allowlist").code == 1


def test_review_y_records_a_confirmed_leak_that_still_fails(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0), leak(1)]))
    result = repo.cg_proc("review", "data/", "--by", "ana", stdin="y\ns\n")
    assert result.code == 0, result.output
    [entry] = allowlist_entries(repo)
    assert entry["decision"] == "leak" and entry["item"] == "q-01" and entry["by"] == "ana"
    scan = repo.cg("scan", "data/")
    assert scan.code == 1
    assert "confirmed leak" in scan.out
    # Only the skipped one is asked again; q then ends the review.
    again = repo.cg_proc("review", "data/", stdin="q\n")
    assert "1 finding(s) to review" in again.out and "q-02" in again.err


def test_review_asks_for_a_reason_and_tolerates_bad_answers(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(2)]))
    result = repo.cg_proc("review", "data/", stdin="maybe\nn\n\n  a real reason  \n")
    assert result.code == 0, result.output
    assert "answer y, n, s or q" in result.err and "a reason is required" in result.err
    assert allowlist_entries(repo)[0]["reason"] == "a real reason"
    # End of input at the reason prompt writes nothing more and is not an error.
    repo.write("data/train.jsonl", jsonl([leak(2), leak(3)]))
    result = repo.cg_proc("review", "data/", stdin="n\n")
    assert result.code == 0 and "Traceback" not in result.err
    assert len(allowlist_entries(repo)) == 1


def test_same_decisions_give_byte_identical_allowlists(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0), leak(3), leak(1)]))
    answers = "n\nreason one\ny\nn\nreason three\n"
    assert repo.cg_proc("review", "data/", stdin=answers).code == 0
    first = (repo.root / ALLOWLIST).read_bytes()
    (repo.root / ALLOWLIST).unlink()
    # Different order on disk, same content: the file is the same.
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0), leak(3), leak(1)]))
    assert repo.cg_proc("review", "data/", stdin=answers).code == 0
    assert (repo.root / ALLOWLIST).read_bytes() == first
    assert first.endswith(b"\n") and b"\n  line:" not in first
    # A scan never rewrites it.
    assert repo.cg("scan", "data/").code == 1  # the "y" one still fails
    assert (repo.root / ALLOWLIST).read_bytes() == first


def test_a_broken_allowlist_is_exit_2_naming_the_problem(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    repo.write(ALLOWLIST, "version: 1\nentries:\n- set: bench\n  view: question\n  item: q-01\n")
    result = repo.cg("scan", "data/")
    assert result.code == 2
    assert "allowlist.yaml: entry 1" in result.err and "reason" in result.err


def test_json_review_carries_the_reason(repo: Repo, tmp_path: Path) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    review_n(repo, "a reason", "data/")
    out = tmp_path / "r.json"
    assert repo.cg("scan", "data/", "--format", "json", "--output", out).code == 0
    [finding] = [f for f in json.loads(out.read_text())["findings"] if f["rule"] == "gpt3"]
    assert finding["allowed"] is True and finding["allowed_by"] == "allowlist"
    assert finding["reason"] == "a reason"
    assert finding["span"] == allowlist_entries(repo)[0]["span"]
