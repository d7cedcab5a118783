"""``contam-guard scan --engine spark``: the scan, done by Spark, with the local scan's outputs.

The files and formats written, the allowlist, the inline markers, ``--redact-pii`` and the exit
code are those of ``contam-guard scan``; only the work moves: files are read by Spark (JSONL,
text and Parquet; local paths, or URLs such as ``hdfs://`` and ``s3a://``) and scanned in its
tasks (``contam_guard.spark``). Local folders are walked as the local scan walks them, leaving
out the guard's folder and the registered golden files.

``run_request`` takes the ``ScanRequest`` the ``scan`` command already builds; ``run`` is the
same with plain arguments.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from contam_guard.allowlist import Allowlist, apply
from contam_guard.commands import scan as scan_cmd
from contam_guard.commands.common import load_manifest
from contam_guard.commands.golden import golden_lookup
from contam_guard.commands.scan import ScanOutputs, ScanRequest
from contam_guard.config import LoadedConfig, with_rule_overrides
from contam_guard.errors import ConfigError
from contam_guard.findings import evaluate
from contam_guard.keys import key_for
from contam_guard.readers import ReadOptions
from contam_guard.reporting import console


def _needs_pyspark() -> None:
    try:
        import pyspark  # noqa: F401, PLC0415 (optional: only this engine needs it)
    except ImportError:
        raise ConfigError(
            "--engine spark needs PySpark, which is not installed",
            hint="pip install 'contam-guard[spark]' (Java 17 or newer must be on the PATH)",
        ) from None


def _check(request: ScanRequest) -> None:
    """Refuse, before any work, what only the local engine does."""
    if request.changes is not None:
        raise ConfigError("--staged and --diff scan a git change with the local engine, not --engine spark")
    if request.jobs > 1:
        raise ConfigError(
            "--jobs is the local engine's parallelism",
            hint="with --engine spark, give Spark the cores: --master 'local[N]' or a cluster",
        )
    if request.skip_unreadable:
        raise ConfigError("--skip-unreadable is not supported by --engine spark")


def run_request(
    loaded: LoadedConfig,
    request: ScanRequest,
    outputs: ScanOutputs,
    *,
    master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
) -> int:
    """Scan on Spark (``master``; None: as ``spark-submit`` or the environment says) and write
    ``outputs`` as ``contam-guard scan`` does; returns the exit code."""
    _check(request)
    _needs_pyspark()
    from pyspark.errors import PySparkRuntimeError  # noqa: PLC0415 (needs pyspark)
    from pyspark.sql import SparkSession  # noqa: PLC0415

    from contam_guard.spark.inputs import SparkSource, location  # noqa: PLC0415
    from contam_guard.spark.scan import scan_sources  # noqa: PLC0415
    from contam_guard.spark.session import session  # noqa: PLC0415

    config = with_rule_overrides(loaded.config, request.rule_overrides)
    _, manifest = load_manifest(loaded, request.manifest_path)
    key = key_for(manifest, config.key_env)
    if not manifest.sets:
        console.notice("no golden sets are registered: nothing to match against")
    notices: list[str] = []
    excluded = scan_cmd.excluded_paths(loaded, manifest)
    sources: list[SparkSource] = []
    for given in request.paths:
        text = location(given)
        if SparkSource(text, text).is_local:
            found = scan_cmd.expand([Path(text)], excluded, notices)
            sources += [SparkSource(str(s.path), s.display) for s in found]
        else:
            sources.append(SparkSource(text, text))
    started = SparkSession.getActiveSession() is None  # else a caller's session: leave it running
    try:
        spark = session(master, conf=spark_conf)
    except PySparkRuntimeError as exc:  # no Java, or Spark could not start
        raise ConfigError(
            f"Spark could not start: {exc}",
            hint="Spark needs Java 17 or newer on the PATH (or JAVA_HOME); check --master",
        ) from None
    try:
        result = scan_sources(
            spark,
            sources,
            request.read,
            manifest,
            key=key,
            windows=config.rules.gpt4.enabled,
            batch_chars=config.scan.batch_chars,
        )
    finally:
        if started:
            spark.stop()
    if request.redact_pii:
        result.pairs = [replace(p, snippet=scan_cmd.redacted(p.snippet)) for p in result.pairs]
    markers = request.use_allowlist and config.allowlist.markers
    report = evaluate(result, config.rules, exit_zero=request.exit_zero, honour_markers=markers)
    report.notices += notices
    if request.use_allowlist:
        allowlist = Allowlist.load(loaded.allowlist_path)
        apply(report, allowlist, dt.date.today(), check_stale=True, root=loaded.root)
    golden = golden_lookup(manifest, loaded.root, key) if request.show_golden else None
    return scan_cmd.write_outputs(report, golden, outputs)


def run(
    loaded: LoadedConfig,
    paths: Sequence[str | Path],
    fields: Sequence[str],
    master: str | None,
    outputs: ScanOutputs,
    *,
    encoding: str = "utf-8",
    errors: str = "strict",
    rule_overrides: dict[str, dict[str, object]] | None = None,
    exit_zero: bool = False,
    show_golden: bool = False,
    use_allowlist: bool = True,
    redact_pii: bool = False,
    manifest_path: Path | None = None,
    spark_conf: Mapping[str, str] | None = None,
) -> int:
    """``run_request`` with plain arguments (``paths`` may be URLs: ``s3a://bucket/train.jsonl``)."""
    request = ScanRequest(
        paths=[Path(p) for p in paths],  # a URL survives: run_request restores its "//"
        read=ReadOptions(fields=tuple(fields or loaded.config.scan.fields), encoding=encoding, errors=errors),
        rule_overrides=rule_overrides or {},
        exit_zero=exit_zero,
        show_golden=show_golden,
        manifest_path=manifest_path,
        use_allowlist=use_allowlist,
        redact_pii=redact_pii,
    )
    return run_request(loaded, request, outputs, master=master, spark_conf=spark_conf)
