"""Input errors raised inside Spark tasks, brought back to the driver as ``InputError``.

A worker that meets a malformed record raises ``TaskInputError``, whose message carries the
error's parts (base64 JSON between markers). Spark fails the job and re-raises on the driver
with the worker's traceback text; ``input_errors`` finds the marker in it and raises the
``InputError`` the local engine would have raised, naming file:line (exit code 2).

Inside a split the worker knows only split-local line numbers and byte offsets; the driver
turns them into file positions (``splits.py``) before raising.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

from contam_guard.errors import InputError

_MARKER = "contam-guard-input-error"
_FOUND = re.compile(_MARKER + r"<([A-Za-z0-9+/=]+)>")


@dataclass(frozen=True)
class TaskError:
    """An input error as a worker saw it.

    ``file``/``block``: the split (see ``inputs.INPUT_SCHEMA``); ``line``: the split-local line
    (1-based) or None; ``record``: the record (split-local unless the input numbers its records),
    named as "row N" like the Parquet reader does, or None. For an undecodable byte, ``offset``
    is the split-local byte offset of its line and ``decode`` is (the byte as hex, its offset in
    the line, the codec's reason, the encoding).
    """

    file: str
    block: int | None
    problem: str
    line: int | None = None
    record: int | None = None
    hint: str | None = None
    offset: int | None = None
    decode: tuple[str, int, str, str] | None = None


class TaskInputError(Exception):
    """Raised in a worker: its message is the marker and the encoded ``TaskError``."""

    def __init__(self, error: TaskError) -> None:
        encoded = base64.b64encode(json.dumps(asdict(error)).encode("utf-8")).decode("ascii")
        super().__init__(f"{_MARKER}<{encoded}> {error.problem}")


def find(exc: BaseException) -> TaskError | None:
    """The ``TaskError`` a failed Spark job carries in its message, if any."""
    match = _FOUND.search(str(exc))
    if match is None:
        return None
    fields = json.loads(base64.b64decode(match.group(1)))
    decode = fields.pop("decode")
    if decode is not None:
        decode = (str(decode[0]), int(decode[1]), str(decode[2]), str(decode[3]))
    return TaskError(**fields, decode=decode)


Resolver = Callable[[TaskError], InputError]


@contextmanager
def input_errors(resolve: Resolver) -> Iterator[None]:
    """Turn a Spark job failure caused by an input error into that ``InputError``."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:  # Spark wraps worker errors (PythonException, Py4JJavaError)
        error = find(exc)
        if error is None:
            raise
        raise resolve(error) from None
