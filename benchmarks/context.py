"""What every job is given: the corpus, the registered set and a work folder outside the repo."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.corpus import Corpus


@dataclass(frozen=True)
class Context:
    work: Path
    corpus: Corpus
    eval_path: Path  # the 1,319 test questions as {"id": index, "question": ...}
    eval_items: int

    @property
    def eval_bytes(self) -> int:
        return self.eval_path.stat().st_size


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
