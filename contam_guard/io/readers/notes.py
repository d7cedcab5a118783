"""What readers did not read while reading the rest, for the scan's summary.

A reader yields records; what it leaves out on the way (an image inside an archive, Parquet
binary values that are not UTF-8 text) is told here, and the front end that runs the scan takes
the notes (``take``) into its notices when the scan is done. Files that cannot hold text are
listed by kind, a few names each, so that a folder of ten thousand images is one line.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

SHOWN = 3
"""Names listed per kind; the rest are counted."""
_MAX_NOTES = 1000


def listing(kind: str, names: list[str], count: int) -> str:
    """``image/png: cannot hold text, not read: a.png, b.png, c.png and 9 more``."""
    more = f" and {count - len(names)} more" if count > len(names) else ""
    return f"{kind}: cannot hold text, not read: {', '.join(names)}{more}"


@dataclass
class _Kind:
    names: list[str] = field(default_factory=list)
    count: int = 0


class Notes:
    """Notes gathered while reading (thread-safe; a process has one, ``NOTES``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kinds: dict[str, _Kind] = {}
        self._notes: dict[str, None] = {}
        self._dropped = 0

    def not_text(self, where: str, kind: str) -> None:
        """``where`` (a file, an archive member) cannot hold text: it is ``kind``."""
        with self._lock:
            entry = self._kinds.setdefault(kind, _Kind())
            if where not in entry.names:
                if len(entry.names) < SHOWN:
                    entry.names.append(where)
                entry.count += 1

    def add(self, text: str) -> None:
        """Any other note (the same text twice is one note)."""
        with self._lock:
            if text in self._notes:
                return
            if len(self._notes) < _MAX_NOTES:
                self._notes[text] = None
            else:
                self._dropped += 1

    def take(self) -> list[str]:
        """Every note so far (kinds first, each once), and forget them."""
        with self._lock:
            lines = [listing(kind, entry.names, entry.count) for kind, entry in self._kinds.items()]
            lines += list(self._notes)
            if self._dropped:
                lines.append(f"... and {self._dropped} more note(s) of the same sort")
            self._kinds, self._notes, self._dropped = {}, {}, 0
            return lines


NOTES = Notes()
"""The notes of this process's readers."""


def take() -> list[str]:
    """The notes of this process's readers so far (``Notes.take``)."""
    return NOTES.take()


__all__ = ["NOTES", "SHOWN", "Notes", "listing", "take"]
