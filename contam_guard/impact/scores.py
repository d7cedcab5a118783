"""Per-item scores from an evaluation run, in the formats people have.

- **lm-evaluation-harness** ``--log_samples`` files (``samples_<task>_<date>.jsonl``): one JSON
  object per document and filter, with ``doc_id`` (the document's index in the evaluated split),
  ``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics`` (the
  metric names), ``doc_hash``, ``prompt_hash``, ``target_hash`` and one field per metric
  (``acc``, ``exact_match`` ...). ``doc_id`` joins the items CSV's ``test_index``. A task with
  several filters (GSM8K: ``strict-match`` and ``flexible-extract``) logs each document once per
  filter: ``filter_name`` chooses one.
- **OpenAI evals** records (``oaieval ... --record_path``): ``spec`` and ``final_report`` lines,
  then events ``{"sample_id": "<eval>.<split>.<n>", "type": "match", "data": {"correct": true}}``;
  ``n`` (the sample's index) joins ``test_index``. The metric is a key of the events' ``data``
  (``correct`` by default; ``metrics`` events carry others).
- **A plain JSONL or CSV** with ``item_id`` (joins the items CSV's ``item_id``) or
  ``test_index`` (or ``doc_id``) and a ``score`` column (or the one ``metric`` names): 0/1,
  true/false or any finite number.

The format is read from the content (``.csv`` and ``.tsv`` by their name). Every problem is an
``InputError`` naming the file and line.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contam_guard.errors import InputError

ITEM_ID = "item_id"
TEST_INDEX = "test_index"
LM_EVAL = "lm-evaluation-harness"
OPENAI_EVALS = "openai-evals"
JSONL = "jsonl"
CSV = "csv"
_LM_EVAL_FIELDS = frozenset(
    {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics"}
    | {"doc_hash", "prompt_hash", "target_hash"}
)

MAX_INDEX = 10**18
"""An index past any test set's size (and any an items CSV holds)."""
_BULKY = ("doc", "arguments", "resps", "filtered_resps")


@dataclass(frozen=True)
class Score:
    """One item's score and where it came from."""

    key: str
    """``item_id`` or ``test_index``: which column of the items CSV it joins."""
    value: str | int
    score: float
    line: int

    def label(self) -> str:
        return f"{self.key} {self.value!r}" if self.key == ITEM_ID else f"{self.key} {self.value}"


@dataclass(frozen=True)
class Scores:
    """A file's scores, one per item."""

    path: Path
    format: str
    metric: str
    filter: str | None
    rows: list[Score]


def read_scores(path: Path, metric: str | None = None, filter_name: str | None = None) -> Scores:
    """Every per-item score in ``path`` (one per item: a second one is an error)."""
    if path.suffix.lower() in (".csv", ".tsv"):
        return _table(path, metric, "\t" if path.suffix.lower() == ".tsv" else ",")
    records = list(_json_lines(path))
    if not records:
        raise InputError(str(path), "holds no scores")
    first = records[0][1]
    if "doc_id" in first and _LM_EVAL_FIELDS & (set(first) - {"doc_id"}):
        return _lm_eval(path, records, metric, filter_name)
    if "spec" in first or "final_report" in first or {"sample_id", "type"} <= set(first):
        return _evals(path, records, metric or "correct")
    return _plain(path, records, metric or "score", JSONL)


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read ({exc.strerror or exc})") from None
    with handle:
        try:
            for number, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                try:
                    value = json.loads(raw)
                except UnicodeDecodeError:
                    raise InputError(str(path), "is not UTF-8 text", line=number) from None
                except json.JSONDecodeError as exc:
                    raise InputError(str(path), f"not JSON ({exc.msg})", line=number) from None
                except ValueError:  # an integer of more digits than Python converts (4,300)
                    raise InputError(
                        str(path), "not JSON this reads (a number too long)", line=number
                    ) from None
                except RecursionError:
                    raise InputError(
                        str(path), "not JSON this reads (nested too deeply)", line=number
                    ) from None
                if not isinstance(value, dict):
                    raise InputError(str(path), "not a JSON object", line=number)
                for bulky in _BULKY:  # the prompts and responses: never read, often most of the file
                    value.pop(bulky, None)
                yield number, value
        except OSError as exc:
            raise InputError(str(path), f"cannot read ({exc.strerror or exc})") from None


def _lm_eval(
    path: Path, records: list[tuple[int, dict[str, Any]]], metric: str | None, filter_name: str | None
) -> Scores:
    filters = sorted({str(record.get("filter", "none")) for _, record in records})
    if filter_name is None and len(filters) > 1:
        raise InputError(
            str(path),
            f"logs several filters ({', '.join(filters)})",
            hint=f"choose one with --filter, e.g. --filter {filters[0]}",
        )
    chosen = filter_name if filter_name is not None else filters[0]
    if chosen not in filters:
        raise InputError(str(path), f"has no filter {chosen!r} (filters: {', '.join(filters)})")
    mine = [(line, record) for line, record in records if str(record.get("filter", "none")) == chosen]
    name = metric if metric is not None else _only_metric(path, *mine[0])
    rows = []
    for line, record in mine:
        index = _index(path, line, "doc_id", record.get("doc_id"))
        rows.append(Score(TEST_INDEX, index, _metric(path, line, record, name), line))
    return Scores(path, LM_EVAL, name, chosen, _unique(path, rows))


def _only_metric(path: Path, line: int, record: dict[str, Any]) -> str:
    """The metric of a record that has one; else an error listing them."""
    names = record.get("metrics")
    if not isinstance(names, list):
        names = [k for k, v in record.items() if k not in _LM_EVAL_FIELDS and _is_number(v)]
    if len(names) == 1:
        return str(names[0])
    listed = ", ".join(map(str, names)) or "none"
    raise InputError(
        str(path),
        f"which metric? the samples have {listed}",
        line=line,
        hint="choose one with --metric, e.g. --metric acc" if names else None,
    )


def _evals(path: Path, records: list[tuple[int, dict[str, Any]]], metric: str) -> Scores:
    rows = []
    kinds: set[str] = set()
    for line, record in records:
        if "spec" in record or "final_report" in record:
            continue
        kinds.add(str(record.get("type")))
        data = record.get("data")
        if not isinstance(data, dict) or metric not in data:
            continue
        sample = record.get("sample_id")
        if not isinstance(sample, str):
            raise InputError(str(path), "an event without a sample_id", line=line)
        tail = sample.rsplit(".", 1)[-1]
        key: tuple[str, str | int] = (TEST_INDEX, int(tail)) if tail.isdigit() else (ITEM_ID, sample)
        rows.append(Score(*key, _number(path, line, metric, data[metric]), line))
    if not rows:
        raise InputError(
            str(path),
            f"no event records the metric {metric!r} (event types: {', '.join(sorted(kinds)) or 'none'})",
            hint="choose the key of the events' data with --metric",
        )
    return Scores(path, OPENAI_EVALS, metric, None, _unique(path, rows))


def _plain(path: Path, records: list[tuple[int, dict[str, Any]]], metric: str, kind: str) -> Scores:
    rows = []
    for line, record in records:
        if ITEM_ID in record:
            value = record[ITEM_ID]
            if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
                raise InputError(str(path), f"item_id is {value!r}, not an id", line=line)
            key: tuple[str, str | int] = (ITEM_ID, str(value))
        elif TEST_INDEX in record or "doc_id" in record:
            name = TEST_INDEX if TEST_INDEX in record else "doc_id"
            key = (TEST_INDEX, _index(path, line, name, record[name]))
        else:
            raise InputError(
                str(path),
                f"no item_id or test_index (it has {', '.join(map(str, record)) or 'nothing'})",
                line=line,
            )
        rows.append(Score(*key, _metric(path, line, record, metric), line))
    return Scores(path, kind, metric, None, _unique(path, rows))


def _table(path: Path, metric: str | None, delimiter: str) -> Scores:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except UnicodeDecodeError:
        raise InputError(str(path), "is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read ({exc.strerror or exc})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    records: list[tuple[int, dict[str, Any]]] = []
    try:
        for row in reader:
            if None in row or None in row.values():
                raise InputError(
                    str(path), "the number of fields differs from the header", line=reader.line_num
                )
            cells: dict[str, Any] = {k: v for k, v in row.items() if v != "" or k == ITEM_ID}
            if TEST_INDEX in cells or "doc_id" in cells:
                name = TEST_INDEX if TEST_INDEX in cells else "doc_id"
                cells[name] = _digits(path, reader.line_num, name, cells[name])
            records.append((reader.line_num, cells))
    except csv.Error as exc:
        raise InputError(str(path), f"not CSV ({exc})", line=reader.line_num) from None
    if not records:
        raise InputError(str(path), "holds no scores")
    return _plain(path, records, metric or "score", CSV)


def _metric(path: Path, line: int, record: dict[str, Any], name: str) -> float:
    if name not in record:
        have = [k for k, v in record.items() if _is_number(v) or _parses(v)]
        raise InputError(
            str(path),
            f"no metric {name!r} (numbers here: {', '.join(have) or 'none'})",
            line=line,
            hint="choose the score's field with --metric",
        )
    return _number(path, line, name, record[name])


def _number(path: Path, line: int, name: str, value: Any) -> float:
    if isinstance(value, str):
        text = value.strip().lower()
        value = {"true": True, "false": False}.get(text, text)
        with contextlib.suppress(ValueError):
            value = float(value) if isinstance(value, str) else value
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer too large for a float
            number = math.inf
        if math.isfinite(number):
            return number
    raise InputError(str(path), f"{name} is {_shown(value)}, not a finite number or true/false", line=line)


def _shown(value: Any) -> str:
    """A value as a message quotes it: at most 40 characters (a 5,000-digit score is not quoted whole)."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 128 else "a number too long"
    return text if len(text) <= 40 else text[:37] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float))


def _parses(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _index(path: Path, line: int, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_INDEX:
        raise InputError(str(path), f"{name} is {_shown(value)}, not a 0-based index", line=line)
    return value


def _digits(path: Path, line: int, name: str, value: str) -> int:
    digits = value.strip()
    if not digits.isdigit() or len(digits) > 18:  # (no test set has a quintillion items)
        raise InputError(str(path), f"{name} is {_shown(value)}, not a 0-based index", line=line)
    return int(digits)


def _unique(path: Path, rows: list[Score]) -> list[Score]:
    """``rows``, or an error at the second score of an item."""
    seen: dict[tuple[str, str | int], int] = {}
    for row in rows:
        first = seen.setdefault((row.key, row.value), row.line)
        if first != row.line:
            raise InputError(
                str(path), f"a second score for {row.label()} (the first is on line {first})", line=row.line
            )
    return rows
