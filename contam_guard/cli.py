"""The command line: parse, call a command, map errors to exit codes in one place.

Exit codes (README.md, "Exit codes"): 0 clean, 1 a failing rule fired, 2 usage, config, input
or manifest error, 3 internal error (a bug; never 0).

Each command imports its module when it runs: the engine with numpy, pyarrow and matplotlib take
a good part of a second to import, which `--help`, `verify` and a hook on a code-only commit
should not pay.
"""

import contextlib
import datetime as dt
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from contam_guard import __version__
from contam_guard.config import LoadedConfig, load_config
from contam_guard.errors import ContamGuardError, ExitCode
from contam_guard.readers.base import ReadOptions
from contam_guard.reporting import console

if TYPE_CHECKING:
    from contam_guard.commands.scan import ScanRequest
    from contam_guard.git import Range as GitRange

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    help="Guard training data against benchmark test-set contamination.",
)

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="Settings file (default: discovered).")]
ManifestOpt = Annotated[
    Path | None, typer.Option("--manifest", help="Manifest file (default: from the config).")
]


def _exit(code: int) -> NoReturn:
    """Leave with a command's exit code (typer's standalone mode turns this into sys.exit)."""
    raise typer.Exit(int(code))


def _config(path: Path | None) -> LoadedConfig:
    return load_config(path)


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


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(metavar="DIRECTORY", help="Project root.")] = Path("."),
    keyed: Annotated[bool, typer.Option(help="Key every hash with the secret in $CONTAM_GUARD_KEY.")] = False,
    key_env: Annotated[
        str, typer.Option(help="Environment variable holding the secret.")
    ] = "CONTAM_GUARD_KEY",
) -> None:
    """Create .contam-guard/ with a commented config and an empty manifest."""
    from contam_guard.commands import init as init_cmd

    _exit(init_cmd.run(directory, keyed=keyed, key_env=key_env))


@app.command()
def register(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the golden set.")],
    files: Annotated[
        list[Path],
        typer.Argument(metavar="FILE", help="Golden test files (JSONL, JSON, CSV, Parquet, text)."),
    ],
    field: Annotated[
        list[str] | None,
        typer.Option("--field", help="Text field; repeat for several views (question, answer)."),
    ] = None,
    id_field: Annotated[str | None, typer.Option(help="Field holding each item's id.")] = None,
    config: ConfigOpt = None,
    manifest: ManifestOpt = None,
) -> None:
    """Hash a golden test set into the manifest (a new version when its content changed)."""
    from contam_guard.commands import register as register_cmd

    _exit(register_cmd.register(_config(config), name, files, field or [], id_field, manifest))


@app.command()
def remove(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the golden set.")],
    config: ConfigOpt = None,
    manifest: ManifestOpt = None,
) -> None:
    """Remove a golden set from the manifest."""
    from contam_guard.commands import manage

    _exit(manage.remove(_config(config), name, manifest))


@app.command("sets")
def list_sets(config: ConfigOpt = None, manifest: ManifestOpt = None) -> None:
    """List sets, versions, item counts and items too short for each rule."""
    from contam_guard.commands import manage

    _exit(manage.sets(_config(config), manifest))


@app.command()
def verify(config: ConfigOpt = None, manifest: ManifestOpt = None) -> None:
    """Check the manifest's integrity (format, schema, digests, spec, array sizes)."""
    from contam_guard.commands import manage

    _exit(manage.verify(_config(config), manifest))


@app.command()
def upgrade(config: ConfigOpt = None, manifest: ManifestOpt = None) -> None:
    """Re-hash every set under the current normalisation spec, from its registered golden files."""
    from contam_guard.commands import upgrade as upgrade_command

    _exit(upgrade_command.run(_config(config), manifest))


def _parse_ns(value: str | None) -> tuple[int, ...]:
    from contam_guard.analysis import DEFAULT_NS

    if not value:
        return DEFAULT_NS
    try:
        ns = tuple(sorted({int(part) for part in value.split(",") if part.strip()}))
    except ValueError:
        raise typer.BadParameter("--ns takes a comma-separated list of word counts, e.g. 5,8,13") from None
    if not ns or ns[0] < 5:
        raise typer.BadParameter("every n must be at least 5 (runs under 5 words are not measured)")
    return ns


NsOpt = Annotated[
    str | None, typer.Option("--ns", help="Comma-separated n values (default 5,6,8,10,13,20,30,50).")
]
PlotOpt = Annotated[Path | None, typer.Option("--plot", help="Write the any-hit-at-n curve as a PNG.")]
CsvOpt = Annotated[Path | None, typer.Option("--csv", help="Write the table as CSV.")]


@app.command()
def sweep(
    paths: Annotated[list[Path], typer.Argument(metavar="PATH", help="Training files or folders.")],
    field: Annotated[
        list[str] | None, typer.Option(help="Read only this field (repeatable; default: every string).")
    ] = None,
    ns: NsOpt = None,
    plot: PlotOpt = None,
    csv: CsvOpt = None,
    config: ConfigOpt = None,
    manifest: ManifestOpt = None,
) -> None:
    """One scan; the share of items sharing a run of at least n words, and each rule's share."""
    from contam_guard.commands import analysis as analysis_cmd

    loaded = _config(config)
    read = ReadOptions(fields=tuple(field or loaded.config.scan.fields))
    _exit(
        analysis_cmd.run_sweep(
            loaded, paths, read, _parse_ns(ns), csv_path=csv, plot_path=plot, manifest_path=manifest
        )
    )


@app.command()
def dupes(
    name: Annotated[str, typer.Argument(metavar="SET", help="Name of a registered golden set.")],
    view: Annotated[str | None, typer.Option(help="Only this view (default: every view).")] = None,
    ns: NsOpt = None,
    plot: PlotOpt = None,
    csv: CsvOpt = None,
    review: Annotated[Path | None, typer.Option(help="Write a Markdown review of the pairs.")] = None,
    items_csv: Annotated[Path | None, typer.Option(help="Write one row per item.")] = None,
    pairs_csv: Annotated[Path | None, typer.Option(help="Write one row per notable pair.")] = None,
    config: ConfigOpt = None,
    manifest: ManifestOpt = None,
) -> None:
    """A registered set against its own other items: one problem asked twice."""
    from contam_guard.commands import analysis as analysis_cmd

    _exit(
        analysis_cmd.run_dupes(
            _config(config),
            name,
            view,
            _parse_ns(ns),
            review=review,
            items_csv=items_csv,
            pairs_csv=pairs_csv,
            csv_path=csv,
            plot_path=plot,
            manifest_path=manifest,
        )
    )


def _parse_n(value: str | None) -> int | str | None:
    if value is None or value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        raise typer.BadParameter("N must be a number of words or 'auto'") from None


PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="PATH", help="Training files or folders. With --staged/--diff: only changes under these."
    ),
]
FieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        help="Read only this field, e.g. completion or messages[].content (repeatable; "
        "default: every string)."
    ),
]
WholeFileOpt = Annotated[bool, typer.Option(help="A plain-text file is one document.")]
EncodingOpt = Annotated[str, typer.Option(help="Text encoding of the inputs.")]
ErrorsOpt = Annotated[str, typer.Option(help="Undecodable bytes: strict (error) or replace.")]
NOpt = Annotated[str | None, typer.Option("--n", help="GPT-3 rule's N (words) or 'auto'.")]
DisableOpt = Annotated[list[str] | None, typer.Option(help="Turn a rule off (repeatable).")]
OnlyOpt = Annotated[list[str] | None, typer.Option(help="Run only these rules (repeatable).")]
FailOnOpt = Annotated[list[str] | None, typer.Option(help="Make a rule fail the build.")]
WarnOnOpt = Annotated[list[str] | None, typer.Option(help="Make a rule only warn.")]
ShowGoldenOpt = Annotated[
    bool, typer.Option(help="Show golden text in reviews (needs the registered golden file).")
]
StagedOpt = Annotated[
    bool, typer.Option("--staged", help="Scan what is staged; JSONL and text: only the added lines.")
]
DiffOpt = Annotated[
    str | None,
    typer.Option(
        "--diff", metavar="BASE[..HEAD]", help="Scan what a commit range adds (BASE alone: BASE..HEAD)."
    ),
]
NoAllowlistOpt = Annotated[
    bool, typer.Option("--no-allowlist", help="Audit: ignore the allowlist and the records' allow markers.")
]


def _scan_request(
    loaded: LoadedConfig,
    paths: list[Path] | None,
    *,
    field: list[str] | None,
    whole_file: bool,
    encoding: str,
    errors: str,
    rules: tuple[str | None, list[str] | None, list[str] | None, list[str] | None, list[str] | None],
    show_golden: bool,
    manifest: Path | None,
    staged: bool,
    diff: str | None,
    no_allowlist: bool,
    exit_zero: bool = False,
    jobs: int = 1,
    skip_unreadable: bool = False,
    redact_pii: bool = False,
    max_pairs_per_item: int | None = None,
) -> "ScanRequest":
    """The options ``scan`` and ``review`` share, checked and gathered."""
    from contam_guard.commands import scan as scan_cmd

    if errors not in ("strict", "replace"):
        raise typer.BadParameter("--errors must be strict or replace")
    if staged and diff is not None:
        raise typer.BadParameter("use --staged or --diff, not both")
    if not paths and not staged and diff is None:
        raise typer.BadParameter(
            "give training files or folders to scan, or --staged, or --diff BASE[..HEAD]"
        )
    n, disable, only, fail_on, warn_on = rules
    return scan_cmd.ScanRequest(
        paths=list(paths or []),
        read=ReadOptions(
            fields=tuple(field or loaded.config.scan.fields),
            whole_file=whole_file,
            encoding=encoding,
            errors=errors,
        ),
        rule_overrides=_rule_overrides(_parse_n(n), disable or [], only or [], fail_on or [], warn_on or []),
        exit_zero=exit_zero,
        show_golden=show_golden,
        manifest_path=manifest,
        changes=_git_range(staged, diff),
        use_allowlist=not no_allowlist,
        jobs=jobs,
        skip_unreadable=skip_unreadable,
        redact_pii=redact_pii,
        max_pairs_per_item=max_pairs_per_item,
    )


@app.command()
def scan(
    paths: PathsArg = None,
    staged: StagedOpt = False,
    diff: DiffOpt = None,
    field: FieldOpt = None,
    whole_file: WholeFileOpt = False,
    encoding: EncodingOpt = "utf-8",
    errors: ErrorsOpt = "strict",
    output_format: Annotated[
        str, typer.Option("--format", help="Output: text, json, markdown, sarif or github (annotations).")
    ] = "text",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write --format here (default: stdout).")
    ] = None,
    review: Annotated[Path | None, typer.Option(help="Write the Markdown review here.")] = None,
    review_json: Annotated[Path | None, typer.Option(help="Write the JSON review here.")] = None,
    review_html: Annotated[Path | None, typer.Option(help="Write the HTML review here.")] = None,
    sarif: Annotated[Path | None, typer.Option(help="Write SARIF 2.1.0 here.")] = None,
    summary: Annotated[
        Path | None, typer.Option(help="Write a Markdown job summary (under 1 MiB) here.")
    ] = None,
    items_csv: Annotated[Path | None, typer.Option(help="Write one row per test item here.")] = None,
    pairs_csv: Annotated[Path | None, typer.Option(help="Write one row per notable pair here.")] = None,
    n: NOpt = None,
    disable: DisableOpt = None,
    only: OnlyOpt = None,
    fail_on: FailOnOpt = None,
    warn_on: WarnOnOpt = None,
    no_allowlist: NoAllowlistOpt = False,
    exit_zero: Annotated[bool, typer.Option(help="Report findings but exit 0.")] = False,
    show_golden: ShowGoldenOpt = False,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, help="Worker processes (splits large files).")
    ] = 1,
    skip_unreadable: Annotated[
        bool, typer.Option(help="Note unreadable files in the summary and go on (default: exit 2).")
    ] = False,
    redact_pii: Annotated[
        bool, typer.Option(help="Mask e-mails, phone numbers, IPs and keys in the training-side snippets.")
    ] = False,
    max_pairs_per_item: Annotated[
        int | None,
        typer.Option(
            min=0,
            metavar="N",
            help="Training records listed per test item, the rest counted (default: the "
            "scan.max_pairs_per_item setting); 0 lists all.",
        ),
    ] = None,
    engine: Annotated[
        str, typer.Option(help="local, or spark: run on Apache Spark (pip install 'contam-guard[spark]').")
    ] = "local",
    master: Annotated[
        str | None, typer.Option(help="Spark master for --engine spark: local[4], yarn, spark://host:7077.")
    ] = None,
    spark_conf: Annotated[
        list[str] | None,
        typer.Option(
            "--spark-conf", metavar="KEY=VALUE", help="A Spark setting for --engine spark (repeatable)."
        ),
    ] = None,
    config: ConfigOpt = None,
    manifest: ManifestOpt = None,
) -> None:
    """Scan training files (or what a commit adds) against every registered set; exit 1 when a
    failing rule fires on a finding that is not allowlisted."""
    from contam_guard.commands import scan as scan_cmd

    if output_format not in scan_cmd.FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(scan_cmd.FORMATS)}")
    loaded = _config(config)
    request = _scan_request(
        loaded,
        paths,
        field=field,
        whole_file=whole_file,
        encoding=encoding,
        errors=errors,
        rules=(n, disable, only, fail_on, warn_on),
        show_golden=show_golden,
        manifest=manifest,
        staged=staged,
        diff=diff,
        no_allowlist=no_allowlist,
        exit_zero=exit_zero,
        jobs=jobs,
        skip_unreadable=skip_unreadable,
        redact_pii=redact_pii,
        max_pairs_per_item=max_pairs_per_item,
    )
    outputs = scan_cmd.ScanOutputs(
        review=review,
        review_json=review_json,
        items_csv=items_csv,
        pairs_csv=pairs_csv,
        review_html=review_html,
        sarif=sarif,
        summary=summary,
        format=output_format,
        output=output,
    )
    if engine not in ("local", "spark"):
        raise typer.BadParameter("--engine must be local or spark")
    if engine == "local" and (master or spark_conf):
        raise typer.BadParameter("--master and --spark-conf need --engine spark")
    if engine == "spark":
        from contam_guard.commands import spark_scan

        if any("=" not in setting for setting in spark_conf or []):
            raise typer.BadParameter("--spark-conf takes KEY=VALUE")
        conf = dict(setting.split("=", 1) for setting in spark_conf or [])
        _exit(spark_scan.run_request(loaded, request, outputs, master=master, spark_conf=conf))
    _exit(scan_cmd.run(loaded, request, outputs))


def _parse_date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)") from None


@app.command()
def review(
    paths: PathsArg = None,
    staged: StagedOpt = False,
    diff: DiffOpt = None,
    field: FieldOpt = None,
    whole_file: WholeFileOpt = False,
    encoding: EncodingOpt = "utf-8",
    errors: ErrorsOpt = "strict",
    all_findings: Annotated[bool, typer.Option("--all", help="Also review warn-level findings.")] = False,
    by: Annotated[str | None, typer.Option(help="Your name, recorded with each decision.")] = None,
    until: Annotated[
        str | None, typer.Option(help="Decisions stop applying after this date (YYYY-MM-DD).")
    ] = None,
    n: NOpt = None,
    disable: DisableOpt = None,
    only: OnlyOpt = None,
    fail_on: FailOnOpt = None,
    warn_on: WarnOnOpt = None,
    show_golden: ShowGoldenOpt = False,
    config: ConfigOpt = None,
    manifest: ManifestOpt = None,
) -> None:
    """Walk the unreviewed findings of a scan: y real leak, n false positive (with a reason),
    s skip, q quit. Decisions go to the allowlist (.contam-guard/allowlist.yaml)."""
    from contam_guard.commands import review as review_cmd

    loaded = _config(config)
    request = _scan_request(
        loaded,
        paths,
        field=field,
        whole_file=whole_file,
        encoding=encoding,
        errors=errors,
        rules=(n, disable, only, fail_on, warn_on),
        show_golden=show_golden,
        manifest=manifest,
        staged=staged,
        diff=diff,
        no_allowlist=False,
    )
    options = review_cmd.ReviewOptions(include_warn=all_findings, by=by, until=_parse_date(until))
    _exit(review_cmd.run(loaded, request, options))


@app.command()
def scrub(
    inputs: Annotated[list[Path], typer.Argument(metavar="INPUT", help="JSONL or text files to scrub.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Output file (a folder for several inputs).")
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(help="pieces, drop or auto (drop for chat/instruction records, else pieces)."),
    ] = None,
    field: FieldOpt = None,
    id_field: Annotated[str | None, typer.Option(help="Field holding each record's id (else id).")] = None,
    n: Annotated[int | None, typer.Option("--n", help="Words per colliding n-gram (default 13).")] = None,
    window: Annotated[int | None, typer.Option(help="Characters removed on each side (200).")] = None,
    min_piece_chars: Annotated[int | None, typer.Option(help="Shorter pieces are discarded (200).")] = None,
    max_pieces: Annotated[int | None, typer.Option(help="More pieces drop the record (10).")] = None,
    max_doc_freq: Annotated[
        int | None, typer.Option(help="N-grams in more training records are left alone (10).")
    ] = None,
    log: Annotated[Path | None, typer.Option(help="Write one JSON line per touched record here.")] = None,
    dry_run: Annotated[bool, typer.Option(help="Count what would be removed; write nothing.")] = False,
    in_place: Annotated[bool, typer.Option(help="Replace each input (atomically).")] = False,
    config: ConfigOpt = None,
    manifest: ManifestOpt = None,
) -> None:
    """Remove colliding n-grams with a window around them (GPT-3's filter); log every removal."""
    from contam_guard.commands import scrub as scrub_cmd

    request = scrub_cmd.ScrubRequest(
        inputs=inputs,
        output=output,
        log=log,
        dry_run=dry_run,
        in_place=in_place,
        fields=list(field or []),
        id_field=id_field,
        mode=mode,
        n=n,
        window=window,
        min_piece_chars=min_piece_chars,
        max_pieces=max_pieces,
        max_doc_freq=max_doc_freq,
    )
    _exit(scrub_cmd.run(_config(config), request, manifest))


RULE_NAMES = ("gpt3", "palm", "llama2", "gpt4")


def _rule_overrides(
    n: int | str | None, disable: list[str], only: list[str], fail_on: list[str], warn_on: list[str]
) -> dict[str, dict[str, object]]:
    overrides: dict[str, dict[str, object]] = {}
    for rule in [*disable, *only, *fail_on, *warn_on]:
        if rule not in RULE_NAMES:
            raise typer.BadParameter(f"unknown rule {rule!r}; rules are {', '.join(RULE_NAMES)}")
    for rule in RULE_NAMES:
        settings: dict[str, object] = {}
        if rule in disable or (only and rule not in only):
            settings["enabled"] = False
        elif only:
            settings["enabled"] = True
        if rule in fail_on:
            settings["action"] = "fail"
        if rule in warn_on:
            settings["action"] = "warn"
        if settings:
            overrides[rule] = settings
    if n is not None:
        overrides.setdefault("gpt3", {})["n"] = n
    return overrides


def _git_range(staged: bool, diff: str | None) -> "GitRange | None":
    """What a --staged or --diff scan covers (git is imported only then)."""
    if not staged and diff is None:
        return None
    from contam_guard.git import Range

    return Range(staged=True) if staged else Range.parse(diff or "")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn every outcome into a documented exit code.

    typer handles usage errors (exit 2) and ``typer.Exit``; everything else lands here. Ctrl-C
    and SIGTERM become an exception (``atomic.Interrupted``), so that every temporary file is
    removed on the way out; they end with one line and exit 128 + the signal number (130, 143).
    """
    from contam_guard.atomic import Interrupted, raise_on_signals

    try:
        with raise_on_signals():
            app(args=argv)
    except Interrupted as exc:
        console.error(f"interrupted ({exc.name}): nothing was concluded; no partial file was left behind")
        sys.exit(128 + exc.signum)
    except ContamGuardError as exc:
        console.error(str(exc))
        sys.exit(int(exc.exit_code))
    except Exception as exc:  # a bug: say so, never exit 0
        console.error(
            f"internal error ({type(exc).__name__}); this is a bug in contam-guard "
            f"{__version__}, please report it with the command you ran"
        )
        if os.environ.get("CONTAM_GUARD_DEBUG"):
            raise
        sys.exit(int(ExitCode.INTERNAL))
    finally:
        _kernel_notices()


def _kernel_notices() -> None:
    """Show the kernels' notice (numpy fallback) once, if a command loaded them."""
    native = sys.modules.get("contam_guard.native")
    if native is not None:
        for text in native.take_notices():
            console.notice(text)


def run() -> NoReturn:
    """The console script and ``python -m contam_guard``: ``main``, then a quick exit.

    Python's own shutdown frees every object of every imported module one by one: a tenth of a
    second here, a tenth of a whole scan of 100 MB. Once ``main`` has returned nothing is left to
    do (outputs are written atomically and closed, worker pools shut down), so the standard
    streams are flushed and the process ends. A run that started Spark is left to the normal
    shutdown, whose exit hook stops the JVM.
    """
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = _exit_status(exc.code)
    if "pyspark" in sys.modules:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe or stream: nothing to say
            stream.flush()
    os._exit(code)


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` gives: None is 0, a number itself, anything else printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
