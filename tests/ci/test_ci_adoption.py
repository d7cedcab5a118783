"""Adopting the guard on a repository that already has data: a baseline in one step, warnings
that can be reviewed and then stay quiet, scrub that honours the allowlist, next steps that work
on the file's format, a job summary that ends with them, and ``--quiet``.

Real git repositories (``tests/ci/conftest.py``), contam-guard in this process or as a process.
Before this change (main at f926a83): ``baseline`` and ``--quiet`` were usage errors (exit 2);
``review --all`` answering ``n`` on a reworded warning crashed (exit 3, the allowlist knew four
rules); scrub dropped an allowlisted record; a Parquet file's next step was a scrub command that
exits 2; the job summary had no next steps.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import shutil
import signal
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from .conftest import FILLER, PROJECT, Repo, jsonl, leak

ALLOWLIST = ".contam-guard/allowlist.yaml"
EXAMPLES = PROJECT / "examples"


def entries(repo: Repo) -> list[dict[str, object]]:
    data = yaml.safe_load((repo.root / ALLOWLIST).read_text(encoding="utf-8"))
    found: list[dict[str, object]] = data["entries"]
    return found


def finding_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("FAIL ", "WARN ", "ALLOWED "))]


@pytest.fixture
def demo(repo: Repo) -> Repo:
    """``repo`` with the bundled example's golden set (questions and answers) and its data: leaks
    that fail, and a reworded answer in a chat that only warns."""
    shutil.copy(EXAMPLES / "golden" / "arith-mini.jsonl", repo.root / "golden" / "arith.jsonl")
    for name in ("train.jsonl", "chat.jsonl"):
        shutil.copy(EXAMPLES / "data" / name, repo.root / "data" / name)
    args = ["register", "arith", "golden/arith.jsonl", "--field", "question", "--field", "answer"]
    assert repo.cg(*args, "--id-field", "id").code == 0
    repo.commit("the example's data")
    return repo


# --- baseline --------------------------------------------------------------------------------


def test_baseline_records_every_finding_and_only_new_ones_fail(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0), leak(1)]))
    assert repo.cg("scan", "data/").code == 1
    done = repo.cg("baseline", "data/", "--date", "2026-01-15")
    assert done.code == 0, done.output
    assert "Recorded " in done.out and "(2 failing, " in done.out and "0 confirmed leak(s)" in done.out
    found = entries(repo)
    assert {e["item"] for e in found} == {"q-01", "q-02"}
    for entry in found:
        assert entry["baseline"] == "2026-01-15" and entry["decision"] == "false-positive"
        assert str(entry["reason"]).startswith("baseline:") and entry["files"] == ["data/train.jsonl"]
    after = repo.cg("scan", "data/")
    assert after.code == 0, after.output
    assert not [line for line in finding_lines(after.out) if not line.startswith("ALLOWED ")]

    # Again, another day, nothing new: not a byte changes (no churn).
    before = (repo.root / ALLOWLIST).read_bytes()
    again = repo.cg("baseline", "data/", "--date", "2026-03-01")
    assert again.code == 0 and "Nothing to add" in again.out
    assert (repo.root / ALLOWLIST).read_bytes() == before

    # A new leak fails as usual, and only it.
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0), leak(1), leak(2)]))
    new = repo.cg("scan", "data/")
    assert new.code == 1
    assert [line.split(" in ")[0] for line in finding_lines(new.out) if line.startswith("FAIL")] == [
        "FAIL    bench:question item q-03 (#2)"
    ]


def test_baseline_leaves_confirmed_leaks_and_expired_entries_to_people(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0), leak(1), leak(2)]))
    reviewed = repo.cg_proc("review", "data/", stdin="y\nn\nfine until spring\nq\n")
    assert reviewed.code == 0, reviewed.output
    text = (repo.root / ALLOWLIST).read_text(encoding="utf-8")
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    (repo.root / ALLOWLIST).write_text(text + f"  until: {yesterday}\n", encoding="utf-8")  # q-02's
    done = repo.cg("baseline", "data/")
    assert done.code == 0, done.output
    assert "1 confirmed leak(s)" in done.out and "(1 failing, " in done.out
    assert "expired on" in done.err and "a baseline does not renew it" in done.err
    by_item = {e["item"]: e for e in entries(repo) if e["rule"] == "gpt3"}
    assert by_item["q-01"]["decision"] == "leak" and "baseline" not in by_item["q-01"]
    assert by_item["q-02"]["until"] == yesterday and "baseline" not in by_item["q-02"]
    assert "baseline" in by_item["q-03"]
    assert repo.cg("scan", "data/").code == 1  # the confirmed leak and the expired entry still fail


def test_baseline_dry_run_and_refusals(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    dry = repo.cg("baseline", "data/", "--dry-run")
    assert dry.code == 0 and "Would record 1 finding(s)" in dry.out
    assert not (repo.root / ALLOWLIST).exists()
    assert repo.cg("baseline", "data/", "--no-allowlist").code == 2
    assert repo.cg("baseline", "data/", "--date", "15/01/2026").code == 2
    assert repo.cg("baseline").code == 2


def test_review_baseline_audits_what_the_baseline_recorded(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0), leak(1)]))
    assert repo.cg("baseline", "data/").code == 0
    assert "Nothing to review" in repo.cg_proc("review", "data/").out  # baselined: not asked again
    audited = repo.cg_proc("review", "data/", "--baseline", "--by", "ana", stdin="y\nn\nour own example\n")
    assert audited.code == 0, audited.output
    by_item = {e["item"]: e for e in entries(repo) if e["rule"] == "gpt3"}
    assert by_item["q-01"]["decision"] == "leak" and by_item["q-01"]["by"] == "ana"
    assert by_item["q-02"]["reason"] == "our own example"
    assert all("baseline" not in e for e in by_item.values())  # a person decided: no longer baseline
    assert repo.cg("scan", "data/").code == 1  # the confirmed leak fails
    done = repo.cg_proc("review", "data/", "--baseline")
    assert "no finding is allowed by a baseline entry" in done.out


# --- review walks warnings; an allowed pair stops warning ------------------------------------


def test_review_all_records_a_reworded_warning(demo: Repo) -> None:
    """Before: the allowlist knew gpt3, palm, llama2 and gpt4 only; answering n crashed (exit 3)."""
    scan = demo.cg("scan", "data/chat.jsonl")
    assert scan.code == 1 and "WARN reworded" in scan.out
    # Failing findings come first: the one gpt3 failure, then the warning about another pair.
    done = demo.cg_proc("review", "data/chat.jsonl", "--all", stdin="y\nn\na paraphrase we wrote\n")
    assert done.code == 0, done.output
    assert done.err.index("FAIL gpt3") < done.err.index("WARN reworded")
    rules = {(e["rule"], e["decision"]) for e in entries(demo)}
    assert rules == {("gpt3", "leak"), ("reworded", "false-positive")}
    after = demo.cg("scan", "data/chat.jsonl")
    reworded = [line for line in finding_lines(after.out) if "arith:answer" in line]
    assert reworded and all(line.startswith("ALLOWED ") for line in reworded)


def test_a_false_positive_pair_no_longer_warns_or_gets_annotations(demo: Repo) -> None:
    before = demo.cg("scan", "data/chat.jsonl", "--format", "github")
    assert "::warning " in before.out
    # n on the failing pair; its five warnings (palm, llama2, gpt4, numbers, reworded) are not asked.
    done = demo.cg_proc("review", "data/chat.jsonl", "--all", stdin="n\nour own tutorial\ns\n")
    assert done.code == 0, done.output
    assert "5 warning(s) on pairs answered false positive" in done.out
    assert [e["rule"] for e in entries(demo)] == ["gpt3"]  # one entry: the pair's
    after = demo.cg("scan", "data/chat.jsonl", "--format", "github")
    assert after.code == 0, after.output
    question = [line for line in after.out.splitlines() if "item am-009 (#8)" in line and "question" in line]
    assert not question  # no annotation for the allowed pair
    assert "::warning " in after.out  # the other pair (the reworded answer) still warns
    text = demo.cg("scan", "data/chat.jsonl")
    line = next(x for x in finding_lines(text.out) if "arith:question" in x)
    assert line.startswith("ALLOWED ") and "WARN" not in line
    rules = "gpt3 palm llama2 gpt4 numbers reworded"
    assert f"[{rules}: allowlisted as a false positive: our own tutorial]" in line


def test_a_warning_another_record_feeds_still_shows(demo: Repo) -> None:
    """Only the warnings about the allowed pair follow it: a per-item warning that a new record
    feeds too is about new data, and shows (as does the new record's own failure)."""
    done = demo.cg_proc("review", "data/chat.jsonl", stdin="n\nour own tutorial\n")
    assert done.code == 0, done.output
    chat = json.loads((demo.root / "data/chat.jsonl").read_text(encoding="utf-8").splitlines()[3])
    words = chat["messages"][1]["content"].split()
    middle = len(words) // 2
    changed = [*words[:middle], "zeppelin", *words[middle + 1 :]]  # another shared span: another key
    demo.write("data/more.jsonl", jsonl([" ".join(changed)]))
    result = demo.cg("scan", "data/chat.jsonl", "data/more.jsonl")
    lines = [line for line in finding_lines(result.out) if "am-009 (#8)" in line and "question" in line]
    more = next(line for line in lines if "data/more.jsonl" in line)
    assert more.startswith("FAIL ") and "FAIL gpt3" in more
    chat_line = next(line for line in lines if "data/chat.jsonl" in line)
    assert "ALLOWED gpt3" in chat_line and "WARN palm" in chat_line


# --- scrub honours the allowlist ----------------------------------------------------------------


def test_scrub_keeps_an_allowlisted_record_and_says_so(repo: Repo) -> None:
    """Before: scrub ignored the allowlist and dropped the reviewed false positive."""
    texts = [FILLER, leak(0), leak(1), leak(2) + " and also " + leak(3)]
    repo.write("data/train.jsonl", jsonl(texts))
    # q-01 and (in the shared record) q-03 are false positives; q-02 and q-04 are not reviewed.
    reviewed = repo.cg_proc("review", "data/", stdin="n\nstyle guide quote\ns\nn\nours\ns\n")
    assert reviewed.code == 0, reviewed.output
    done = repo.cg("scrub", "data/train.jsonl", "-o", "clean.jsonl", "--log", "removed.jsonl")
    assert done.code == 0, done.output
    kept_line = "kept 1 record(s) unchanged: their 1 (test item, training record) pair(s) are allowlisted"
    assert kept_line in done.out
    kept = [json.loads(line)["text"] for line in (repo.root / "clean.jsonl").read_text().splitlines()]
    assert kept == [FILLER, leak(0)]  # the allowed record intact; a record with a leak scrubbed
    logged = [json.loads(line)["record"] for line in (repo.root / "removed.jsonl").read_text().splitlines()]
    assert logged == [2, 3]
    assert repo.cg("scan", "clean.jsonl").code == 0

    every = repo.cg("scrub", "data/train.jsonl", "-o", "all.jsonl", "--no-allowlist")
    assert every.code == 0 and "kept" not in every.out
    assert [json.loads(x)["text"] for x in (repo.root / "all.jsonl").read_text().splitlines()] == [FILLER]


def test_scrub_removes_what_only_a_baseline_entry_allows(repo: Repo) -> None:
    """A baseline entry keeps an old finding from failing the build; it is not a review. Before:
    scrub kept every baselined leak ("kept 2 record(s) unchanged"), 0 records touched."""
    repo.write("data/train.jsonl", jsonl([FILLER, leak(0), leak(1)]))
    assert repo.cg("baseline", "data/").code == 0
    assert repo.cg("scan", "data/").code == 0  # the gate passes
    done = repo.cg("scrub", "data/train.jsonl", "-o", "clean.jsonl")
    assert done.code == 0, done.output
    assert "kept" not in done.out
    kept = [json.loads(line)["text"] for line in (repo.root / "clean.jsonl").read_text().splitlines()]
    assert kept == [FILLER]
    # A person's decision on one of them (a false positive) keeps that record.
    assert repo.cg_proc("review", "--baseline", "data/", stdin="n\nour own example\ns\n").code == 0
    again = repo.cg("scrub", "data/train.jsonl", "-o", "clean2.jsonl")
    assert again.code == 0 and "kept 1 record(s) unchanged" in again.out, again.output
    kept = [json.loads(line)["text"] for line in (repo.root / "clean2.jsonl").read_text().splitlines()]
    assert kept == [FILLER, leak(0)]


def test_scrub_keeps_a_record_allowed_by_content_from_another_file(repo: Repo) -> None:
    """Entries are keyed by content: the same reviewed text elsewhere is kept, as scan allows it."""
    repo.write("data/other.jsonl", jsonl([leak(1)]))
    assert repo.cg_proc("review", "data/other.jsonl", stdin="n\nfine\n").code == 0
    repo.write("data/train.jsonl", jsonl([FILLER, leak(1)]))
    assert repo.cg("scan", "data/train.jsonl").code == 0
    done = repo.cg("scrub", "data/train.jsonl", "--dry-run")
    assert done.code == 0 and "kept 1 record(s) unchanged" in done.out
    assert "0 touched" in done.out


# --- next steps that work, in the console and the job summary; --quiet ------------------------


def test_a_parquet_leak_gets_next_steps_that_work(repo: Repo) -> None:
    """Before: ``contam-guard scrub data/sft.parquet ...``, which exits 2 (JSONL and text only)."""
    rows = [{"id": 1, "text": FILLER}, {"id": 2, "text": leak(0)}]
    pq.write_table(pa.Table.from_pylist(rows), repo.root / "data" / "sft.parquet")
    result = repo.cg("scan", "data/sft.parquet", "--summary", "summary.md")
    assert result.code == 1
    steps = result.out.split("What next:")[1]
    assert "contam-guard scrub data/sft.parquet " not in steps
    line = next(x for x in steps.splitlines() if "a real leak in data/sft.parquet?" in x)
    commands = [part.split("`")[0] for part in line.split("`")[1::2] if part]
    assert len(commands) == 2 and commands[0].startswith("python -c ")
    # Each command runs as shown (in a shell, from the project's root) and the result scans clean.
    python = shlex.split(commands[0])
    assert python[0] == "python"
    converted = subprocess.run([sys.executable, *python[1:]], cwd=repo.root, check=False)
    if converted.returncode == -signal.SIGABRT:
        # pyarrow's thread pool sometimes aborts at interpreter exit after read_parquet, its work
        # done (apache/arrow#34314, open): once more, as a user would run it again
        converted = subprocess.run([sys.executable, *python[1:]], cwd=repo.root, check=False)
    assert converted.returncode == 0
    scrub = shlex.split(commands[1])
    assert scrub[0] == "contam-guard"
    assert repo.cg(*scrub[1:]).code == 0
    clean = scrub[scrub.index("-o") + 1]
    assert repo.cg("scan", clean).code == 0
    # The job summary ends with the same steps.
    summary = (repo.root / "summary.md").read_text(encoding="utf-8")
    tail = summary.split("### What next")[1]
    assert "a real leak in data/sft.parquet?" in tail and summary.rstrip().endswith(tail.rstrip())


def test_next_steps_mix_scrub_and_conversion_per_format(repo: Repo) -> None:
    repo.write("data/a.jsonl", jsonl([leak(0)]))
    repo.write("data/b.csv", f"id,text\n1,{leak(1)}\n")
    result = repo.cg("scan", "data/")
    steps = result.out.split("What next:")[1]
    assert "`contam-guard scrub data/a.jsonl -o data/a.clean.jsonl --log removed.jsonl`" in steps
    assert "a real leak in data/b.csv? scrub supports JSONL and text files, not CSV" in steps
    assert "pd.read_csv(f)" in steps


def test_the_job_summary_ends_with_what_next(repo: Repo) -> None:
    repo.write("data/train.jsonl", jsonl([leak(0)]))
    result = repo.cg("scan", "data/", "--summary", "s.md", "--review", "r.md")
    assert result.code == 1
    summary = (repo.root / "s.md").read_text(encoding="utf-8")
    console = [line.removeprefix("  - ") for line in result.out.split("What next:\n")[1].splitlines()]
    listed = summary.split("### What next\n\n")[1].splitlines()
    assert [line.removeprefix("- ") for line in listed] == console
    clean = repo.cg("scan", "data/", "--summary", "s.md", "--exit-zero")
    assert clean.code == 0 and "What next" not in (repo.root / "s.md").read_text(encoding="utf-8")


def test_quiet_prints_failures_and_the_summary_only(demo: Repo) -> None:
    loud = demo.cg("scan", "data/")
    quiet = demo.cg("scan", "data/", "--quiet", "--review", "r.md")
    assert loud.code == quiet.code == 1
    assert any(line.startswith("WARN ") for line in finding_lines(loud.out))
    assert all(line.startswith("FAIL ") for line in finding_lines(quiet.out))
    assert [x for x in finding_lines(loud.out) if x.startswith("FAIL")] == finding_lines(quiet.out)
    assert "every string read" in loud.out and "every string read" not in quiet.out
    hidden = len(finding_lines(loud.out)) - len(finding_lines(quiet.out))
    assert f"{hidden} pair(s) that only warn or are allowed not shown (--quiet)." in quiet.out
    assert "What next:" in quiet.out and "failing finding(s)" in quiet.out
    assert "WARN" in (demo.root / "r.md").read_text(encoding="utf-8")  # files are complete
    # Notices are never hidden: an unreadable file still says so.
    demo.write("data/broken.jsonl", "{not json\n")
    skipped = demo.cg("scan", "data/", "-q", "--skip-unreadable")
    assert "broken.jsonl" in skipped.err
