"""A one-process scan uses its cores: the prefilter filters each large block in two parts at once
and the rewording stage cuts its records between threads, and the items and pairs CSVs are the
same, byte for byte, as on one thread.
``CONTAM_GUARD_THREADS`` sets how many (1: this thread only); a value that is not a number of
threads is a usage error, said before anything is read."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable

import numpy as np
import pytest

from contam_guard.core.match import prefilter as prefilter_module
from contam_guard.core.reword import stage as stage_module
from tests.cli.conftest import FILLER, Project
from tests.helpers import Result

Run = Callable[..., Result]


def _reworded(question: str, rng: random.Random) -> str:
    """The question with its words shuffled in places and a number changed: a rewording the
    n-gram rules miss and the rewording rules see."""
    words = question.split()
    for _ in range(len(words) // 4):
        a, b = rng.randrange(len(words)), rng.randrange(len(words))
        words[a], words[b] = words[b], words[a]
    return " ".join(words).replace("fourteen", "sixteen")


def test_threads_give_the_same_csvs_as_one_thread(
    registered: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(11)
    texts = [FILLER] * 300 + [_reworded(item["question"], rng) for item in registered.items] * 3
    rng.shuffle(texts)
    registered.training("train.jsonl", texts)
    monkeypatch.setattr(stage_module, "SPLIT_WORDS", 1)  # a small file cut as a large one is
    runs: list[int] = []
    cuts = stage_module.thread_cuts

    def counted(unit_first: np.typing.NDArray[np.int64], threads: int) -> list[int]:
        found = cuts(unit_first, threads)
        runs.append(len(found) - 1)
        return found

    monkeypatch.setattr(stage_module, "thread_cuts", counted)
    monkeypatch.setattr(prefilter_module, "SPLIT_BYTES", 1)
    halves: list[int] = []
    line_end = prefilter_module._line_end_before

    def cut(block: memoryview, at: int) -> int:
        halves.append(line_end(block, at))
        return halves[-1]

    monkeypatch.setattr(prefilter_module, "_line_end_before", cut)
    outputs = {}
    for threads in ("1", "3"):
        monkeypatch.setenv("CONTAM_GUARD_THREADS", threads)
        runs.clear()
        halves.clear()
        result = registered.cli(
            "scan", "train.jsonl", "--items-csv", f"items{threads}.csv", "--pairs-csv", f"pairs{threads}.csv"
        )
        assert result.code == 0, result.output  # the rewording rules warn
        assert runs and max(runs) == int(threads), runs  # the compiled stage ran, on that many threads
        assert (threads == "1") == (not any(halves)), halves  # with threads, blocks were cut in two
        outputs[threads] = [(registered.root / f"{k}{threads}.csv").read_bytes() for k in ("items", "pairs")]
    assert outputs["1"] == outputs["3"]
    rows = list(csv.DictReader(io.StringIO(outputs["1"][1].decode())))
    assert sum(float(row["reworded_score"]) >= 0.32 for row in rows) >= 10  # the rewording rules fired


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5", "257", "١"])
def test_a_thread_count_out_of_range_is_a_usage_error(
    registered: Project, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    registered.training("train.jsonl", [FILLER])
    monkeypatch.setenv("CONTAM_GUARD_THREADS", value)
    result = registered.cli("scan", "train.jsonl")
    assert result.code == 2, result.output
    assert f"CONTAM_GUARD_THREADS={value}: not a number of threads (1 to 256)" in result.err
    assert "Traceback" not in result.err
