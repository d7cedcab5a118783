"""``contam-guard probe``: score a golden set's items with a model, without the training data.

Reads the golden files themselves (the probe needs the text; the manifest holds only hashes),
asks the backend for each item's token log-probabilities (and those of the lower-cased text for
``lowercase``), computes every method (``probe.scores``), writes ``--items-csv``, and with
non-members (``--reference``) or ``--labels`` evaluates each method (``probe.evaluate``): AUROC,
TPR at 5% and 1% FPR, the one-sided Mann–Whitney test, a summary and a ROC plot.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from contam_guard.cli.commands.common import display_path
from contam_guard.cli.overlap_guard import check_sweep
from contam_guard.core.config import LoadedConfig
from contam_guard.errors import ConfigError, ContamGuardError, ExitCode
from contam_guard.io.atomic import write_bytes, write_text
from contam_guard.probe.items import Item, read_items, read_labels
from contam_guard.probe.scores import DEFAULT_K, METHODS, NEEDS_DISTRIBUTION, TokenLogProbs, score_text
from contam_guard.report import console

if TYPE_CHECKING:
    from contam_guard.probe.backends import Backend
    from contam_guard.probe.report import ScoredItem, Summary

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
REFERENCE_SET = "reference"
EXTRA = "pip install 'contam-guard[probe]'"


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = 60.0
    retries: int = 3
    concurrency: int = 4


@dataclass(frozen=True)
class ProbeRequest:
    files: list[Path]
    backend: str
    model: str
    fields: tuple[str, ...] = ()
    id_field: str | None = None
    set_name: str | None = None
    methods: tuple[str, ...] | None = None
    """None: every method the backend can compute."""
    k: float = DEFAULT_K
    reference: list[Path] = field(default_factory=list)
    labels: Path | None = None
    alpha: float = 0.05
    items_csv: Path | None = None
    summary: Path | None = None
    summary_json: Path | None = None
    roc: Path | None = None
    device: str | None = None
    batch_size: int | None = None
    endpoint: Endpoint = Endpoint()


def choose_methods(request: ProbeRequest) -> tuple[str, ...]:
    """The methods to compute: as asked, or every method the backend can give. ``minkpp`` on a
    backend without the whole next-token distribution is a usage error."""
    if request.methods is None:
        if request.backend == "openai":
            return tuple(m for m in METHODS if m not in NEEDS_DISTRIBUTION)
        return METHODS
    if request.backend == "openai" and NEEDS_DISTRIBUTION & set(request.methods):
        raise ConfigError(
            "--methods minkpp needs the whole next-token distribution (its mean and standard "
            "deviation of log p at every step), which an OpenAI-compatible endpoint does not return",
            hint="use --backend transformers for minkpp, or leave it out of --methods",
        )
    return request.methods


def _check(request: ProbeRequest, loaded: LoadedConfig, manifest_path: Path | None) -> None:
    """Everything that can be refused before a model is loaded or a request is sent."""
    evaluating = bool(request.reference or request.labels)
    for option, path in (
        ("--summary", request.summary),
        ("--summary-json", request.summary_json),
        ("--roc", request.roc),
    ):
        if path is not None and not evaluating:
            raise ConfigError(f"{option} needs non-members to compare with: --reference or --labels")
    if request.backend == "openai":
        if not request.endpoint.base_url:
            raise ConfigError(
                "--backend openai needs --base-url (the server's API root, e.g. http://host:8000/v1)"
            )
        if request.device is not None or request.batch_size is not None:
            raise ConfigError("--device and --batch-size are for --backend transformers")
    elif request.endpoint.base_url is not None or request.endpoint.api_key_env is not None:
        raise ConfigError("--base-url and --api-key-env are for --backend openai")
    inputs = [*request.files, *request.reference, *([request.labels] if request.labels else [])]
    check_sweep(
        loaded,
        inputs,
        manifest_path,
        items_csv=request.items_csv,
        summary=request.summary,
        summary_json=request.summary_json,
        roc=request.roc,
    )
    needed = ["torch", "transformers"] if request.backend == "transformers" else ["httpx"]
    if evaluating:
        needed += ["sklearn", "scipy"]
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise ContamGuardError(f"probe needs {', '.join(missing)}, which {verb} not installed", hint=EXTRA)
    if request.roc is not None and importlib.util.find_spec("matplotlib") is None:
        raise ContamGuardError(
            "--roc needs matplotlib, which is not installed", hint="pip install 'contam-guard[plot]'"
        )


def _api_key(endpoint: Endpoint) -> tuple[str | None, str | None]:
    """The key and the variable it came from. A variable named with --api-key-env must be set;
    without the option, OPENAI_API_KEY is used when set (a local server often needs no key)."""
    if endpoint.api_key_env is not None:
        value = os.environ.get(endpoint.api_key_env)
        if not value:
            raise ConfigError(
                f"--api-key-env {endpoint.api_key_env}: the environment variable is not set (or empty)",
                hint=f"export {endpoint.api_key_env}=... before running the probe",
            )
        return value, endpoint.api_key_env
    value = os.environ.get(DEFAULT_KEY_ENV)
    return (value, DEFAULT_KEY_ENV) if value else (None, None)


def _backend(request: ProbeRequest) -> Backend:
    if request.backend == "transformers":
        from contam_guard.probe.backends.transformers_backend import (  # noqa: PLC0415 (torch: slow, optional)
            TransformersBackend,
        )

        return TransformersBackend(
            request.model, device=request.device or "cpu", batch_size=request.batch_size or 8
        )
    from contam_guard.probe.backends.openai_backend import (  # noqa: PLC0415 (httpx: optional)
        EndpointSettings,
        OpenAIBackend,
    )

    key, key_env = _api_key(request.endpoint)
    end = request.endpoint
    settings = EndpointSettings(
        base_url=end.base_url or "",
        model=request.model,
        api_key=key,
        timeout=end.timeout,
        retries=end.retries,
        concurrency=end.concurrency,
        key_env=key_env,
    )
    return OpenAIBackend(settings)


def _score(backend: Backend, items: Sequence[Item], methods: Sequence[str], k: float) -> list[ScoredItem]:
    from contam_guard.probe.report import ScoredItem  # noqa: PLC0415 (kept with the report)

    texts = [item.text for item in items]
    # The lower-cased texts that differ (an unchanged one has the same log-probabilities).
    lower = sorted({t.lower() for t in texts if t.lower() != t}) if "lowercase" in methods else []
    found = backend.log_probs([*texts, *lower])
    by_lower = dict(zip(lower, found[len(texts) :]))
    rows = []
    for item, tokens in zip(items, found[: len(texts)]):
        lowered: TokenLogProbs | None = by_lower.get(item.text.lower(), tokens)
        rows.append(ScoredItem(item, tokens.count, score_text(item.text, tokens, lowered, methods, k)))
    return rows


def run(loaded: LoadedConfig, request: ProbeRequest, manifest_path: Path | None = None) -> int:
    from contam_guard.probe import report  # noqa: PLC0415

    methods = choose_methods(request)
    _check(request, loaded, manifest_path)
    if request.backend == "openai":
        _api_key(request.endpoint)  # a missing key is refused before the files are read
    set_name = request.set_name or _stem(request.files[0])
    if set_name == REFERENCE_SET and request.reference:
        raise ConfigError(f"--set {REFERENCE_SET!r} is the name of the --reference items; choose another")
    items = read_items(request.files, set_name, request.fields, request.id_field)
    reference = (
        read_items(request.reference, REFERENCE_SET, request.fields, request.id_field)
        if request.reference
        else []
    )
    labels = read_labels(request.labels, items) if request.labels else {}
    backend = _backend(request)
    rows = _score(backend, [*items, *reference], methods, request.k)
    unscored = [row for row in rows if row.tokens == 0]
    if unscored:
        names = ", ".join(f"{r.item.set_name}:{r.item.item_id}" for r in unscored[:10])
        console.notice(
            f"{len(unscored)} item(s) have no scored token (all NaN): {names}"
            + (" ..." if len(unscored) > 10 else "")
        )
    if request.items_csv:
        write_text(request.items_csv, report.items_csv(rows, methods))
        console.info(f"wrote {display_path(request.items_csv)}")
    console.info(
        f"Scored {len(items)} item(s) of {set_name}"
        + (f" and {len(reference)} reference item(s)" if reference else "")
        + f" with {backend.describe()}."
    )
    if not request.reference and not request.labels:
        for method in methods:
            values = [row.scores[method] for row in rows]
            console.info(f"{method}: median {_median(values)}")
        return int(ExitCode.CLEAN)
    summary = _evaluate(request, backend, methods, rows, labels, set_name, len(unscored))
    for line in report.console_lines(summary):
        console.info(line)
    outputs = ((request.summary, report.markdown), (request.summary_json, report.summary_json))
    for path, render in outputs:
        if path is not None:
            write_text(path, render(summary))
            console.info(f"wrote {display_path(path)}")
    if request.roc is not None:
        write_bytes(request.roc, report.roc_png(summary))
        console.info(f"wrote {display_path(request.roc)}")
    return int(ExitCode.CLEAN)


def _evaluate(
    request: ProbeRequest,
    backend: Backend,
    methods: Sequence[str],
    rows: Sequence[ScoredItem],
    labels: dict[str, bool],
    set_name: str,
    unscored: int,
) -> Summary:
    """Members and non-members: with --labels, the labelled items of FILE (the unlabelled ones
    are left out); without, every item of FILE is a member candidate. --reference items are
    non-members."""
    from contam_guard.probe.evaluate import evaluate_method  # noqa: PLC0415 (scipy, sklearn: optional)
    from contam_guard.probe.report import Summary  # noqa: PLC0415

    candidates = [r for r in rows if r.item.set_name != REFERENCE_SET or not request.reference]
    if labels:
        members = [r for r in candidates if labels.get(r.item.item_id) is True]
        nonmembers = [r for r in candidates if labels.get(r.item.item_id) is False]
        unlabelled = len(candidates) - len(members) - len(nonmembers)
        where = display_path(request.labels or Path())
        members_text = f"{len(members)} item(s) of {set_name} labelled members ({where})"
        if unlabelled:
            console.notice(
                f"{unlabelled} item(s) of {set_name} have no label and are left out of the evaluation"
            )
    else:
        members, nonmembers = candidates, []
        members_text = f"{len(members)} item(s) of {set_name} (every one a member candidate)"
    reference = [r for r in rows if r.item.set_name == REFERENCE_SET and request.reference]
    nonmembers_text = " and ".join(
        part
        for part in (
            f"{len(nonmembers)} item(s) of {set_name} labelled non-members" if labels else "",
            f"{len(reference)} reference item(s) ({', '.join(display_path(p) for p in request.reference)})"
            if reference
            else "",
        )
        if part
    )
    nonmembers = [*nonmembers, *reference]
    results, skipped = [], {}
    for method in methods:
        result = evaluate_method(
            method, [r.scores[method] for r in members], [r.scores[method] for r in nonmembers]
        )
        if result is None:
            skipped[method] = "no member or no non-member has a score"
        else:
            results.append(result)
    return Summary(
        backend=backend.describe(),
        methods=tuple(methods),
        k=request.k,
        alpha=request.alpha,
        members=members_text,
        nonmembers=nonmembers_text or "none",
        results=results,
        not_evaluated=skipped,
        unscored=unscored,
    )


def _stem(path: Path) -> str:
    name = path.name
    while "." in name.strip("."):
        name = name.rsplit(".", 1)[0]
    return name or path.name


def _median(values: Sequence[float]) -> str:
    finite = np.asarray([v for v in values if not math.isnan(v)], dtype=np.float64)
    return f"{float(np.median(finite)):.4f}" if finite.size else "n/a"
