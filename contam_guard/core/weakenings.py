"""What a commit range changed that weakens the guard (its config, allowlist or manifest), as a
scan's report carries it; ``guard_changes`` finds them in a git range."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

ACCEPT_OPTION = "--accept-guard-change"


@dataclass(frozen=True)
class Weakening:
    file: str
    """The guard's file that changed (its path in the repository)."""
    what: str


@dataclass(frozen=True)
class GuardChanges:
    """What a range changed that weakens the guard, and whether it was accepted by its digest."""

    changes: tuple[Weakening, ...]
    digest: str
    accepted: bool
    range: str

    @property
    def failing(self) -> bool:
        return bool(self.changes) and not self.accepted

    def lines(self) -> list[str]:
        """One line per change: ``FILE: what``."""
        return [f"{change.file}: {change.what}" for change in self.changes]

    def verdict(self) -> str:
        """One sentence: what the listed changes mean and what to do."""
        if self.accepted:
            return (
                f"{len(self.changes)} change(s) in {self.range} weaken the guard; accepted with "
                f"{ACCEPT_OPTION} {self.digest}"
            )
        return (
            f"{len(self.changes)} change(s) in {self.range} weaken the guard: a reviewer must look at "
            f"them. Once reviewed, accept exactly these with {ACCEPT_OPTION} {self.digest} (the "
            "Action's accept-guard-change input)"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "range": self.range,
            "digest": self.digest,
            "accepted": self.accepted,
            "changes": [{"file": c.file, "change": c.what} for c in self.changes],
        }


def digest_of(changes: Collection[Weakening]) -> str:
    text = "\n".join(sorted(f"{c.file}\0{c.what}" for c in changes))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]
