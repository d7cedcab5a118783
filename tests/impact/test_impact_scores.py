"""Reading per-item scores: the formats people have, and every bad input a clear error."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from contam_guard.errors import InputError
from contam_guard.impact.analysis import join
from contam_guard.impact.items import read_items
from contam_guard.impact.scores import LM_EVAL, OPENAI_EVALS, read_scores
from tests.impact.impact_helpers import items_csv


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def lm_eval_sample(
    doc_id: int, question: str, answer: str, response: str, filter_name: str
) -> dict[str, Any]:
    """One line of lm-evaluation-harness's ``--log_samples`` output (``samples_gsm8k_<date>.jsonl``)
    for a generation task, with the fields ``lm_eval.evaluator.evaluate`` writes: the document,
    target, request arguments, raw and filtered responses, the filter, the metric names, three
    hashes and one field per metric."""
    prompt = f"Question: {question}\nAnswer:"
    if filter_name == "strict-match":
        extracted = response.rsplit("####", 1)[-1].strip()
    else:  # flexible-extract: the last number
        extracted = response.rsplit(maxsplit=1)[-1]
    target = answer.rsplit("####", 1)[-1].strip()
    return {
        "doc_id": doc_id,
        "doc": {"question": question, "answer": answer},
        "target": answer,
        "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["Question:"], "do_sample": False}}},
        "resps": [[response]],
        "filtered_resps": [extracted],
        "filter": filter_name,
        "metrics": ["exact_match"],
        "doc_hash": _sha(json.dumps({"question": question, "answer": answer}, indent=2)),
        "prompt_hash": _sha(prompt),
        "target_hash": _sha(answer),
        "exact_match": 1.0 if extracted == target else 0.0,
    }


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    """Three documents, each logged under both of GSM8K's filters (as lm-eval does)."""
    lines = []
    for name in ("strict-match", "flexible-extract"):
        lines += [
            lm_eval_sample(0, "How many eggs?", "3 + 4 = 7\n#### 7", "3 + 4 = 7\n#### 7", name),
            lm_eval_sample(1, "How many ducks?", "2 * 5 = 10\n#### 10", "The answer is 10", name),
            lm_eval_sample(2, "How many days?", "#### 4", "It takes 5", name),
        ]
    return _write(tmp_path / "samples_gsm8k_2024-06-01T12-00-00.jsonl", lines)


def test_lm_eval_samples_file_by_filter(samples: Path) -> None:
    strict = read_scores(samples, filter_name="strict-match")
    assert (strict.format, strict.metric, strict.filter) == (LM_EVAL, "exact_match", "strict-match")
    assert [(r.key, r.value, r.score, r.line) for r in strict.rows] == [
        ("test_index", 0, 1.0, 1),
        ("test_index", 1, 0.0, 2),
        ("test_index", 2, 0.0, 3),
    ]
    flexible = read_scores(samples, filter_name="flexible-extract")
    assert [r.score for r in flexible.rows] == [1.0, 1.0, 0.0] and flexible.rows[0].line == 4


def test_lm_eval_multiple_choice_needs_the_metric_named(tmp_path: Path) -> None:
    record = {"doc_id": 0, "target": 2, "filter": "none", "metrics": ["acc", "acc_norm"], "acc": 1.0}
    path = _write(tmp_path / "samples_arc.jsonl", [record | {"acc_norm": 0.0}, record | {"doc_id": 1}])
    with pytest.raises(InputError, match=r"which metric\? the samples have acc, acc_norm") as info:
        read_scores(path)
    assert info.value.line == 1
    assert [r.score for r in read_scores(path, "acc").rows] == [1.0, 1.0]
    with pytest.raises(InputError, match="no metric 'acc_norm'") as info:
        read_scores(path, "acc_norm")
    assert info.value.line == 2


def test_openai_evals_record(tmp_path: Path) -> None:
    run = "230417220821DPM75QNS"
    lines: list[Any] = [
        {"spec": {"completion_fns": ["gpt-3.5-turbo"], "eval_name": "gsm8k.test", "run_id": run}},
        {"final_report": {"accuracy": 0.5}},
    ]
    for n, correct in ((1, True), (0, False)):
        lines.append(
            {
                "run_id": run,
                "event_id": 2 * n,
                "sample_id": f"gsm8k.test.{n}",
                "type": "sampling",
                "data": {"prompt": "...", "sampled": "..."},
            }
        )
        lines.append(
            {
                "run_id": run,
                "event_id": 2 * n + 1,
                "sample_id": f"gsm8k.test.{n}",
                "type": "match",
                "data": {"correct": correct, "expected": "7", "picked": None},
            }
        )
    scores = read_scores(_write(tmp_path / "record.jsonl", lines))
    assert scores.format == OPENAI_EVALS and scores.metric == "correct"
    assert [(r.key, r.value, r.score) for r in scores.rows] == [
        ("test_index", 1, 1.0),
        ("test_index", 0, 0.0),
    ]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("s.csv", "item_id,score\nq1,1\nq0,0.25\n", [("item_id", "q1", 1.0), ("item_id", "q0", 0.25)]),
        ("s.csv", "test_index,acc\n0,true\n1,False\n", [("test_index", 0, 1.0), ("test_index", 1, 0.0)]),
        ("s.tsv", "doc_id\tscore\n3\t1\n", [("test_index", 3, 1.0)]),
        (
            "s.jsonl",
            '{"item_id": 7, "score": true}\n\n{"test_index": 2, "score": 0}\n',
            [("item_id", "7", 1.0), ("test_index", 2, 0.0)],
        ),
    ],
)
def test_plain_tables(tmp_path: Path, name: str, text: str, expected: list[tuple[str, Any, float]]) -> None:
    path = tmp_path / name
    path.write_text(text)
    metric = "acc" if "acc" in text else None
    assert [(r.key, r.value, r.score) for r in read_scores(path, metric).rows] == expected


BAD = [
    # (file name, content, read options, message fragment, line)
    ("bad-json.jsonl", '{"item_id": "q0", "score": 1}\n{"item_id": "q1", "score": \n', {}, "not JSON", 2),
    ("array.jsonl", '{"item_id": "q0", "score": 1}\n[1, 2]\n', {}, "not a JSON object", 2),
    ("no-key.jsonl", '{"id": "q0", "score": 1}\n', {}, "no item_id or test_index (it has id, score)", 1),
    ("no-score.jsonl", '{"item_id": "q0", "acc": 1}\n', {}, "no metric 'score' (numbers here: acc)", 1),
    (
        "text-score.jsonl",
        '{"item_id": "q0", "score": "right"}\n',
        {},
        "score is 'right', not a finite number",
        1,
    ),
    ("nan.jsonl", '{"item_id": "q0", "score": NaN}\n', {}, "not a finite number", 1),
    ("list.jsonl", '{"item_id": "q0", "score": [1, 0]}\n', {}, "not a finite number", 1),
    ("index.jsonl", '{"test_index": -1, "score": 1}\n', {}, "test_index is -1, not a 0-based index", 1),
    (
        "twice.jsonl",
        '{"item_id": "q0", "score": 1}\n{"item_id": "q0", "score": 0}\n',
        {},
        "a second score for item_id 'q0' (the first is on line 1)",
        2,
    ),
    ("metric.jsonl", '{"doc_id": 0, "filter": "none", "acc": 1}\n', {"metric": "f1"}, "no metric 'f1'", 1),
    (
        "filters.jsonl",
        '{"doc_id": 0, "filter": "a", "acc": 1}\n{"doc_id": 0, "filter": "b", "acc": 1}\n',
        {},
        "logs several filters (a, b)",
        None,
    ),
    (
        "filter.jsonl",
        '{"doc_id": 0, "filter": "a", "acc": 1}\n',
        {"filter_name": "b"},
        "has no filter 'b'",
        None,
    ),
    (
        "evals.jsonl",
        '{"spec": {}}\n{"sample_id": "e.t.0", "type": "sampling", "data": {}}\n',
        {},
        "no event records the metric 'correct' (event types: sampling)",
        None,
    ),
    ("ragged.csv", "item_id,score\nq0,1,extra\n", {}, "the number of fields differs from the header", 2),
    ("index.csv", "test_index,score\nfirst,1\n", {}, "test_index is 'first', not a 0-based index", 2),
    ("empty.jsonl", "\n\n", {}, "holds no scores", None),
    ("latin1.jsonl", b'{"item_id": "caf\xe9", "score": 1}\n', {}, "is not UTF-8 text", 1),
    ("missing.jsonl", None, {}, "no such file", None),
]


@pytest.mark.parametrize(("name", "content", "options", "message", "line"), BAD, ids=[row[0] for row in BAD])
def test_bad_scores_name_the_file_and_line(
    tmp_path: Path,
    name: str,
    content: str | bytes | None,
    options: dict[str, str],
    message: str,
    line: int | None,
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(InputError) as info:
        read_scores(path, **options)
    assert message in str(info.value)
    assert info.value.path == str(path) and info.value.line == line


def test_unmatched_scores_are_an_error_listing_a_few(tmp_path: Path) -> None:
    table = read_items(items_csv(tmp_path / "items.csv", [{}] * 3))
    lines = [{"item_id": f"q{n}", "score": 1} for n in (0, 9, 1, 10, 11, 12, 13, 14)]
    scores = read_scores(_write(tmp_path / "s.jsonl", lines))
    with pytest.raises(InputError) as info:
        join(scores, table)
    text = str(info.value)
    assert "6 of 8 scores match no item of set 'bench'" in text
    assert "line 2 (item_id 'q9'), line 4 (item_id 'q10')" in text and "and 1 more" in text
    assert info.value.line == 2 and info.value.path == str(scores.path)


def test_a_test_index_repeated_by_several_golden_files_is_refused(tmp_path: Path) -> None:
    path = items_csv(tmp_path / "items.csv", [{}] * 2)
    rows = path.read_text().splitlines()
    rows.append(rows[1].replace("q0,0", "extra-0,0"))  # a second file's first item: test_index 0 again
    path.write_text("\n".join(rows) + "\n")
    scores = read_scores(
        _write(tmp_path / "s.jsonl", [{"test_index": 1, "score": 1}, {"test_index": 0, "score": 1}])
    )
    with pytest.raises(InputError, match="test_index 0 names two items") as info:
        join(scores, read_items(path))
    assert info.value.line == 2
