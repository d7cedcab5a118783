"""``Scanner``: a manifest opened for scanning, the one entry point of every front end.

    import contam_guard as cg
    scanner = cg.Scanner.open(".contam-guard")   # the folder, or its manifest.json
    report = scanner.scan_records(records)       # dicts (every string read) or strings
    report.exit_code, report.findings

    acc = scanner.accumulator()                  # or, for a scan in parts:
    acc.add_records(batch); acc.add_jsonl_block(raw_lines, source="train.jsonl")
    total.merge(acc)                             # parts from workers, partitions, ...
    report = scanner.finish(total)

``finish`` is the one post-scan step (the per-item cap on listed pairs, the records' allow
markers, the allowlist, redaction, the verdicts) for the command line, ``--jobs``, Spark, Ray
and datatrove. Library code never prints and never exits: what a reader should know comes back
in ``Report.notices``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.finish import FinishOptions
from contam_guard.core.scan_pass import ScanPass
from contam_guard.core.state import ScanState
from contam_guard.io.readers.base import Record


class Scanner(ScanPass):
    """A manifest, its settings and key, opened for scanning (see the module's docstring)."""

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        manifest: str | os.PathLike[str] = ".contam-guard",
        *,
        config: str | os.PathLike[str] | None = None,
        rules: Mapping[str, Mapping[str, object]] | None = None,
        max_pairs: int | None = None,
        threads: int = 1,
    ) -> Scanner:
        """Open the manifest at ``manifest`` (the guard folder or its ``manifest.json``), with the
        settings found as the command line finds them (from the manifest's project, or the file
        ``config``), ``rules`` overriding some (``{"gpt3": {"n": 10}}``), and the key from the
        environment variable the settings name (``CONTAM_GUARD_KEY``) for a keyed manifest.
        ``threads``: how many threads the compiled passes may use on a large input (the result is
        the same; keep 1 where your own pipeline already runs a scan per core)."""
        from contam_guard.core.opening import open_scanner  # noqa: PLC0415 (manifest and config I/O)

        scanner = open_scanner(
            cls, Path(manifest), None if config is None else Path(config), rules, max_pairs
        )
        scanner.use_threads(threads)
        return scanner

    # --- scanning -------------------------------------------------------------------------

    def accumulator(self, *, max_pairs: int | None = None) -> Accumulator:
        """An empty scan over this manifest; ``max_pairs``: pairs listed per item (0: all;
        default: the scanner's), for a part that a merge caps later."""
        return Accumulator(self, self.empty_state(max_pairs))

    def scan_records(
        self,
        records: Iterable[Record | Mapping[str, object] | str],
        *,
        source: str = "<records>",
        fields: Iterable[str] = (),
        options: FinishOptions | None = None,
    ) -> Any:
        """Scan ``records`` (dicts: every string read, or only ``fields``; or strings) and finish."""
        acc = self.accumulator()
        acc.add_records(records, source=source, fields=fields)
        acc.read_input(source)
        return self.finish(acc, options)

    def scrub_records(
        self,
        records: Iterable[Mapping[str, object] | str],
        *,
        fields: Iterable[str] = (),
        settings: Any = None,
    ) -> Any:
        """GPT-3's removal filter on ``records`` (``contam-guard scrub`` on records in memory):
        the records to keep, the spans removed, the records dropped (``core.scrubbing``).
        ``settings``: a ``core.config.ScrubSettings`` (default: the project's ``scrub:``)."""
        from contam_guard.core.scrubbing import scrub_records  # noqa: PLC0415

        return scrub_records(self, records, fields=fields, settings=settings)

    # --- finishing ------------------------------------------------------------------------

    def finish(self, acc: Accumulator | ScanState, options: FinishOptions | None = None) -> Any:
        """The report of a finished scan: verdicts, allowlist, markers, redaction (see the
        module's docstring)."""
        from contam_guard.core.finish import finish  # noqa: PLC0415

        state = acc.state if isinstance(acc, Accumulator) else acc
        return finish(self, state, options or FinishOptions())

    def with_rules(self, rules: Any) -> Scanner:
        """This scanner with other rule settings (a ``core.config.Rules``), on as many threads."""
        other = Scanner(
            self.manifest,
            self.config.model_copy(update={"rules": rules}),
            self.key,
            root=self.root,
            manifest_path=self.manifest_path,
            max_pairs=self.max_pairs,
            allowlist_path=self.allowlist_path,
            notices=self.notices,
        )
        other.use_threads(self.threads)
        return other


__all__ = ["FinishOptions", "Scanner"]
