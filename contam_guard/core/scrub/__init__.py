"""Scrub: GPT-3's removal filter, applied to training files before fine-tuning, with a log.

GPT-3 (Brown et al. 2020, arXiv 2005.14165, Appendix C) removed from the training data "the
colliding 13-grams as well as a 200 character window around it, splitting the original document
into pieces"; pieces under 200 characters were discarded, documents split into more than 10
pieces were removed entirely, and 13-grams matching more than 10 training documents were left
alone (common phrases). This package implements that filter exactly, on contam-guard's words
(``contam_guard.core.spec.normalise``, spec ``words-v1``) and hashes, against every registered set
and view of the manifest.

Definitions (all numbers are settings; defaults in brackets):

- A *collision* is an n-gram [13] of a record's normalised words that is also an n-gram of one
  golden item (never spanning two records or two items). Its span is [start, end) in the
  record's original text: from the first kept character of its first word to the last kept
  character of its last word. Offsets count characters (code points) of the decoded text.
- An n-gram occurring in more than ``max_doc_freq`` [10] distinct records of the whole input
  (all files together) is left alone. A counting pass over the input finds these counts first.
- Removal: each collision's span widened by ``window`` [200] characters on each side, clipped
  to the record; overlapping or adjacent removals merge (``cuts.py``).
- Mode ``pieces``: the record is split at the removals; each piece of at least
  ``min_piece_chars`` [200] characters becomes its own output record (carrying the source
  record's number, id and the piece's offsets); shorter pieces are discarded; a record split
  into more than ``max_pieces`` [10] pieces (counting the short ones) is dropped whole.
- Mode ``drop``: a record with any collision is dropped whole.
- Mode ``auto`` (default) chooses per record: ``pieces`` for plain-text files, for a JSONL
  record holding one string besides its id (``{"id": ..., "text": ...}``: a document) and
  for a record whose one ``--field`` is a top-level string; ``drop`` for a record of several
  strings (a prompt and its completion, chat turns, instruction fields: a cut would break how
  they fit together) and for a nested (``a.b``) or list (``a[].b``) field.
- Every string a scan reads is scrubbed: without ``--field`` an n-gram in any string of a
  record counts, each string hashed on its own (an n-gram never spans two).

Rounds. Cutting can change the counts: a common n-gram (left alone) can lose occurrences to
other n-grams' windows and fall to ``max_doc_freq`` or fewer records, and a cut through a word
leaves a partial word that may complete a new collision. Scrubbing the output again would then
remove more, so one application is not idempotent. Scrub therefore repeats the filter on its own
output (the pieces count as records, as they would in a second run) until no golden n-gram
occurs in 1..``max_doc_freq`` records. Round 1 is the filter above; a second round is rare (none
in the GSM8K runs of the tests) and each removal's round is in the log. The guarantees, tested against a
slow reference in ``tests/scrub``: scrubbing the output again changes nothing (byte for byte),
and every golden n-gram left in the output occurs in more than ``max_doc_freq`` of its records.

Formats: JSONL and plain text (one document per line), optionally ``.gz``/``.zst``; the output
keeps the input's format (compressed by its own name). Untouched records and blank lines are
copied byte for byte; a JSONL piece is the original object with the named field replaced by the
piece and a field ``"contam_guard_piece": {"source_record", "id", "start", "end"}``. CSV,
Parquet and JSON-array inputs are refused (convert to JSONL first).

Memory: counts are an array over the manifest's n-grams; records are remembered only while one
of their n-grams is still rare, and the touched records' plans are kept (bounded by collisions,
never by the corpus). Passes: one counting pass that hashes everything, one cheap pass per
round that parses only touched records, and the writing pass that copies lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from contam_guard.core.config import ScrubSettings
from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.scrub.commit import together
from contam_guard.core.scrub.count import InputTotals, Job, count_pass
from contam_guard.core.scrub.cuts import REASONS, CutSettings, Reason
from contam_guard.core.scrub.golden import GoldenNgrams
from contam_guard.core.scrub.lines import PIECE_FIELD, scrub_format
from contam_guard.core.scrub.rounds import RecordState, RoundSettings, run_rounds
from contam_guard.core.scrub.write import log_entries, write_log, write_outputs
from contam_guard.core.spec.hashing import HashKey
from contam_guard.io.readers import ReadOptions


@dataclass(frozen=True)
class ScrubOptions:
    settings: ScrubSettings = field(default_factory=ScrubSettings)
    """The filter's numbers and mode (``core.config.ScrubSettings``: defaults, bounds and help)."""
    read: ReadOptions = field(default_factory=ReadOptions)
    batch_chars: int = 1 << 20

    def rounds(self) -> RoundSettings:
        """The settings each round applies (the local rounds' and Spark's)."""
        s = self.settings
        return RoundSettings(
            mode=s.mode,
            cut=CutSettings(s.window, s.min_piece_chars, s.max_pieces),
            max_doc_freq=s.max_doc_freq,
            read=self.read,
            batch_chars=self.batch_chars,
        )


@dataclass(frozen=True)
class ScrubStats:
    files: int
    records: int
    chars: int
    bytes: int
    """Bytes of the records read (decompressed), for throughput."""
    touched: int
    dropped: int
    """Touched records with no piece left (dropped whole, or every piece too short)."""
    pieces: int
    chars_removed: int
    by_reason: dict[Reason, tuple[int, int]]
    """Per reason: (records with such a removal, characters removed for it)."""
    by_view: dict[str, int]
    """Per ``set:view``: records touched by its n-grams."""
    left_alone: int
    """Distinct golden n-grams still in the output, each in more than ``max_doc_freq`` records."""
    rounds: int


@dataclass(frozen=True)
class ScrubPlan:
    """Everything decided, nothing written: what ``apply`` writes and what the log says."""

    jobs: list[Job]
    options: ScrubOptions
    golden: GoldenNgrams
    states: dict[tuple[int, int], RecordState]
    totals: InputTotals
    stats: ScrubStats
    settings: RoundSettings


def plan(index: ManifestIndex, jobs: list[Job], options: ScrubOptions, key: HashKey | None) -> ScrubPlan:
    """Count, then run the rounds; raises ``InputError`` for anything unreadable."""
    golden = GoldenNgrams.build(index, options.settings.n)
    settings = options.rounds()
    counts, candidates, totals = count_pass(
        jobs, golden, options.read, key, max_doc_freq=settings.max_doc_freq, batch_chars=options.batch_chars
    )
    result = run_rounds(jobs, golden, key, settings, counts, candidates, totals)
    stats = _stats(
        jobs, golden, result.states, totals, result.rounds, int((result.counts > settings.max_doc_freq).sum())
    )
    return ScrubPlan(jobs, options, golden, result.states, totals, stats, settings)


def apply(scrub_plan: ScrubPlan, log: Path | None = None) -> None:
    """Write the log and every job's output (jobs without one are skipped) in full, then put
    them in place together, the log first (``core.scrub.commit``): a failed write changes nothing,
    and a kill leaves the old input, or the new one with its log; never a scrubbed input whose
    removals are recorded nowhere, nor a log of removals that did not happen."""
    with together() as files:
        if log is not None:
            write_log(log, log_entries(scrub_plan.jobs, scrub_plan.states, scrub_plan.golden), files)
        write_outputs(scrub_plan.jobs, scrub_plan.states, scrub_plan.totals, scrub_plan.settings, files)


def _stats(
    jobs: list[Job],
    golden: GoldenNgrams,
    states: dict[tuple[int, int], RecordState],
    totals: InputTotals,
    rounds: int,
    left_alone: int,
) -> ScrubStats:
    by_reason: dict[Reason, list[int]] = {reason: [0, 0] for reason in REASONS}
    by_view: dict[str, int] = {}
    targets = golden.index.targets
    for state in states.values():
        reasons: set[Reason] = set()
        views: set[str] = set()
        for _, removal in state.removed:
            reasons.add(removal.reason)
            by_reason[removal.reason][1] += removal.end - removal.start
            for k in removal.keys:
                views.update(targets[int(t)].label for t in golden.index.item_target[golden.items_of(k)])
        for reason in reasons:
            by_reason[reason][0] += 1
        for view in views:
            by_view[view] = by_view.get(view, 0) + 1
    kept = [b - a for s in states.values() for a, b in s.kept]
    return ScrubStats(
        files=len(jobs),
        records=totals.records,
        chars=totals.chars,
        bytes=totals.bytes,
        touched=len(states),
        dropped=sum(1 for s in states.values() if not s.kept),
        pieces=len(kept),
        chars_removed=sum(s.length for s in states.values()) - sum(kept),
        by_reason={reason: (v[0], v[1]) for reason, v in by_reason.items()},
        by_view=dict(sorted(by_view.items())),
        left_alone=left_alone,
        rounds=rounds,
    )


__all__ = [
    "PIECE_FIELD",
    "Job",
    "ScrubOptions",
    "ScrubPlan",
    "ScrubStats",
    "apply",
    "plan",
    "scrub_format",
]
