"""``contam-guard impact``: split an evaluation's scores by what a scan flagged."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from contam_guard.cli.overlap_guard import check_command
from contam_guard.core.config import load_config
from contam_guard.errors import ConfigError, ContamGuardError, ExitCode
from contam_guard.impact.analysis import analyse
from contam_guard.impact.items import read_items
from contam_guard.impact.render import to_json, to_markdown
from contam_guard.impact.scores import read_scores
from contam_guard.io.atomic import write_bytes, write_text
from contam_guard.io.readers.opener import check_regular_file
from contam_guard.report import console

MAX_DRAWS = 1_000_000


def run(
    scores_path: Path,
    items_path: Path,
    *,
    rule: str = "any",
    metric: str | None = None,
    filter_name: str | None = None,
    set_name: str | None = None,
    view: str | None = None,
    draws: int = 10_000,
    seed: int = 0,
    json_path: Path | None = None,
    markdown_path: Path | None = None,
    plot_path: Path | None = None,
) -> int:
    """Read, compute, print the Markdown report and write the files asked for. Exit 0: the
    report is information, not a gate (a guard's gate is ``scan``)."""
    if not 100 <= draws <= MAX_DRAWS:
        raise ConfigError(f"--bootstrap {draws}: use between 100 and {MAX_DRAWS:,} resamples")
    if plot_path is not None and importlib.util.find_spec("matplotlib") is None:
        raise ContamGuardError(
            "--plot needs matplotlib, which is not installed", hint="pip install 'contam-guard[plot]'"
        )
    check_command(  # nor may they replace a file of the project (the manifest's set files ...)
        load_config(),
        {"--json": json_path, "--markdown": markdown_path, "--plot": plot_path},
        {f"the scores {scores_path}": scores_path, f"the items CSV {items_path}": items_path},
    )
    # Before opening either: a FIFO would block the open, /dev/zero would never end.
    check_regular_file(scores_path, str(scores_path))
    check_regular_file(items_path, str(items_path))
    table = read_items(items_path, set_name, view)
    table.check_rule(rule)
    scores = read_scores(scores_path, metric, filter_name)
    impact = analyse(scores, table, rule, draws, seed)
    markdown = to_markdown(impact)
    console.raw(markdown)
    if json_path is not None:
        write_text(json_path, to_json(impact))
        console.info(f"wrote {json_path}")
    if markdown_path is not None:
        write_text(markdown_path, markdown)
        console.info(f"wrote {markdown_path}")
    if plot_path is not None:
        from contam_guard.impact.plot import impact_png  # noqa: PLC0415 (the optional [plot] extra)

        write_bytes(plot_path, impact_png(impact))
        console.info(f"wrote {plot_path}")
    return ExitCode.CLEAN
