"""The jobs beside the guard: probe, index, search, serve, impact."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from contam_guard.cli.app import app, leave
from contam_guard.cli.options import (
    Where,
    grouped,
)
from contam_guard.cli.probe_options import ModelAccess, ProbeBackendName, ProbeOutputs, parse_methods
from contam_guard.core.config import load_config
from contam_guard.impact import RULE_CHOICES


@app.command()
@grouped
def probe(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE",
            help="Golden files (JSONL, JSON, CSV, Parquet, text): the probe reads the "
            "text itself, not the manifest, which holds only hashes.",
        ),
    ],
    backend: Annotated[
        ProbeBackendName,
        typer.Option("--backend", help="transformers (a local model) or openai (an endpoint)."),
    ],
    model: Annotated[
        str,
        typer.Option("--model", metavar="NAME_OR_PATH", help="A model folder or name (openai: as served)."),
    ],
    access: ModelAccess,
    compare: ProbeOutputs,
    where: Where,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            metavar="PATH",
            help="Text field (repeatable: joined by newlines in this order; "
            "default: the usual shapes' text).",
            show_default=False,
        ),
    ] = None,
    id_field: Annotated[str | None, typer.Option("--id-field", help="Field holding each item's id.")] = None,
    set_name: Annotated[
        str | None,
        typer.Option("--set", metavar="NAME", help="Name in the CSV's set column (default: FILE's stem)."),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option(
            "--methods",
            metavar="M,M,...",
            help="Of loss,zlib,lowercase,mink,minkpp (default: every one "
            "the backend can compute; minkpp needs transformers).",
        ),
    ] = None,
    k: Annotated[float, typer.Option("--k", help="Min-K%'s share of tokens, 0 < k <= 1.")] = 0.2,
) -> None:
    """Score each item of a golden set with a model (loss, zlib, lowercase, Min-K% Prob, Min-K%++):
    when the training data is not at hand. With --reference (non-members) or --labels: AUROC, TPR
    at 5%/1% FPR and a one-sided Mann-Whitney test of the set against the reference."""
    from contam_guard.cli.commands import probe as probe_cmd

    if not 0 < k <= 1:
        raise typer.BadParameter("k is a share of the tokens: 0 < k <= 1 (Min-K% uses 0.2)", param_hint="--k")
    request = probe_cmd.ProbeRequest(
        files=files,
        backend=backend.value,
        model=model,
        fields=tuple(field or ()),
        id_field=id_field,
        set_name=set_name,
        methods=parse_methods(methods),
        k=k,
        reference=list(compare.reference or []),
        labels=compare.labels,
        alpha=compare.alpha,
        items_csv=compare.items_csv,
        summary=compare.summary,
        summary_json=compare.summary_json,
        roc=compare.roc,
        device=access.device,
        batch_size=access.batch_size,
        endpoint=probe_cmd.Endpoint(
            access.base_url, access.api_key_env, access.timeout, access.retries, access.concurrency
        ),
    )
    leave(probe_cmd.run(load_config(where.config), request, where.manifest))


# --- index, search, serve ------------------------------------------------------------

IndexDirOpt = Annotated[Path, typer.Option("--index", metavar="DIR", help="The search index folder.")]


@app.command()
def index(
    paths: Annotated[list[Path], typer.Argument(metavar="PATH", help="Training files or folders.")],
    index_dir: IndexDirOpt,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            help="Index only this field (repeatable; default: every string).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build a search index of training files, or add new files to one (atomically)."""
    from contam_guard.cli.commands import search as search_cmd

    leave(search_cmd.run_index(index_dir, paths, field or []))


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Words to look for.")],
    index_dir: IndexDirOpt,
    exact: Annotated[bool, typer.Option("--exact", help="Count the normalised phrase (else BM25).")] = False,
    limit: Annotated[int, typer.Option("--limit", help="Hits to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    redact_pii: Annotated[bool, typer.Option("--redact-pii", help="Mask personal data in snippets.")] = False,
) -> None:
    """Search an index: exact phrase counts (--exact) or BM25 ranking, with snippets."""
    from contam_guard.cli.commands import search as search_cmd

    leave(
        search_cmd.run_search(index_dir, query, exact=exact, limit=limit, as_json=as_json, redact=redact_pii)
    )


@app.command()
def serve(
    index_dir: IndexDirOpt,
    host: Annotated[str, typer.Option("--host", help="Loopback address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: any free one).")] = 8765,
) -> None:
    """A local, read-only search page over an index (loopback only; personal data masked)."""
    from contam_guard.cli.commands import search as search_cmd

    leave(search_cmd.run_serve(index_dir, host, port))


# --- impact ---------------------------------------------------------------------------

ImpactRule = Enum("ImpactRule", {name: name for name in RULE_CHOICES}, type=str)  # type: ignore[misc]


@app.command()
def impact(
    scores: Annotated[
        Path,
        typer.Option(
            "--scores",
            help="Per-item scores: lm-evaluation-harness samples_*.jsonl, OpenAI evals records, "
            "or a JSONL/CSV of item_id or test_index and score.",
        ),
    ],
    items: Annotated[Path, typer.Option("--items", help="The items CSV of `scan --items-csv`.")],
    rule: Annotated[
        ImpactRule, typer.Option("--rule", help="Clean = not flagged by this rule (any: by no rule).")
    ] = ImpactRule.any,  # type: ignore[attr-defined]
    metric: Annotated[
        str | None, typer.Option("--metric", help="The score's field (acc, exact_match ...; default score).")
    ] = None,
    filter_name: Annotated[
        str | None, typer.Option("--filter", help="lm-evaluation-harness filter (strict-match ...).")
    ] = None,
    set_name: Annotated[
        str | None, typer.Option("--set", help="The set, when the CSV holds several.")
    ] = None,
    view: Annotated[str | None, typer.Option("--view", help="One view only (default: all combined).")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Random seed (same seed, same numbers).")] = 0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON.")] = None,
    markdown: Annotated[Path | None, typer.Option("--markdown", help="Write the report as Markdown.")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw the subsets' scores as a PNG.")] = None,
) -> None:
    """Report both scores: full, clean and flagged, clean - full with a bootstrap interval,
    GPT-3's relative change and Llama 2's four subsets with their Z test."""
    from contam_guard.cli.commands import impact as impact_cmd

    leave(
        impact_cmd.run(
            scores,
            items,
            rule=rule.value,
            metric=metric,
            filter_name=filter_name,
            set_name=set_name,
            view=view,
            draws=bootstrap,
            seed=seed,
            json_path=json_out,
            markdown_path=markdown,
            plot_path=plot,
        )
    )
