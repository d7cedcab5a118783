"""The rewording rules in the pipeline: run the pass after the engine, add its pairs after the cap.

``pipeline.execute`` calls ``run_pass`` once the local engine has read the sources (the Spark
engine runs the pass in its own tasks, ``spark.worker``, and fills ``ScanResult.reword``
itself), and ``pipeline.finish`` calls ``add_pairs`` once the engine's pairs are capped, so that every
front end and output sees the same pairs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from contam_guard.engine.pairs import run_span
from contam_guard.engine.scanner import PairRow, ScanResult, Snippet, Source
from contam_guard.reword.index import RewordIndex
from contam_guard.reword.scan_pass import Bars, Hit, read_sources, run
from contam_guard.rules import numbers, reworded

if TYPE_CHECKING:
    from contam_guard.config import Rules
    from contam_guard.engine.index import ManifestIndex
    from contam_guard.manifest.model import Manifest
    from contam_guard.pipeline import Prepared, ScanRequest

SNIPPET_CHARS = 200
"""A pair found only by a rewording rule shows the start of the string (there is no shared run)."""


@dataclass(frozen=True)
class PassSettings:
    """What the pass needs of the rules' settings, picklable (a Spark task receives it): the
    numbers rule's ``n`` and the reworded rule's threshold, None for a rule that is off."""

    numbers: int | None
    reworded: float | None

    @classmethod
    def of(cls, rules: Rules) -> PassSettings | None:
        """The settings of ``rules``; None when both rules are off (no pass to run)."""
        number_settings = numbers.RULE.settings_of(rules)
        reworded_settings = reworded.RULE.settings_of(rules)
        if not (number_settings.enabled or reworded_settings.enabled):
            return None
        return cls(
            number_settings.n if number_settings.enabled else None,
            reworded_settings.threshold if reworded_settings.enabled else None,
        )

    def bars(self, items: int) -> Bars:
        return Bars(
            numbers=None if self.numbers is None else np.full(items, self.numbers, dtype=np.int64),
            reworded=self.reworded,
        )


def registered_before(
    manifest: Manifest, index: ManifestIndex, reword_index: RewordIndex, rules: Rules
) -> list[str]:
    """The notices for sets registered for these rules before they existed (no derived views):
    whichever engine ran the pass, the same notices."""
    enabled = set(rules.enabled())
    # A set registered without these rules (`register --rules`) lacks their views by choice; only
    # a set registered for them that lacks them (an older manifest) is worth a notice.
    ours = enabled & {numbers.NAME, reworded.NAME}
    meant = {name for name, golden in manifest.sets.items() if ours & set(golden.rules)}
    return [
        f"{t.label} was registered before the numbers and reworded rules, which cannot fire on its "
        f"items until it is registered again (`contam-guard register {t.set_name} ...` with the same "
        "files: unchanged content keeps its version)"
        for t in index.targets
        if t.items
        and t.set_name in meant
        and not (reword_index.has_numbers[t.first_item] and reword_index.has_words[t.first_item])
    ]


def run_pass(
    prepared: Prepared, request: ScanRequest, found: Sequence[Source], result: ScanResult
) -> list[str]:
    """Run the pass over the files the scan read completely, when a rewording rule is on; the
    notices to show (views registered before these rules)."""
    rules = prepared.config.rules
    settings = PassSettings.of(rules)
    if settings is None:
        return []
    index = RewordIndex.build(prepared.manifest, prepared.index)
    notices = registered_before(prepared.manifest, prepared.index, index, rules)
    read = set(result.files)
    sources = [(s.path, s.display, s.lines) for s in found if s.display in read]
    records = read_sources(sources, request.read)
    result.reword = run(
        index,
        records,
        prepared.index.spec,
        prepared.key,
        settings.bars(index.items),
        prepared.config.scan.batch_chars,
    )
    return notices


def add_pairs(result: ScanResult, limit: int) -> None:
    """Give the scan's pairs their rewording numbers, and add the pairs only these rules found:
    at most ``limit`` per item (0: all), the best first."""
    if result.reword is None:
        return
    listed = {(p.item, p.source, p.record): k for k, p in enumerate(result.pairs)}
    by_item: dict[int, list[Hit]] = defaultdict(list)
    for hit in result.reword.hits:
        by_item[hit.item].append(hit)
    added = []
    for item in sorted(by_item):
        hits = sorted(by_item[item], key=lambda h: (-h.numbers_run, -h.reworded, h.source, h.record))
        for hit in hits[:limit] if limit else hits:
            where = listed.get((hit.item, hit.source, hit.record))
            if where is not None:
                pair = result.pairs[where]
                result.pairs[where] = replace(pair, numbers_run=hit.numbers_run, reworded=hit.reworded)
            else:
                added.append(_pair(hit))
    result.pairs += added


def snippet_of(text: str) -> Snippet:
    """What a pair found only by a rewording rule shows: the start of its string."""
    shown = text[:SNIPPET_CHARS]
    # The allowlist key digests the whole string's words: another record is another key.
    return Snippet("", shown, "…" if len(text) > SNIPPET_CHARS else "", 0, run_span(text))


def _pair(hit: Hit) -> PairRow:
    return PairRow(
        item=hit.item,
        source=hit.source,
        record=hit.record,
        line=hit.line,
        field=hit.field,
        longest_run=0,
        ngrams8_found=0,
        covered_l10=0,
        window_hits=0,
        snippet=hit.shown or snippet_of(hit.text),
        allowed_inline=hit.allowed_inline,
        numbers_run=hit.numbers_run,
        reworded=hit.reworded,
    )
