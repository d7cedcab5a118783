"""Reading the items CSV back: views combined, flags per rule, and every bad input a clear error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from contam_guard.errors import InputError
from contam_guard.impact.items import read_items
from tests.impact.impact_helpers import items_csv


def test_views_combine_flags_and_coverage(tmp_path: Path) -> None:
    question = items_csv(tmp_path / "q.csv", [{"gpt3": "1"}, {"palm": "allowed"}], shares=[0.1, 0.9])
    answer = items_csv(tmp_path / "a.csv", [{}, {"gpt3": "1"}], shares=[0.5, 0.7], view="answer")
    both = tmp_path / "both.csv"
    both.write_text(question.read_text() + "".join(answer.read_text().splitlines(keepends=True)[1:]))
    table = read_items(both)
    assert table.views == ["answer", "question"]
    assert [(i.item_id, i.words, i.covered) for i in table.items] == [("q0", 200, 60), ("q1", 200, 160)]
    assert [round(i.share, 3) for i in table.items] == [0.3, 0.8]
    assert table.flagged("gpt3") == [True, True] and table.flagged("palm") == [False, False]
    only = read_items(both, view="question")
    assert only.views == ["question"] and only.flagged("gpt3") == [True, False]
    assert [i.share for i in only.items] == [0.1, 0.9]


def _edit(old: str, new: str, *, line: int = 2) -> Callable[[str], str]:
    def change(text: str) -> str:
        rows = text.splitlines()
        rows[line - 1] = rows[line - 1].replace(old, new, 1)
        return "\n".join(rows) + "\n"

    return change


def _cell(column: str, value: str, *, line: int = 2) -> Callable[[str], str]:
    """Set one cell of the CSV (found by its header name) on ``line``."""

    def change(text: str) -> str:
        rows = [row.split(",") for row in text.splitlines()]
        rows[line - 1][rows[0].index(column)] = value
        return "\n".join(",".join(row) for row in rows) + "\n"

    return change


BAD: list[tuple[str, Callable[[str], str], dict[str, str], str, int | None]] = [
    ("not-items", lambda text: "item,score\nq0,1\n", {}, "is not an items CSV: no column set", 1),
    ("empty", lambda text: "", {}, "is empty", None),
    ("ragged", lambda text: text + "bench,q9\n", {}, "2 fields, the header has", 4),
    ("bad-count", _edit(",100,", ",many,"), {}, "words is 'many', not a count", 2),
    (
        "bad-flag",
        _cell("flag_gpt3", "yes"),
        {},
        "is 'yes'; expected 1, 0, allowed or empty",
        2,
    ),
    (
        "two-sets",
        lambda text: text + text.splitlines()[1].replace("bench", "other", 1) + "\n",
        {},
        "holds several sets (bench, other)",
        None,
    ),
    ("no-set", lambda text: text, {"set_name": "mmlu"}, "has no set 'mmlu' (sets: bench)", None),
    ("no-view", lambda text: text, {"view": "answer"}, "set 'bench' has no view 'answer'", None),
]


@pytest.mark.parametrize(("name", "change", "options", "message", "line"), BAD, ids=[row[0] for row in BAD])
def test_bad_items_csv_names_the_file_and_line(
    tmp_path: Path,
    name: str,
    change: Callable[[str], str],
    options: dict[str, str],
    message: str,
    line: int | None,
) -> None:
    path = items_csv(tmp_path / "items.csv", [{}, {}])
    path.write_text(change(path.read_text()))
    with pytest.raises(InputError) as info:
        read_items(path, **options)
    assert message in str(info.value)
    assert info.value.path == str(path) and info.value.line == line


@pytest.mark.parametrize(
    ("rule", "column", "message"),
    [
        ("numbers", None, "has no flag_numbers column (flag_gpt3, flag_gapped, flag_whole, flag_palm"),
        ("gpt4", "", "the rule 'gpt4' was not run in the scan that wrote it"),
        ("any", "", "no rule was run"),
    ],
)
def test_a_rule_the_csv_cannot_answer_for(
    tmp_path: Path, rule: str, column: str | None, message: str
) -> None:
    path = items_csv(tmp_path / "items.csv", [{}, {}])
    header, *rows = path.read_text().splitlines()
    names = header.split(",")
    if column is None:  # the scan's contam-guard did not know the rule: no such column
        keep = [k for k, n in enumerate(names) if n != f"flag_{rule}"]
        header = ",".join(names[k] for k in keep)
        rows = [",".join(r.split(",")[k] for k in keep) for r in rows]
    else:  # the rule was not run: its column is empty (every flag column, for "any")
        emptied = [
            k for k, n in enumerate(names) if n == f"flag_{rule}" or (rule == "any" and n.startswith("flag_"))
        ]
        rows = [",".join("" if k in emptied else v for k, v in enumerate(r.split(","))) for r in rows]
    path.write_text("\n".join([header, *rows]) + "\n")
    table = read_items(path)
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        table.check_rule(rule)
