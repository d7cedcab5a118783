"""Rule options of ``scan``: ``--n`` and ``--n auto``, ``--disable``, ``--warn-on``, ``--fail-on``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import LeakText, Project


def findings(path: Path) -> set[tuple[str, str, str]]:
    review = json.loads(path.read_text())
    return {(f["rule"], f["action"], f["item_id"]) for f in review["findings"]}


@pytest.fixture
def eleven(registered: Project, leak_text: LeakText) -> Path:
    """A record sharing exactly 11 consecutive words (words 6..16) with lx-04's question."""
    tokens = registered.question_words(3)
    return registered.training("train.jsonl", [leak_text(tokens, 6, 11)])


@pytest.mark.parametrize(
    ("n_args", "code"),
    [
        ([], 0),
        (["--n", "13"], 0),
        (["--n", "12"], 0),
        (["--n", "11"], 1),
        (["--n", "10"], 1),
        (["--n", "5"], 1),
    ],
)
def test_n_decides_whether_an_11_word_run_fails(
    registered: Project, eleven: Path, tmp_path: Path, n_args: list[str], code: int
) -> None:
    result = registered.cli("scan", eleven, *n_args, "--review-json", tmp_path / "r.json")
    assert result.code == code, result.output
    gpt3 = {f for f in findings(tmp_path / "r.json") if f[0] == "gpt3"}
    assert gpt3 == ({("gpt3", "fail", "lx-04")} if code else set())
    if code:
        assert "shared run of 11 words" in result.out


@pytest.mark.parametrize("bad", ["4", "ten", "-3"])
def test_bad_n_is_a_usage_error(registered: Project, eleven: Path, bad: str) -> None:
    result = registered.cli("scan", eleven, "--n", bad)
    assert result.code == 2, result.output
    assert "Traceback" not in result.output


def test_n_auto_uses_the_sets_5th_percentile_length(
    project: Project, tmp_path: Path, leak_text: LeakText
) -> None:
    short = [
        "Nine crows perched along the mossy granary roof ledge",  # 9 words
        "Ten pilgrims rested beside the crumbling wayside shrine after dawn",  # 10
        "Eleven tinkers mended copper kettles while the village choir rehearsed hymns",  # 11
        "Twelve ferrets escaped the menagerie wagon and scattered through the turnip fields",  # 12
        "Fourteen sailors hauled the barnacled anchor aboard while gulls circled the mast overhead",  # 14
    ]
    golden = tmp_path / "golden" / "short.jsonl"
    golden.write_text("".join(json.dumps({"id": f"s{n}", "text": t}) + "\n" for n, t in enumerate(short)))
    assert (
        project.cli("register", "short", "golden/short.jsonl", "--field", "text", "--id-field", "id").code
        == 0
    )

    def too_short(*args: str) -> str:
        sets = project.cli("sets", *args)
        header = next(line for line in sets.out.splitlines() if line.startswith("┃"))
        row = next(line for line in sets.out.splitlines() if "│ short" in line)
        column = [c.strip() for c in header.strip("┃").split("┃")].index("too short: gpt3")
        return [c.strip() for c in row.strip("│").split("│")][column]

    assert too_short() == "0 (N=9)"  # auto, the default: the shortest of 5 is the 5th percentile
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text("rules:\n  gpt3: {n: 13}\n")
    assert too_short("--config", str(fixed), "--manifest", str(project.manifest)) == "4 (N=13)"

    # 8 of s0's 9 words: a run under N = 9, and not the whole item (the control)
    eight = project.training("eight.jsonl", [leak_text(short[0].split(), 0, 8)])
    assert project.cli("scan", eight).code == 0
    train = project.training("train.jsonl", [leak_text(short[0].split(), 0, 9)])
    default = project.cli("scan", train, "--disable", "whole")
    assert default.code == 1, default.output  # auto: a 9-word run reaches N = 9
    assert "N = 9" in default.out and "s0" in default.out
    at13 = project.cli("scan", train, "--n", "13", "--disable", "whole")
    assert at13.code == 0, at13.output  # a 9-word item can never reach N = 13 ...
    whole = project.cli("scan", train, "--n", "13")
    assert whole.code == 1, whole.output  # ... but its whole copy fails
    assert "FAIL whole" in whole.out and "the whole item (9 words) found verbatim in one string" in whole.out
    with_file = ("--config", fixed, "--manifest", project.manifest)
    from_file = project.cli("scan", train, "--disable", "whole", *with_file)
    assert from_file.code == 0, from_file.output
    config = tmp_path / "auto.yaml"
    config.write_text("rules:\n  gpt3: {n: auto}\n  whole: {enabled: false}\n")
    from_file = project.cli("scan", train, "--config", config, "--manifest", project.manifest)
    assert from_file.code == 1, from_file.output


@pytest.fixture
def verbatim(registered: Project, leak_text: LeakText) -> Path:
    tokens = registered.items[0]["question"].split()
    return registered.training("train.jsonl", [leak_text(tokens, 0, len(tokens))])


@pytest.mark.parametrize(
    ("options", "code", "gpt3_action"),
    [
        ([], 1, "fail"),
        (["--disable", "gpt3"], 1, None),  # a whole copy: the whole rule fails it
        (["--disable", "gpt3", "--disable", "whole"], 0, None),
        (["--warn-on", "gpt3"], 1, "warn"),
        (["--warn-on", "gpt3", "--warn-on", "whole"], 0, "warn"),
        (["--only", "palm"], 0, None),
        (["--only", "gpt3"], 1, "fail"),
        (["--only", "whole"], 1, None),
        (["--disable", "gpt3", "--disable", "whole", "--fail-on", "palm"], 1, None),
    ],
)
def test_rule_switches_on_a_verbatim_leak(
    registered: Project,
    verbatim: Path,
    tmp_path: Path,
    options: list[str],
    code: int,
    gpt3_action: str | None,
) -> None:
    result = registered.cli("scan", verbatim, *options, "--review-json", tmp_path / "r.json")
    assert result.code == code, result.output
    got = findings(tmp_path / "r.json")
    assert {a for r, a, _ in got if r == "gpt3"} == ({gpt3_action} if gpt3_action else set())
    if gpt3_action == "warn":
        assert "WARN gpt3" in result.out
    if "--only" in options:
        assert {r for r, _, _ in got} == {options[1]}
    assert {i for _, _, i in got} <= {"lx-01"}


def test_unknown_rule_name_is_a_usage_error(registered: Project, verbatim: Path) -> None:
    result = registered.cli("scan", verbatim, "--disable", "gtp3")
    assert result.code == 2
    assert "gtp3" in result.err


@pytest.fixture
def chunked(registered: Project, leak_text: LeakText) -> Path:
    """lx-05's question in overlapping 12-word pieces, one per record: every 8-gram is in the
    data and every word is in a run of 10+, but no record shares 13 words (GPT-3 stays quiet)."""
    tokens = registered.items[4]["question"].split()
    starts = [*range(0, len(tokens) - 12, 5), len(tokens) - 12]
    return registered.training("train.jsonl", [leak_text(tokens, s, 12) for s in starts])


def test_chunked_copy_only_warns_by_default(registered: Project, chunked: Path, tmp_path: Path) -> None:
    result = registered.cli("scan", chunked, "--review-json", tmp_path / "r.json")
    assert result.code == 0, result.output
    assert findings(tmp_path / "r.json") == {
        ("palm", "warn", "lx-05"),
        ("llama2", "warn", "lx-05"),
        ("gpt4", "warn", "lx-05"),
        ("reworded", "warn", "lx-05"),  # the chunks say the item's words, reordered
    }


@pytest.mark.parametrize("rule", ["palm", "llama2", "gpt4"])
def test_fail_on_makes_a_warning_rule_fail(
    registered: Project, chunked: Path, tmp_path: Path, rule: str
) -> None:
    result = registered.cli("scan", chunked, "--fail-on", rule, "--review-json", tmp_path / "r.json")
    assert result.code == 1, result.output
    assert f"FAIL {rule}" in result.out
    assert (rule, "fail", "lx-05") in findings(tmp_path / "r.json")
