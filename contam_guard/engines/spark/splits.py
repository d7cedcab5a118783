"""From split-local numbers to file numbers: lines, records and byte offsets.

A text file read by Spark arrives in splits (byte ranges; each holds the lines that start in
it). A task counts the lines, records and bytes of each split it reads; the driver orders each
file's splits by their start and adds up what comes before, exactly as one reader counting from
the top of the file would. A DataFrame's "splits" are its partitions, in partition order (the
order ``RDD.zipWithIndex`` numbers rows in).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from contam_guard.engines.spark.failures import TaskError
from contam_guard.engines.spark.inputs import InputPlan
from contam_guard.errors import InputError
from contam_guard.io.readers.decoding import decode_failure


@dataclass(frozen=True)
class SplitCount:
    file: str
    block: int
    lines: int
    records: int
    size: int
    """Bytes."""
    chars: int = 0


@dataclass(frozen=True)
class Before:
    """What precedes a split in its file: lines, records and bytes."""

    lines: int
    records: int
    size: int
    """Bytes."""


class Offsets:
    """Where each split starts within its file."""

    def __init__(self, counts: Iterable[SplitCount]) -> None:
        by_file: dict[str, list[SplitCount]] = defaultdict(list)
        for count in counts:
            by_file[count.file].append(count)
        self._before: dict[tuple[str, int], Before] = {}
        for file, splits in by_file.items():
            lines = records = size = 0
            for split in sorted(splits, key=lambda s: s.block):
                self._before[(file, split.block)] = Before(lines, records, size)
                lines, records, size = lines + split.lines, records + split.records, size + split.size

    def before(self, file: str, block: int) -> Before:
        return self._before.get((file, block), Before(0, 0, 0))


def resolve(error: TaskError, plan: InputPlan, offsets: Offsets) -> InputError:
    """The ``InputError`` the local reader would raise for a worker's ``TaskError``."""
    file = plan.files[error.file]
    before = offsets.before(error.file, error.block or 0)
    line = None if error.line is None else before.lines + error.line
    if error.decode is not None:
        bad, start, reason, encoding = error.decode
        # decode_failure reads the bad byte, its position and the reason off the exception.
        exc = UnicodeDecodeError(encoding, bytes(start) + bytes.fromhex(bad), start, start + 1, reason)
        return decode_failure(
            file.display, exc, line=line, line_offset=before.size + (error.offset or 0), encoding=encoding
        )
    problem = error.problem
    if error.record is not None:
        record = error.record if file.absolute else before.records + error.record
        problem = f"row {record}: {problem}"
    return InputError(file.display, problem, line=line, hint=error.hint)
