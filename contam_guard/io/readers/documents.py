"""A record as the documents the engine hashes: its value strings as one, each key on its own.

A test item cut into pieces (the elements of a list field, sibling fields, the cells of a row)
is still a copy of the item, so the rules, which the seed articles define over training
*documents*, read a record's value strings together, in order, as one text: a shared run may
cross from one string into the next. The strings are joined with a newline, a word boundary
that is not a character of the alnum view, so no word spans two strings while a 50-character
window may. Object keys (``KEY_MARK`` paths) are read each on its own: a key between two values
(``{"s0": ..., "s1": ...}``) does not break the run between them.

The compiled prefilter (``csrc/native.c``, ``hash_segments``) hashes the same documents in the
same order (the values' document first, then each key), so positions agree on both paths.

``grouped`` makes consecutive records with the same ``--group-by`` value one record (one
document): a sentence-per-record corpus.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from contam_guard.io.readers.base import Record, Segment
from contam_guard.io.readers.fields import KEY_MARK

SEPARATOR = "\n"
"""Between two strings of one document: whitespace (a word boundary), and not alnum."""
SPAN = ".."
"""Between the first and the last field a run spans: ``sentences[0]..sentences[3]``."""


@dataclass(frozen=True, slots=True)
class Document:
    """One text the engine hashes: ``segments`` of a record joined by ``SEPARATOR``;
    ``starts[k]`` is where segment k's text begins in ``text``."""

    text: str
    segments: tuple[Segment, ...]
    starts: tuple[int, ...]

    def at(self, offset: int) -> int:
        """The segment holding character ``offset`` of ``text`` (a separator: the one before)."""
        return max(bisect.bisect_right(self.starts, offset) - 1, 0)

    def field(self, start: int, end: int) -> str:
        """The path of the segment(s) holding ``text[start:end]``: ``completion``, or for a run
        that crosses strings ``sentences[0]..sentences[3]`` (a ``--group-by`` document's
        strings are named with their record, ``[12].text``)."""
        first, last = self.at(start), self.at(max(end - 1, start))
        name = self.segments[first].path
        return name if first == last else name + SPAN + self.segments[last].path

    def local(self, offset: int) -> tuple[int, int]:
        """(segment, offset in that segment's text) of character ``offset`` of ``text``."""
        k = self.at(offset)
        return k, offset - self.starts[k]


def documents(segments: Iterable[Segment]) -> list[Document]:
    """The documents of a record's segments: its values, joined in order (if it has any), then
    each key on its own."""
    values: list[Segment] = []
    keys: list[Segment] = []
    for segment in segments:
        (keys if segment.path.endswith(KEY_MARK) else values).append(segment)
    found = [_joined(tuple(values))] if values else []
    return found + [Document(key.text, (key,), (0,)) for key in keys]


def _joined(segments: tuple[Segment, ...]) -> Document:
    if len(segments) == 1:
        return Document(segments[0].text, segments, (0,))
    starts: list[int] = []
    at = 0
    for segment in segments:
        starts.append(at)
        at += len(segment.text) + len(SEPARATOR)
    return Document(SEPARATOR.join(s.text for s in segments), segments, tuple(starts))


def line_of(record: Record, document: Document, offset: int) -> int | None:
    """The file line that character ``offset`` of ``document`` (a document of ``record``) lies
    on: its string's record's line, plus the newlines before it in a plain-text paragraph."""
    k, local = document.local(offset)
    segment = document.segments[k]
    line = segment.line if segment.line is not None else record.line
    if line is None or not record.text_lines:
        return line
    return line + segment.text.count("\n", 0, local)


def grouped(records: Iterable[Record]) -> Iterator[Record]:
    """Consecutive records with the same ``group`` as one record: the first one's number and
    line, every member's strings in order, each named with its record (``[12].text``) and
    carrying its line; marked allowed only when every member is. A record without a group value
    (None) stays on its own."""
    members: list[Record] = []
    for record in records:
        if members and (record.group is None or record.group != members[0].group):
            yield _merged(members)
            members = []
        members.append(record)
    if members:
        yield _merged(members)


def _merged(members: list[Record]) -> Record:
    if len(members) == 1 and members[0].group is None:
        return members[0]
    first = members[0]
    segments = tuple(
        Segment(_member_path(member.index, s.path), s.text, member.line)
        for member in members
        for s in member.segments
    )
    return replace(first, segments=segments, raw=None, allow=all(m.allow for m in members), item_id=None)


def _member_path(record: int, path: str) -> str:
    """``path`` of a string of record ``record`` in a group: ``[12].text``, ``[12]`` for text."""
    return f"[{record}]" + ("." + path if path and not path.startswith("[") else path)
