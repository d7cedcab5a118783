"""What a scan (or a part of one) found and read: picklable and mergeable, without the
machinery that found it (``core.scan_pass``), so that a worker sends back only this."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from contam_guard.core.families import ngram
from contam_guard.core.families.reword import RewordTotals
from contam_guard.core.match.pairs import PairStore
from contam_guard.io.readers.base import Record
from contam_guard.io.readers.fields import KEY_MARK, general_path


@dataclass
class Census:
    """What a scan read: the inputs in scan order, what was skipped and why, counts, fields."""

    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    records: int = 0
    chars: int = 0
    asked: tuple[str, ...] = ()
    """The ``--field`` paths read (empty: every string of every record)."""
    fields: dict[str, set[str]] = field(default_factory=dict)
    """Per input: the fields read (paths without list positions), as seen in the records parsed
    in Python (all of them, or on the prefilter's path the first ones and the notable ones)."""

    def count_fields(self, records: Iterable[Record]) -> None:
        for record in records:
            self.fields.setdefault(record.source, set()).update(
                general_path(segment.path) for segment in record.segments
            )

    def merge(self, other: Census) -> None:
        """Add a later part of the scan (its files come after this one's)."""
        self.files += [name for name in other.files if name not in self.files]
        self.skipped += other.skipped
        self.records += other.records
        self.chars += other.chars
        for name, seen in other.fields.items():
            self.fields.setdefault(name, set()).update(seen)

    def fields_note(self, limit: int = 8) -> list[str]:
        """What was read, for the summary: the ``--field`` paths, or per input (the first
        ``limit``) the fields seen when every string was read."""
        if self.asked:
            return [f"fields read: {', '.join(self.asked)} (--field)"]
        notes = []
        for name in self.files[:limit]:
            seen = sorted(general for general in self.fields.get(name, ()) if not general.endswith(KEY_MARK))
            shown = ", ".join(path or "(the text)" for path in seen)
            notes.append(f"{name}: every string read" + (f" (fields: {shown})" if shown else ""))
        if len(self.files) > limit:
            notes.append(f"... and {len(self.files) - limit} more file(s), every string read")
        return notes


@dataclass
class ScanState:
    """Everything a scan (or a part of one) found: picklable, mergeable."""

    ngram: ngram.NgramTotals
    reword: RewordTotals | None
    store: PairStore
    census: Census

    def merge(self, other: ScanState) -> None:
        """Add a later part of the scan (its inputs after this one's)."""
        self.merge_found(other)
        self.census.merge(other.census)

    def merge_found(self, other: ScanState) -> None:
        """Add another part's totals and pairs (in any order: the store ranks inputs by the
        order they were noted in, ``Accumulator.note_input``), but not its census."""
        self.ngram.merge(other.ngram)
        if self.reword is not None and other.reword is not None:
            self.reword.merge(other.reword)
        for name in other.census.files:
            self.store.file(name)
        self.store.merge(other.store.pairs(), other.store.unlisted())
