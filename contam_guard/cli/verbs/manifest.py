"""The manifest's commands: init, register, benchmarks, remove, sets, verify, upgrade."""

from pathlib import Path
from typing import Annotated

import typer

from contam_guard.cli.app import app, leave
from contam_guard.cli.options import (
    Where,
    grouped,
)
from contam_guard.core.config import load_config


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(metavar="DIRECTORY", help="Project root.")] = Path("."),
    keyed: Annotated[bool, typer.Option(help="Key every hash with the secret in $CONTAM_GUARD_KEY.")] = False,
    key_env: Annotated[
        str, typer.Option(help="Environment variable holding the secret.")
    ] = "CONTAM_GUARD_KEY",
) -> None:
    """Create .contam-guard/ with a commented config and an empty manifest."""
    from contam_guard.cli.commands import init as init_cmd

    leave(init_cmd.run(directory, keyed=keyed, key_env=key_env))


@app.command()
@grouped
def register(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the golden set.")],
    where: Where,
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FILE",
            help="Golden test files (JSONL, JSON, CSV, Parquet, text); with --benchmark, files or folders.",
            show_default=False,
        ),
    ] = None,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field", help="Text field; repeat for several views (question, answer).", show_default=False
        ),
    ] = None,
    id_field: Annotated[str | None, typer.Option("--id-field", help="Field holding each item's id.")] = None,
    benchmark: Annotated[
        str | None,
        typer.Option(
            "--benchmark",
            metavar="KEY",
            help="A catalogued benchmark (contam-guard benchmarks): its views, id field and data.",
        ),
    ] = None,
    n: Annotated[
        int | None,
        typer.Option("--n", min=5, max=1_000_000, metavar="N", help="This set's own GPT-3 N (words)."),
    ] = None,
    rules: Annotated[  # a set registered without GPT-4's rule stores no window hashes
        str | None,
        typer.Option(
            "--rules",
            metavar="RULE,RULE",
            help="Rules the set is registered for (default: every rule); window hashes are stored "
            "only for gpt4, e.g. --rules gpt3,palm,llama2.",
            show_default=False,
        ),
    ] = None,
    template_share: Annotated[  # template n-grams
        float | None,
        typer.Option(
            "--template-share",
            min=0.0,
            max=0.999999,
            help="An n-gram in more than this share of the set's items (and in --template-min-items) "
            "is template: runs of it alone are ignored. Default 0.01, or the set's.",
            show_default=False,
        ),
    ] = None,
    template_min_items: Annotated[
        int | None,
        typer.Option(
            "--template-min-items",
            min=1,
            help="... and in at least this many items. Default 5, or the set's.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Hash a golden test set into the manifest (a new version when its content changed)."""
    from contam_guard.cli.commands import register as register_cmd

    config, fields = load_config(where.config), field or []
    leave(
        register_cmd.register(
            config,
            name,
            files or [],
            fields,
            id_field,
            where.manifest,
            n=n,
            benchmark=benchmark,
            rules=rules,
            template_share=template_share,
            template_min_items=template_min_items,
        )
    )


@app.command()
@grouped
def benchmarks(where: Where) -> None:
    """List the benchmarks register --benchmark knows: source, split, id, views, data found."""
    from contam_guard.cli.commands import catalogue

    leave(catalogue.run(load_config(where.config)))


@app.command()
@grouped
def remove(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the golden set.")], where: Where
) -> None:
    """Remove a golden set from the manifest."""
    from contam_guard.cli.commands import manage

    leave(manage.remove(load_config(where.config), name, where.manifest))


@app.command("sets")
@grouped
def list_sets(where: Where) -> None:
    """List sets, versions, item counts, bytes per set and view, and items too short for each rule."""
    from contam_guard.cli.commands import manage

    leave(manage.sets(load_config(where.config), where.manifest))


@app.command()
@grouped
def verify(where: Where) -> None:
    """Check the manifest's integrity (format, schema, every file's digest, spec, array sizes) and its key."""
    from contam_guard.cli.commands import manage

    leave(manage.verify(load_config(where.config), where.manifest))


@app.command()
@grouped
def upgrade(where: Where) -> None:
    """Re-hash every set under the current spec from its registered golden files when the spec
    is older; bring the files of a manifest written by an earlier contam-guard up to date."""
    from contam_guard.cli.commands import upgrade as upgrade_command

    leave(upgrade_command.run(load_config(where.config), where.manifest))
