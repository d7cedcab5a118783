"""``Scanner.scrub_records``: GPT-3's removal filter on records in memory.

The records go through the very scrub the command line runs on a file (``contam_guard.core.scrub``:
the counting pass, the rounds, the 200-character windows, the pieces), over a private temporary
JSON Lines file: one implementation of the filter, whatever the input's shape.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contam_guard.core.config import ScrubSettings
from contam_guard.errors import InputError

if TYPE_CHECKING:
    from contam_guard.core.scan_pass import ScanPass

TEXT_KEY = "text"


@dataclass(frozen=True)
class ScrubResult:
    """What scrubbing some records gave: the records to keep (untouched ones as given, cut ones
    as their pieces, in order), and one log entry per removed span (as ``scrub --log`` writes)."""

    records: list[dict[str, object] | str]
    removed: list[dict[str, object]] = field(default_factory=list)
    dropped: int = 0
    """Records dropped whole (every piece too short, too many pieces, or mode ``drop``)."""


def scrub_records(
    scanner: ScanPass,
    records: Iterable[Mapping[str, object] | str],
    *,
    fields: Iterable[str] = (),
    settings: ScrubSettings | None = None,
) -> ScrubResult:
    from contam_guard.core.scrub import Job, ScrubOptions, apply, plan  # noqa: PLC0415
    from contam_guard.io.readers import ReadOptions  # noqa: PLC0415

    given = list(records)
    strings = all(isinstance(r, str) for r in given)
    with tempfile.TemporaryDirectory(prefix="contam-guard-scrub-") as folder:
        source, output, log = (
            Path(folder, "records.jsonl"),
            Path(folder, "out.jsonl"),
            Path(folder, "log.jsonl"),
        )
        with source.open("w", encoding="utf-8") as handle:
            for number, record in enumerate(given):
                if not isinstance(record, (str, Mapping)):
                    raise InputError(
                        "<records>", f"record {number} is a {type(record).__name__}, not a dict or a str"
                    )
                row = {TEXT_KEY: record} if isinstance(record, str) else dict(record)
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        options = ScrubOptions(
            settings=settings or scanner.config.scrub,
            read=ReadOptions(fields=(TEXT_KEY,) if strings else tuple(fields)),
            batch_chars=scanner.batch_chars,
        )
        scrub_plan = plan(scanner.index, [Job(source, "<records>", "jsonl", output)], options, scanner.key)
        apply(scrub_plan, log)
        kept = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines() if line.strip()]
        removed = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: list[dict[str, object] | str] = [row[TEXT_KEY] if strings else row for row in kept]
    return ScrubResult(out, removed, scrub_plan.stats.dropped)
