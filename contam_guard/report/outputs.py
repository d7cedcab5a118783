"""Every file a scan can write and every ``--format``, in one registry each.

The command line makes one option per entry of ``OUTPUTS`` (``--review``, ``--sarif`` ...) and
one ``--format`` choice per entry of ``FORMATS``; a new output is a writer and a line here.
Writers are imported when they are used: a hook on a clean commit pays for none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from contam_guard.io.atomic import write_text
from contam_guard.report import console

if TYPE_CHECKING:
    from contam_guard.core.verdicts import Report
    from contam_guard.report.markdown import GoldenText


class Render(Protocol):
    """A writer: the report (with golden text when asked for) and a failing scan's next steps
    (``cli.next_steps.steps``; the job summary and the text summary end with them) to text."""

    def __call__(self, report: Report, golden: GoldenText | None, steps: Sequence[str] = (), /) -> str: ...


def _markdown(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    from contam_guard.report import markdown

    return markdown.render(report, golden)


def _json(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    from contam_guard.report import json_report

    return json_report.render(report, golden)


def _html(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    from contam_guard.report import html

    return html.render(report, golden)


def _sarif(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    from contam_guard.report import sarif

    return sarif.render(report)


def _summary(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    from contam_guard.report import markdown

    return markdown.summary(report, steps=steps)


def _items(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    from contam_guard.report import tables

    return tables.items_csv(report)


def _pairs(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    from contam_guard.report import tables

    return tables.pairs_csv(report)


def _github(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    from contam_guard.report import github

    return github.render(report)


def _text(report: Report, golden: GoldenText | None, steps: Sequence[str] = ()) -> str:
    return console.summary_text(report, steps)


@dataclass(frozen=True)
class Output:
    """A file a scan writes: its option, what it holds, and its writer."""

    name: str
    option: str
    help: str
    render: Render
    review: bool = False
    """A review a person reads (a failing scan's next steps point at it)."""


OUTPUTS: dict[str, Output] = {
    output.name: output
    for output in (
        Output("review", "--review", "Write the Markdown review here.", _markdown, review=True),
        Output("review_json", "--review-json", "Write the JSON review here.", _json, review=True),
        Output("review_html", "--review-html", "Write the HTML review here.", _html, review=True),
        Output("sarif", "--sarif", "Write SARIF 2.1.0 here.", _sarif),
        Output("summary", "--summary", "Write a Markdown job summary (under 1 MiB) here.", _summary),
        Output("items_csv", "--items-csv", "Write one row per test item here.", _items),
        Output("pairs_csv", "--pairs-csv", "Write one row per notable pair here.", _pairs),
    )
}
FORMATS: dict[str, Render] = {
    "text": _text,
    "json": _json,
    "markdown": _markdown,
    "sarif": _sarif,
    "github": _github,
}
"""``--format``: what goes to stdout (or ``--output``); ``github`` is workflow annotations."""


@dataclass(frozen=True)
class Outputs:
    """What a command was asked to write: files by ``OUTPUTS`` name, and ``--format``."""

    files: dict[str, Path] = field(default_factory=dict)
    format: str = "text"
    output: Path | None = None
    """Where ``format`` goes (default stdout)."""
    quiet: bool = False
    """``--quiet``: the console shows failing findings and the summary only (every file written
    is complete)."""

    def by_option(self) -> dict[str, Path | None]:
        """Every output path by the option that named it (``--output`` too)."""
        named: dict[str, Path | None] = {"--output": self.output}
        named.update({OUTPUTS[name].option: path for name, path in self.files.items()})
        return named

    def reviews(self) -> list[Path]:
        """The review files asked for, in registry order."""
        return [self.files[name] for name, out in OUTPUTS.items() if out.review and name in self.files]

    @property
    def summary_to_stderr(self) -> bool:
        """stdout carries a machine format: the people's summary goes to stderr."""
        return self.output is None and self.format != "text"


def write(report: Report, golden: GoldenText | None, outputs: Outputs, steps: Sequence[str] = ()) -> int:
    """Write every requested file and format (any engine's report); returns the exit code.
    ``steps``: a failing scan's next steps, for the writers that end with them."""
    quiet = outputs.quiet
    for name, path in outputs.files.items():
        write_text(path, OUTPUTS[name].render(report, golden, steps))
    if outputs.output is not None:
        write_text(outputs.output, FORMATS[outputs.format](report, golden, steps))
        console.scan_summary(report, quiet=quiet)
    elif outputs.format == "text":
        console.scan_summary(report, quiet=quiet)
    else:
        console.raw(FORMATS[outputs.format](report, golden, steps))
        console.scan_summary(report, to_stderr=True, quiet=quiet)
    return int(report.return_code)
