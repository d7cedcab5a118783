"""contam-guard's version (what the reports say produced them)."""

from __future__ import annotations

__version__ = "0.1.0"
