"""``contam-guard report-merge FOLDER``: one report over the ranks of a datatrove pipeline.

The ranks of a pipeline that ran ``contam_guard.engines.datatrove.ContamGuardFilter`` each saved
their scan to FOLDER. This merges them (``engines.rank_states``) and finishes as ``scan`` does
(``contam_guard.engines.pipeline``: the project's manifest, allowlist, markers and outputs, the exit
code), with the rule settings and pair limit the ranks scanned with.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from contam_guard.cli import next_steps, overlap_guard
from contam_guard.core.accumulator import Accumulator
from contam_guard.core.config import LoadedConfig
from contam_guard.engines.pipeline import Prepared, ScanRequest, execute
from contam_guard.engines.rank_states import FINDINGS_KEY, SUFFIX, load_folder, merge, notices, rule_overrides
from contam_guard.errors import ConfigError, ExitCode
from contam_guard.io.readers import ReadOptions
from contam_guard.io.sources import Source
from contam_guard.report import console
from contam_guard.report.outputs import Outputs, write


def run(loaded: LoadedConfig, folder: Path, request: ScanRequest, outputs: Outputs) -> int:
    """Merge the ranks' scans in ``folder`` and write ``outputs``; the exit code."""
    try:
        import datatrove  # noqa: F401, PLC0415 (optional: its folders, local or remote)
    except ImportError:
        raise ConfigError(
            "report-merge reads a datatrove pipeline's output and needs datatrove, which is not installed",
            hint="pip install 'contam-guard[datatrove]'",
        ) from None
    parts = load_folder(str(folder))
    request = replace(
        request,
        paths=[],
        read=ReadOptions(fields=parts[0].fields),
        rule_overrides=rule_overrides(parts[0]),
        max_pairs_per_item=parts[0].max_pairs,
    )

    def merged(prepared: Prepared, request: ScanRequest, found: list[Source]) -> Accumulator:
        prepared.scanner.notices += notices(parts)
        return merge(prepared.scanner, parts, str(folder))

    def check_outputs(prepared: Prepared, found: list[Source]) -> None:
        # No output may replace a rank's state, a golden file or a file of the project.
        states = {f"the rank state {path.name}": path for path in sorted(folder.glob(f"*{SUFFIX}"))}
        overlap_guard.check_scan(loaded, prepared.manifest_path, outputs, states)

    done = execute(loaded, request, merged, before_scan=check_outputs)
    done.report.notices += next_steps.unreachable_rules(loaded, request, done.report)
    code = write(done.report, done.golden, outputs)
    if code == ExitCode.CONTAMINATED:
        console.next_steps(_next_steps(outputs), to_stderr=outputs.summary_to_stderr)
    return code


def _next_steps(outputs: Outputs) -> list[str]:
    """What to do about a failing merge: the review, the pipeline's own filter, the allowlist."""
    reviews = outputs.reviews()
    return [
        f"read each pair in {', '.join(str(p) for p in reviews)}"
        if reviews
        else "see each pair side by side: add --review review.md (or --review-html review.html)",
        "the pipeline's documents carry their failing findings in their metadata "
        f"({FINDINGS_KEY}); ContamGuardFilter(..., drop=True) drops them (exclusion_writer keeps them)",
        "a false positive? `contam-guard review FILES` on the files where they are records your "
        "decision in the allowlist, which the step and this merge then honour",
    ]
