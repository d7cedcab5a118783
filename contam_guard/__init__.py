"""contam-guard: keep benchmark test items out of training data.

The library in four names::

    import contam_guard as cg
    scanner = cg.Scanner.open(".contam-guard")       # the manifest folder (or its manifest.json)
    report = scanner.scan_records(records)            # dicts (every string read) or strings
    report.exit_code, report.findings                 # cg.ExitCode, [cg.Finding, ...]

Errors a user can fix are ``cg.ContamGuardError`` (their ``exit_code`` is the command line's).
The names load on first use (``import contam_guard`` stays cheap: the command line imports it
before it knows what it will run).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from contam_guard.version import __version__

if TYPE_CHECKING:
    from contam_guard.core.accumulator import Accumulator
    from contam_guard.core.scanner import FinishOptions, Scanner
    from contam_guard.core.verdicts import Finding, Report
    from contam_guard.errors import ContamGuardError, ExitCode

_PUBLIC = {
    "Accumulator": "contam_guard.core.accumulator",
    "ContamGuardError": "contam_guard.errors",
    "ExitCode": "contam_guard.errors",
    "Finding": "contam_guard.core.verdicts",
    "FinishOptions": "contam_guard.core.scanner",
    "Report": "contam_guard.core.verdicts",
    "Scanner": "contam_guard.core.scanner",
}


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'contam_guard' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


__all__ = [
    "Accumulator",
    "ContamGuardError",
    "ExitCode",
    "Finding",
    "FinishOptions",
    "Report",
    "Scanner",
    "__version__",
]
