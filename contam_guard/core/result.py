"""What a finished scan read and found, as the verdicts and every output read it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from contam_guard.core.match.index import ManifestIndex
from contam_guard.core.match.matcher import ItemTotals
from contam_guard.core.match.pairs import Unlisted
from contam_guard.core.match.stats import ItemStats, RewordStats, item_stats
from contam_guard.core.pairs import Pair
from contam_guard.core.state import Census


@dataclass
class ScanResult:
    index: ManifestIndex
    totals: ItemTotals
    pairs: list[Pair] = field(default_factory=list)
    """The listed pairs, by input (scan order), record and item: at most ``max_pairs`` per item."""
    unlisted: dict[int, Unlisted] = field(default_factory=dict)
    """Per item with more pairs than ``max_pairs``: the others, counted by shared run."""
    max_pairs: int = 0
    """Pairs listed per item (0: all)."""
    reword: RewordStats | None = None
    """The rewording family's per-item numbers (None when its rules are off)."""
    census: Census = field(default_factory=Census)

    @property
    def asked(self) -> tuple[str, ...]:
        """The ``--field`` paths the scan read (empty: every string of every record)."""
        return self.census.asked

    @property
    def files(self) -> list[str]:
        return self.census.files

    @property
    def skipped(self) -> list[str]:
        """Notices for inputs that were not scanned, or not to their end."""
        return self.census.skipped

    @property
    def records(self) -> int:
        return self.census.records

    @property
    def chars(self) -> int:
        return self.census.chars

    @property
    def fields(self) -> dict[str, set[str]]:
        return self.census.fields

    def fields_note(self, limit: int = 8) -> list[str]:
        return self.census.fields_note(limit)

    def item_stats(self) -> ItemStats:
        return replace(item_stats(self.index, self.totals), reword=self.reword)
