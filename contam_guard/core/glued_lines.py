"""The prefilter's lines that hold glued words go to the exact path, which reads them twice.

The compiled prefilter (``core.match.prefilter``) hashes each line's words as normalisation reads
them: a camelCase copy of an item is one word there, so its line would be CLEAN and never read
again. ``core.spec.glued`` says which texts the exact path reads a second time; this module sends
their lines there: the cheap byte test over the whole block (``glued.candidates``) finds the few
lines that may hold a glued token, and those whose record does (read exactly, as the exact path
would) become EXACT lines, their hits and words taken out of what the filter handed the rules,
so that nothing is counted twice. Every other line keeps the prefilter's verdict.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from contam_guard.core.match import prefilter as line_status
from contam_guard.core.match.matcher import Hits
from contam_guard.core.match.prefilter import BlockWords, FilteredBlock
from contam_guard.core.spec import glued
from contam_guard.errors import InputError
from contam_guard.io.readers.blocks import LineBlock
from contam_guard.io.readers.documents import documents


def read_again(block: LineBlock[FilteredBlock]) -> LineBlock[FilteredBlock]:
    """``block`` with its CLEAN and HITS lines whose record holds a glued token made EXACT."""
    lines = block.lines
    flagged = glued.candidates(block.data)
    if flagged.size == 0:
        return block
    status = lines.status
    line = np.searchsorted(lines.end, flagged, side="right")
    line = line[line < status.size]
    # A paragraph's later lines (MORE) belong to the record its first line starts.
    starts = np.flatnonzero(status != line_status.MORE)
    line = np.unique(starts[np.searchsorted(starts, line, side="right") - 1])
    line = line[(status[line] == line_status.CLEAN) | (status[line] == line_status.HITS)]
    again = [k for k in line.tolist() if _holds_glued(block, k)]
    if not again:
        return block
    status[again] = line_status.EXACT
    words = lines.words
    filtered = replace(
        lines,
        grams=_hits_without(lines.grams, again),
        windows=_hits_without(lines.windows, again),
        words=None if words is None else _without(words, again),
    )
    return replace(block, lines=filtered)


def _hits_without(hits: Hits, lines: list[int]) -> Hits:
    """``hits`` without those of ``lines`` (a HITS line made EXACT: the exact path matches it)."""
    keep = ~np.isin(hits.record, np.asarray(lines, dtype=np.int64))
    return Hits(hits.record[keep], hits.at[keep], hits.posting[keep])


def _holds_glued(block: LineBlock[FilteredBlock], k: int) -> bool:
    try:
        record = block.record(k)
    except InputError:  # the exact path reads it again and says why
        return True
    return any(glued.joins(document.text) for document in documents(record.segments))


def _without(words: BlockWords, lines: list[int]) -> BlockWords:
    """``words`` without those of the records starting on ``lines``."""
    gone = np.asarray(lines, dtype=np.int64)
    keep_doc = ~np.isin(words.doc_line, gone)
    keep_string = ~np.isin(words.string_line, gone)
    keep_word = np.repeat(keep_doc, words.doc_words)
    return replace(
        words,
        hashes=words.hashes[keep_word],
        breaks=words.breaks[keep_word],  # per word too: the lines of the records kept
        rows=words.rows[keep_word],
        string_words=words.string_words[keep_string],
        string_line=words.string_line[keep_string],
        doc_words=words.doc_words[keep_doc],
        doc_line=words.doc_line[keep_doc],
    )
