"""contam-guard: keep benchmark test items out of training data."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
