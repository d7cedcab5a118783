"""The local engine: inputs read in this process, or over ``--jobs`` worker processes.

Each input is read once: a JSONL or text file through the compiled prefilter in blocks of lines
(``Scanner.prefilter``: most lines never become Python objects), anything else by its reader as
records; either way every rule family sees it in the same pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.match.prefilter import line_format
from contam_guard.core.scanner import Scanner
from contam_guard.errors import InputError
from contam_guard.io.batching import batches
from contam_guard.io.readers import ReadOptions, Record, UnsupportedFileError, detect_format, read_records
from contam_guard.io.readers import notes as reader_notes
from contam_guard.io.readers.documents import grouped
from contam_guard.io.sources import Source

Progress = Callable[[int], None]


def input_bytes(sources: Sequence[Source]) -> int:
    """The inputs' size in bytes (what ``Scanner.expect`` is told)."""
    return sum(file_size(s.path) for s in sources)


def file_size(path: Path) -> int:
    """``path``'s size in bytes; 0 for what is not a file or cannot be read (the scan says why)."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def scan_sources(
    scanner: Scanner,
    sources: Sequence[Source],
    options: ReadOptions,
    *,
    skip_unreadable: bool = False,
    progress: Progress | None = None,
) -> Accumulator:
    """Scan every source in this process; ``InputError`` on anything unreadable (with
    ``skip_unreadable``, the user's choice, a notice instead: the records read before the
    failure still count)."""
    scanner.expect(input_bytes(sources))
    acc = scanner.accumulator()
    read_into(acc, sources, options, skip_unreadable=skip_unreadable, progress=progress)
    return acc


def read_into(
    acc: Accumulator,
    sources: Sequence[Source],
    options: ReadOptions,
    *,
    skip_unreadable: bool = False,
    progress: Progress | None = None,
) -> None:
    """Feed every source to ``acc`` (see ``scan_sources``)."""
    census = acc.state.census
    census.asked = options.fields
    for source in sources:
        acc.note_input(source.display)
    for source in sources:
        before = census.chars
        try:
            if detect_format(source.path) is None and not source.path.is_dir():
                acc.skip_input(f"{source.display}: not a data file type contam-guard reads")
                continue
            for _ in _feed(acc, source, options):
                if progress is not None:
                    progress(census.chars - before)
                    before = census.chars
        except UnsupportedFileError as exc:
            acc.skip_input(f"{source.display}: {exc.problem}")
            continue
        except InputError as exc:
            if not skip_unreadable:
                raise
            acc.skip_input(f"unreadable, not scanned from there on (--skip-unreadable): {exc}")
            continue
        acc.read_input(source.display)
    for note in reader_notes.take():  # what the readers left out on the way (images in archives ...)
        acc.skip_input(note)


def _feed(acc: Accumulator, source: Source, options: ReadOptions) -> Iterator[None]:
    """Feed one source to ``acc``, a block or a batch at a time (yielding after each)."""
    scanner = acc.scanner
    lines = line_format(detect_format(source.path), options)
    if scanner.prefilter is not None and lines is not None and source.lines is None:
        for block in scanner.prefilter.blocks(source.path, source.display, options, lines):
            acc.add_block(block)
            yield
        return
    records: Iterator[Record] = read_records(source.path, source.display, options)
    if options.group_by is not None:
        records = grouped(records)
    if source.lines is not None:
        wanted = source.lines
        records = (record for record in records if record.touches(wanted))
    for batch in batches(records, scanner.batch_chars, Record.size):
        acc.add_batch(batch)
        yield
