"""Living with findings: the allowlist (keyed by content), the inline marker, and `review`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import Result

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
    # No line, no time; the file it was seen in (relative to the root) scopes stale notices only.
    assert set(entry) == {"set", "view", "item", "rule", "span", "decision", "reason", "files"}
    assert entry["files"] == ["data/train.jsonl"]

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
    # One line per (item, record): the two leaks share the record, each its own line and verdict.
    q02 = "FAIL    bench:question item q-02 (#1) in data/train.jsonl:1 (record 0, field text): FAIL gpt3"
    assert q02 in result.out
    q01 = next(line for line in result.out.splitlines() if "item q-01 " in line)
    # The reviewed pair's other rules (warnings about the very same pair) are allowed with it.
    assert q01.startswith("ALLOWED bench:question item q-01") and "ALLOWED gpt3 palm" in q01
    assert "WARN" not in q01


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
    assert "false-positive entry for bench:question item q-01 gpt3" in result.err
    assert "matches nothing in data/train.jsonl (stale)" in result.err


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


def _notices(result: Result) -> list[str]:
    """The allowlist notices of a run, one per entry (rich may wrap a long notice)."""
    text = " ".join(result.err.split())
    return [part.strip() for part in text.split("notice: allowlist.yaml: ")[1:]]


@pytest.fixture
def reviewed(repo: Repo) -> Repo:
    """q-01 reviewed a false positive in data/a.jsonl, q-02 a confirmed leak in data/b.jsonl;
    then both leaks are removed, so both entries match nothing."""
    repo.write("data/a.jsonl", jsonl([leak(0)]))
    repo.write("data/b.jsonl", jsonl([leak(1)]))
    answered = repo.cg_proc("review", "data/", stdin="n\nour own example\ny\n")
    assert answered.code == 0, answered.output
    entries = {str(e["item"]): e for e in allowlist_entries(repo)}
    assert entries["q-01"]["files"] == ["data/a.jsonl"] and entries["q-02"]["files"] == ["data/b.jsonl"]
    repo.write("data/a.jsonl", jsonl([FILLER]))
    repo.write("data/b.jsonl", jsonl([FILLER]))
    return repo


FP_STALE = (
    "the false-positive entry for bench:question item q-01 gpt3 (span {span}) matches nothing in "
    "data/a.jsonl (stale); remove it if the data it allowed is gone"
)
LEAK_STALE = (
    "the confirmed-leak entry for bench:question item q-02 gpt3 (span {span}) is no longer found in "
    "data/b.jsonl (stale); if the leak was removed (scrubbed), remove the entry"
)
LEAK_GONE = (
    "the confirmed-leak entry for bench:question item q-02 gpt3 (span {span}) names only files that "
    "no longer exist (data/b.jsonl) (stale); if the leak was removed (scrubbed), remove the entry"
)


@pytest.mark.parametrize(
    ("scan", "delete", "expected"),
    [
        (["data/a.jsonl"], None, [FP_STALE]),  # b.jsonl was not read: its entry is not stale
        (["data/b.jsonl"], None, [LEAK_STALE]),  # worded for a confirmed leak, not "allowed"
        (["data/"], None, [FP_STALE, LEAK_STALE]),
        (["data/a.jsonl"], "data/b.jsonl", [FP_STALE, LEAK_GONE]),  # its file is gone: say so
        (["--staged"], None, []),  # a diff scan sees only part of the data: never stale
    ],
)
def test_stale_notices_only_for_entries_whose_files_were_scanned(
    reviewed: Repo, scan: list[str], delete: str | None, expected: list[str]
) -> None:
    spans = {str(e["item"]): str(e["span"])[:12] for e in allowlist_entries(reviewed)}
    if delete is not None:
        (reviewed.root / delete).unlink()
    reviewed.git("add", "-A")
    result = reviewed.cg("scan", *scan)
    assert result.code == 0, result.output
    want = [line.format(span=spans["q-01" if "q-01" in line else "q-02"]) for line in expected]
    assert _notices(result) == want


def test_stale_notice_paths_are_relative_to_the_root_from_a_subfolder(
    reviewed: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(reviewed.root / "data")
    result = reviewed.cg("scan", "a.jsonl")
    assert result.code == 0, result.output
    [notice] = _notices(result)
    assert "q-01" in notice and "matches nothing in data/a.jsonl (stale)" in notice


def test_an_entry_naming_no_file_is_stale_in_a_full_scan_with_that_caveat(reviewed: Repo) -> None:
    path = reviewed.root / ALLOWLIST
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for entry in data["entries"]:
        del entry["files"]  # as written by hand or by an older contam-guard
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    notices = _notices(reviewed.cg("scan", "data/a.jsonl"))
    assert len(notices) == 2
    assert all("in this scan (stale); the entry names no file" in n for n in notices)
    assert "q-02 gpt3" in notices[1] and "is no longer found" in notices[1] and "allowed" not in notices[1]


def test_an_expired_confirmed_leak_says_review_asks_again(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    assert repo.cg_proc("review", "data/", stdin="y\n").code == 0
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    path = repo.root / ALLOWLIST
    path.write_text(path.read_text(encoding="utf-8") + f"  until: {yesterday}\n", encoding="utf-8")
    [notice] = _notices(repo.cg("scan", "data/"))
    assert notice.startswith("the confirmed-leak entry for bench:question item q-01 gpt3")
    assert notice.endswith(f"expired on {yesterday}; `contam-guard review` asks about it again")
