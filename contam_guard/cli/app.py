"""The typer app every command registers on, and what the commands share: leaving with an
exit code and gathering a scan's options."""

from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from contam_guard import __version__
from contam_guard.cli.options import Read, Rules, Run, Target
from contam_guard.core.config import LoadedConfig
from contam_guard.io.readers.base import ReadOptions
from contam_guard.report import console

if TYPE_CHECKING:
    from contam_guard.engines.pipeline import ScanRequest
    from contam_guard.io.git import Range as GitRange

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,  # help text as written ("[spark]" is an extra, not markup), no "<bool>"
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    help="Guard training data against benchmark test-set contamination.",
)


def leave(code: int) -> NoReturn:
    """Leave with a command's exit code (typer's standalone mode turns this into sys.exit)."""
    raise typer.Exit(int(code))


def _version(value: bool) -> None:
    if value:
        console.info(f"contam-guard {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Guard training data against benchmark test-set contamination."""


def scan_request(loaded: LoadedConfig, target: Target, read: Read, rules: Rules, run: Run) -> "ScanRequest":
    """The options ``scan``, ``review`` and ``sweep`` share, checked and gathered."""
    from contam_guard.engines.pipeline import ScanRequest

    if target.staged and target.diff is not None:
        raise typer.BadParameter("use --staged or --diff, not both")
    if not target.paths and not target.staged and target.diff is None:
        raise typer.BadParameter(
            "give training files or folders to scan, or --staged, or --diff BASE[..HEAD]"
        )
    return ScanRequest(
        paths=list(target.paths or []),
        read=ReadOptions(
            fields=tuple(read.field or loaded.config.scan.fields),
            whole_file=read.whole_file,
            group_by=read.group_by,
            encoding=read.encoding,
            errors=read.errors.value,
        ),
        rule_overrides=rules.overrides(),
        show_golden=run.show_golden,
        changes=git_range(target.staged, target.diff),
        use_allowlist=not run.no_allowlist,
        jobs=run.jobs,
        skip_unreadable=run.skip_unreadable,
        redact_pii=run.redact_pii,
        max_pairs_per_item=run.max_pairs_per_item,
    )


def git_range(staged: bool, diff: str | None) -> "GitRange | None":
    """What a --staged or --diff scan covers (git is imported only then)."""
    if not staged and diff is None:
        return None
    from contam_guard.io.git import Range

    return Range(staged=True) if staged else Range.parse(diff or "")
