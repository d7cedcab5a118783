"""The rewording rules in the pipeline: run the pass after the engine, add its pairs after the cap.

``pipeline.execute`` calls ``run_pass`` once the engine (local or Spark) has read the sources,
and ``pipeline.finish`` calls ``add_pairs`` once the engine's pairs are capped, so that every
front end and output sees the same pairs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from contam_guard.engine.pairs import run_span
from contam_guard.engine.scanner import PairRow, ScanResult, Snippet, Source
from contam_guard.reword.index import RewordIndex
from contam_guard.reword.scan_pass import Bars, Hit, read_sources, run
from contam_guard.rules import numbers, reworded

if TYPE_CHECKING:
    from contam_guard.pipeline import Prepared, ScanRequest

SNIPPET_CHARS = 200
"""A pair found only by a rewording rule shows the start of the string (there is no shared run)."""


def run_pass(
    prepared: Prepared, request: ScanRequest, found: Sequence[Source], result: ScanResult
) -> list[str]:
    """Run the pass over the files the scan read completely, when a rewording rule is on; the
    notices to show (views registered before these rules)."""
    rules = prepared.config.rules
    enabled = set(rules.enabled())
    if not enabled & {numbers.NAME, reworded.NAME}:
        return []
    index = RewordIndex.build(prepared.manifest, prepared.index)
    # A set registered without these rules (`register --rules`) lacks their views by choice; only
    # a set registered for them that lacks them (an older manifest) is worth a notice.
    ours = enabled & {numbers.NAME, reworded.NAME}
    meant = {name for name, golden in prepared.manifest.sets.items() if ours & set(golden.rules)}
    notices = [
        f"{t.label} was registered before the numbers and reworded rules, which cannot fire on its "
        f"items until it is registered again (`contam-guard register {t.set_name} ...` with the same "
        "files: unchanged content keeps its version)"
        for t in prepared.index.targets
        if t.items
        and t.set_name in meant
        and not (index.has_numbers[t.first_item] and index.has_words[t.first_item])
    ]
    number_settings = numbers.RULE.settings_of(rules)
    reworded_settings = reworded.RULE.settings_of(rules)
    bars = Bars(
        numbers=np.full(index.items, number_settings.n, dtype=np.int64) if number_settings.enabled else None,
        reworded=reworded_settings.threshold if reworded_settings.enabled else None,
    )
    read = set(result.files)
    sources = [(s.path, s.display, s.lines) for s in found if s.display in read]
    records = read_sources(sources, request.read)
    result.reword = run(
        index, records, prepared.index.spec, prepared.key, bars, prepared.config.scan.batch_chars
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


def _pair(hit: Hit) -> PairRow:
    shown = hit.text[:SNIPPET_CHARS]
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
        # The allowlist key digests the whole string's words: another record is another key.
        snippet=Snippet("", shown, "…" if len(hit.text) > SNIPPET_CHARS else "", 0, run_span(hit.text)),
        allowed_inline=hit.allowed_inline,
        numbers_run=hit.numbers_run,
        reworded=hit.reworded,
    )
