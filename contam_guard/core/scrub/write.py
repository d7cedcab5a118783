"""The writing pass and the removal log.

Each output is streamed into a temporary file beside it; the outputs and the log are renamed over
their destinations together, only once all are complete (``core.scrub.commit``), so an interrupted or
failed scrub leaves the input intact, no half-written output and no log of removals that did not
happen. Untouched records and blank lines are copied as the exact bytes read, in runs: only
touched lines are split out and parsed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from contam_guard.core.scrub.commit import Together
from contam_guard.core.scrub.count import InputTotals, Job, stamp
from contam_guard.core.scrub.golden import GoldenNgrams
from contam_guard.core.scrub.lines import (
    Line,
    changed_error,
    lines_in,
    open_blocks,
    output_stream,
    parse_line,
    render,
)
from contam_guard.core.scrub.rounds import RecordState, RoundSettings


def write_outputs(
    jobs: list[Job],
    states: dict[tuple[int, int], RecordState],
    totals: InputTotals,
    settings: RoundSettings,
    files: Together,
) -> None:
    """Write every job's output (jobs without one are skipped) into ``files``."""
    for number, job in enumerate(jobs):
        if job.output is None:
            continue
        if stamp(job.path) != totals.stamps[number]:
            raise changed_error(job.display)
        touched = {state.line: state for (file, _), state in states.items() if file == number}
        wanted = sorted(touched)
        with (
            open_blocks(job.path, job.display, job.fmt) as (bom, blocks),
            files.file(job.output) as handle,
            output_stream(job.output, bom, handle) as sink,
        ):
            for block in blocks:
                written = 0  # untouched lines are copied in runs, as the bytes read
                for line_number in lines_in(block, wanted):
                    state = touched[line_number]
                    start, end = block.span(line_number)
                    sink.write(block.data[written:start])
                    line = Line(line_number, bytes(block.data[start:end]), state.record)
                    parsed = parse_line(job.fmt, line, job.display, settings.read)
                    if len(parsed.text) != state.length:
                        raise changed_error(job.display, line.number)
                    sink.write(render(job.fmt, parsed, state.record, tuple(state.kept)))
                    written = end
                sink.write(block.data[written:])
            # Checked before the rename, so an input changed meanwhile is never replaced (--in-place)
            # or half reflected in its output.
            if stamp(job.path) != totals.stamps[number]:
                raise changed_error(job.display)


def log_entries(
    jobs: list[Job], states: dict[tuple[int, int], RecordState], golden: GoldenNgrams
) -> Iterator[dict[str, object]]:
    """One entry per touched record, in input order. Offsets only: no text of either side."""
    for (number, record), state in sorted(states.items()):
        removed: list[tuple[int, int, dict[str, object]]] = []
        for round_number, removal in state.removed:
            items = sorted({int(i) for k in removal.keys for i in golden.items_of(k)})
            labels = [golden.label(i) for i in items]
            removed.append(
                (
                    removal.start,
                    removal.end,
                    {
                        "start": removal.start,
                        "end": removal.end,
                        "reason": removal.reason,
                        "round": round_number,
                        "matches": [{"set": x.set_name, "view": x.view, "item": x.item} for x in labels],
                        "ngrams": [list(span) for span in removal.ngrams],
                    },
                ),
            )
        removed.sort(key=lambda r: (r[0], r[1]))
        yield {
            "source": jobs[number].display,
            "record": record,
            "line": state.line,
            "id": state.item_id,
            "mode": state.mode,
            "chars": state.length,
            "removed": [entry for _, _, entry in removed],
            "kept": [list(piece) for piece in state.kept],
        }


def write_log(path: Path, entries: Iterator[dict[str, object]], files: Together) -> None:
    with files.file(path) as handle:
        for entry in entries:
            handle.write(json.dumps(entry).encode("utf-8") + b"\n")
