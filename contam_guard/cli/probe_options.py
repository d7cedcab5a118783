"""``probe``'s option groups (see ``cli.options.grouped``): how the model is reached, and what the
scores are compared with. Plain typer declarations only: importing this must stay cheap (no
torch, no transformers, no httpx).

No ``from __future__ import annotations`` here: typer reads these annotations at run time.
"""

import dataclasses
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer


class ProbeBackendName(str, Enum):
    TRANSFORMERS = "transformers"
    OPENAI = "openai"


@dataclasses.dataclass
class ModelAccess:
    """How the model is run (transformers) or reached (openai)."""

    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            metavar="URL",
            help="openai: the API root of an OpenAI-compatible server, e.g. http://localhost:8000/v1.",
        ),
    ] = None
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env",
            metavar="VAR",
            help="openai: the environment variable holding the API key (must be set when given; "
            "default: OPENAI_API_KEY if set, else no key). The key is never logged.",
        ),
    ] = None
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            min=0.001,
            max=86_400,
            help="openai: the deadline of each request's whole answer (at most a day).",
        ),
    ] = 60.0
    retries: Annotated[
        int,
        typer.Option("--retries", metavar="N", min=0, help="openai: retries after a timeout, 429 or 5xx."),
    ] = 3
    concurrency: Annotated[
        int, typer.Option("--concurrency", metavar="N", min=1, help="openai: requests at a time.")
    ] = 4
    device: Annotated[
        str | None,
        typer.Option("--device", metavar="DEVICE", help="transformers: cpu (default), cuda, cuda:1, mps."),
    ] = None
    batch_size: Annotated[
        int | None,
        typer.Option("--batch-size", metavar="N", min=1, help="transformers: windows per forward pass (8)."),
    ] = None


@dataclasses.dataclass
class ProbeOutputs:
    """What the scores are compared with, and the files written."""

    reference: Annotated[
        list[Path] | None,
        typer.Option(
            "--reference",
            metavar="FILE",
            help="Non-members: items known not to be in the training data (repeatable; read with "
            "the same --field and --id-field).",
            show_default=False,
        ),
    ] = None
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            metavar="FILE",
            help="CSV with item_id,label (1 member, 0 non-member) for FILE's items.",
        ),
    ] = None
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha", min=0.0, max=1.0, help="Significance level of the dataset-level test (Bonferroni)."
        ),
    ] = 0.05
    items_csv: Annotated[
        Path | None,
        typer.Option(
            "--items-csv",
            metavar="FILE",
            help="One row per item: set, item_id, test_index, tokens and one column per method.",
        ),
    ] = None
    summary: Annotated[
        Path | None, typer.Option("--summary", metavar="FILE", help="The evaluation as Markdown.")
    ] = None
    summary_json: Annotated[
        Path | None, typer.Option("--summary-json", metavar="FILE", help="The evaluation as JSON.")
    ] = None
    roc: Annotated[
        Path | None,
        typer.Option("--roc", metavar="FILE", help="The ROC curves as a PNG (needs the [plot] extra)."),
    ] = None


def parse_methods(value: str | None) -> tuple[str, ...] | None:
    """``--methods``: the names, in order, without repeats; a name that is not a method is refused."""
    from contam_guard.probe.scores import METHODS  # noqa: PLC0415 (numpy: only when probing)

    if value is None:
        return None
    chosen = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [name for name in chosen if name not in METHODS]
    if unknown or not chosen:
        raise typer.BadParameter(
            f"unknown method(s) {', '.join(unknown) or '(none given)'}; choose from {','.join(METHODS)}",
            param_hint="--methods",
        )
    return chosen
