"""Option groups: each declared once and shared by the commands that take it.

A group is a dataclass whose fields are the options (``Annotated`` with their ``typer.Option``).
A command asks for a group by a parameter annotated with the group's class; ``grouped`` puts
the group's options in the command's signature (so typer sees them) and hands the command one
instance of the group. Choices are enums (typer checks them and lists them in ``--help``);
defaults that are settings come from the settings models, never written twice.

No ``from __future__ import annotations`` here: typer reads these annotations at run time.
"""

import dataclasses
import functools
import inspect
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

from contam_guard.core.config import ScrubSettings
from contam_guard.core.rules import RULES
from contam_guard.report.outputs import FORMATS, OUTPUTS, Outputs

R = TypeVar("R")

# --- choices --------------------------------------------------------------------------------

RuleName = Enum("RuleName", {name: name for name in RULES}, type=str)  # type: ignore[misc]
"""The registered rules (``contam_guard.core.rules.RULES``)."""
Format = Enum("Format", {name: name for name in FORMATS}, type=str)  # type: ignore[misc]
"""``--format``: the registered formats (``report.outputs.FORMATS``)."""


class Errors(str, Enum):
    """What to do with bytes that do not decode."""

    STRICT = "strict"
    REPLACE = "replace"


class EngineName(str, Enum):
    LOCAL = "local"
    SPARK = "spark"
    RAY = "ray"


ScrubMode = Enum(  # type: ignore[misc]
    "ScrubMode", {mode: mode for mode in ScrubSettings.model_fields["mode"].annotation.__args__}, type=str
)


MAX_JOBS = 1024
"""More worker processes than any machine has cores is a typo, not a setting."""
NOT_CHARSETS = frozenset({"idna", "punycode", "undefined"})
"""Python codecs that are text encodings by name only: they encode host names (IDNA, Punycode)
or refuse everything, and fail on a file's bytes with errors no ``--errors`` handler applies to."""


def _text_codec(value: str) -> str:
    """``--encoding``: a codec that decodes the bytes of text files, checked before anything is read."""
    import codecs  # noqa: PLC0415 (only when the option is used)

    try:
        info = codecs.lookup(value)
    except LookupError:
        raise typer.BadParameter(
            f"unknown text encoding {value!r} (e.g. utf-8, latin-1, cp1252, utf-16)"
        ) from None
    if not getattr(info, "_is_text_encoding", True) or info.name in NOT_CHARSETS:
        raise typer.BadParameter(
            f"{value!r} is not a character encoding of text files (e.g. utf-8, latin-1, cp1252, utf-16)"
        )
    return value


# --- groups ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Where:
    """Where the settings and the manifest are."""

    config: Annotated[Path | None, typer.Option("--config", help="Settings file (default: discovered).")] = (
        None
    )
    manifest: Annotated[
        Path | None, typer.Option("--manifest", help="Manifest file (default: from the config).")
    ] = None


@dataclasses.dataclass
class Target:
    """What to scan: paths, or what a git change adds."""

    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="PATH",
            help="Training files or folders. With --staged/--diff: only changes under these.",
            show_default=False,
        ),
    ] = None
    staged: Annotated[
        bool, typer.Option("--staged", help="Scan what is staged; JSONL and text: only the added lines.")
    ] = False
    diff: Annotated[
        str | None,
        typer.Option(
            "--diff", metavar="BASE[..HEAD]", help="Scan what a commit range adds (BASE alone: BASE..HEAD)."
        ),
    ] = None


@dataclasses.dataclass
class Read:
    """How the training files are read."""

    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            metavar="PATH",
            help="Read only this field, e.g. completion or messages[].content (repeatable; "
            "default: every string of every record).",
            show_default=False,
        ),
    ] = None
    whole_file: Annotated[
        bool,
        typer.Option("--whole-file", help="A plain-text file is one document (default: each paragraph is)."),
    ] = False
    group_by: Annotated[
        str | None,
        typer.Option(
            "--group-by",
            metavar="FIELD",
            help="Read consecutive records with the same value of FIELD as one document, e.g. a "
            "sentence-per-record corpus's doc_id (JSONL, JSON, CSV, Parquet).",
            show_default=False,
        ),
    ] = None
    encoding: Annotated[
        str,
        typer.Option(
            "--encoding",
            metavar="CODEC",
            help="Text encoding (a byte-order mark wins).",
            callback=_text_codec,
        ),
    ] = "utf-8"
    errors: Annotated[Errors, typer.Option("--errors", help="Undecodable bytes: an error, or replaced.")] = (
        Errors.STRICT
    )


@dataclasses.dataclass
class Rules:
    """Which rules run and what they do (on top of the config's ``rules:``)."""

    n: Annotated[
        str | None,
        typer.Option(
            "--n",
            metavar="N|auto",
            help="GPT-3 rule's N in words (5 or more), or 'auto' (the default: each set's "
            "5th-percentile item length, 8..13).",
        ),
    ] = None
    skip_budget: Annotated[
        int | None,
        typer.Option(
            "--skip-budget",
            min=0,
            max=64,
            metavar="K",
            help="Llama 2 rule: a matched span may differ in up to K words (Llama 2's skip-gram "
            "budget is 4; default 0: exact runs).",
            show_default=False,
        ),
    ] = None
    gaps: Annotated[
        int | None,
        typer.Option(
            "--gaps",
            min=1,
            max=8,
            metavar="K",
            help="Turn the gapped rule on: GPT-3's N-word run surviving K inserted, deleted or "
            "replaced words per 8 words.",
            show_default=False,
        ),
    ] = None
    only: Annotated[
        list[RuleName] | None,
        typer.Option("--only", help="Run only these rules (repeatable).", show_default=False),
    ] = None
    disable: Annotated[
        list[RuleName] | None,
        typer.Option("--disable", help="Turn a rule off (repeatable).", show_default=False),
    ] = None
    fail_on: Annotated[
        list[RuleName] | None,
        typer.Option("--fail-on", help="Make a rule fail the build.", show_default=False),
    ] = None
    warn_on: Annotated[
        list[RuleName] | None, typer.Option("--warn-on", help="Make a rule only warn.", show_default=False)
    ] = None

    def overrides(self) -> dict[str, dict[str, object]]:
        """The settings these options change, by rule (``core.config.with_rule_overrides``)."""
        only = {r.value for r in self.only or []}
        disable = {r.value for r in self.disable or []}
        fail_on = {r.value for r in self.fail_on or []}
        warn_on = {r.value for r in self.warn_on or []}
        overrides: dict[str, dict[str, object]] = {}
        for rule in RULES:
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
        if self.n is not None:
            overrides.setdefault("gpt3", {})["n"] = _words_or_auto(self.n)
        if self.skip_budget is not None:
            overrides.setdefault("llama2", {})["skip_budget"] = self.skip_budget
        if self.gaps is not None:
            gapped = overrides.setdefault("gapped", {})
            gapped["gaps"] = self.gaps
            gapped.setdefault("enabled", not (only and "gapped" not in only) and "gapped" not in disable)
        return overrides


def _words_or_auto(value: str) -> int | str:
    if value == "auto":
        return value
    try:
        return int(value)
    except ValueError:
        raise typer.BadParameter("N must be a number of words or 'auto'", param_hint="--n") from None


@dataclasses.dataclass
class Run:
    """How the scan runs and what it reports."""

    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, max=MAX_JOBS, help="Worker processes (splits large files).")
    ] = 1
    skip_unreadable: Annotated[
        bool,
        typer.Option(
            "--skip-unreadable", help="Note unreadable files in the summary and go on (else exit 2)."
        ),
    ] = False
    redact_pii: Annotated[
        bool,
        typer.Option(
            "--redact-pii", help="Mask e-mails, phone numbers, IPs and keys in training-side snippets."
        ),
    ] = False
    max_pairs_per_item: Annotated[
        int | None,
        typer.Option(
            "--max-pairs-per-item",
            min=0,
            metavar="N",
            help="Training records listed per test item, the rest counted (default: the "
            "scan.max_pairs_per_item setting); 0 lists all.",
            show_default=False,
        ),
    ] = None
    no_allowlist: Annotated[
        bool,
        typer.Option("--no-allowlist", help="Audit: ignore the allowlist and the records' allow markers."),
    ] = False
    show_golden: Annotated[
        bool,
        typer.Option("--show-golden", help="Show golden text in reviews (needs the registered golden file)."),
    ] = False


@dataclasses.dataclass
class Spark:
    """Where the scan runs."""

    engine: Annotated[
        EngineName,
        typer.Option(
            "--engine",
            help="local; spark: Apache Spark (pip install 'contam-guard[spark]'); ray: Ray Data "
            "(pip install 'contam-guard[ray]').",
        ),
    ] = EngineName.LOCAL
    master: Annotated[
        str | None,
        typer.Option("--master", metavar="URL", help="Spark master for --engine spark: local[4], yarn, ..."),
    ] = None
    spark_conf: Annotated[
        list[str] | None,
        typer.Option(
            "--spark-conf", metavar="KEY=VALUE", help="A Spark setting (repeatable).", show_default=False
        ),
    ] = None
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            metavar="ADDRESS",
            help="Ray cluster for --engine ray: auto, ray://HOST:10001, ... (default: Ray on this machine).",
        ),
    ] = None

    def conf(self) -> dict[str, str]:
        if self.engine is not EngineName.SPARK and (self.master or self.spark_conf):
            raise typer.BadParameter("--master and --spark-conf need --engine spark")
        if self.engine is not EngineName.RAY and self.ray_address:
            raise typer.BadParameter("--ray-address needs --engine ray")
        if any("=" not in setting for setting in self.spark_conf or []):
            raise typer.BadParameter("--spark-conf takes KEY=VALUE")
        return dict(setting.split("=", 1) for setting in self.spark_conf or [])


class Group:
    """A group made of registry entries rather than dataclass fields."""

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        raise NotImplementedError

    @classmethod
    def build(cls, values: dict[str, Any]) -> Any:
        raise NotImplementedError


class OutputFiles(Group):
    """Every output file (``report.outputs.OUTPUTS``), ``--format`` and ``--output``."""

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        params = [
            _option(
                "output_format", Format, Format("text"), "--format", "What goes to stdout (or --output)."
            ),
            _option("output", Path | None, None, "--output", "Write --format here (default: stdout).", "-o"),
        ]
        params += [_option(out.name, Path | None, None, out.option, out.help) for out in OUTPUTS.values()]
        params.append(
            _option(
                "quiet",
                bool,
                False,
                "--quiet",
                "Print only failing findings, the verdict, notices and what next (no WARN or ALLOWED "
                "lines); files are written in full.",
                "-q",
            )
        )
        return params

    @classmethod
    def build(cls, values: dict[str, Any]) -> Outputs:
        files = {name: values.pop(name) for name in OUTPUTS}
        return Outputs(
            files={name: path for name, path in files.items() if path is not None},
            format=values.pop("output_format").value,
            output=values.pop("output"),
            quiet=values.pop("quiet"),
        )


@dataclasses.dataclass(frozen=True)
class ScrubOverrides:
    """The scrub settings given on the command line (``core.config.ScrubSettings`` names)."""

    values: dict[str, object]


class ScrubSettingsGroup(Group):
    """The scrub settings (``core.config.ScrubSettings``), each ``None`` unless given: the config's."""

    @classmethod
    def parameters(cls) -> list[inspect.Parameter]:
        defaults = ScrubSettings()
        params = []
        for name, info in ScrubSettings.model_fields.items():
            default = getattr(defaults, name)
            kind = ScrubMode if name == "mode" else int
            help_text = f"{info.description} (config scrub.{name}; default {default})."
            params.append(_option(name, kind | None, None, f"--{name.replace('_', '-')}", help_text))
        return params

    @classmethod
    def build(cls, values: dict[str, Any]) -> ScrubOverrides:
        given = {name: values.pop(name) for name in ScrubSettings.model_fields}
        return ScrubOverrides(
            {
                name: value.value if isinstance(value, Enum) else value
                for name, value in given.items()
                if value is not None
            }
        )


def _option(name: str, kind: Any, default: Any, flag: str, help_text: str, *more: str) -> inspect.Parameter:
    option = typer.Option(flag, *more, help=help_text, show_default=default is not None)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, option]
    )


# --- the decorator --------------------------------------------------------------------------


REGISTRY_GROUPS: dict[type, type[Group]] = {Outputs: OutputFiles, ScrubOverrides: ScrubSettingsGroup}
"""A command parameter of one of these types gets the options of the group built from a registry."""


def _group_parameters(group: type) -> list[inspect.Parameter]:
    if group in REGISTRY_GROUPS:
        params = REGISTRY_GROUPS[group].parameters()
    else:
        hints = get_type_hints(group, include_extras=True)
        params = [
            inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name]
            )
            for f in dataclasses.fields(group)
        ]
    for param in params:
        _tidy(param)
    return params


_METAVARS: dict[object, str] = {
    Path: "FILE",
    Path | None: "FILE",
    int: "N",
    int | None: "N",
    str | None: "TEXT",
}


def _tidy(param: inspect.Parameter) -> None:
    """Give an option a plain metavar in ``--help`` (a path FILE, a number N, a list of rules
    RULE) instead of typer's ``<path>``, ``<int range>``, ``<list[...]>``."""
    metadata = getattr(param.annotation, "__metadata__", ())
    kind = param.annotation.__origin__ if metadata else None
    for info in metadata:
        if not isinstance(info, (typer.models.OptionInfo, typer.models.ArgumentInfo)):
            continue
        if info.metavar is None:
            if kind in _METAVARS:
                info.metavar = _METAVARS[kind]
            elif kind == list[RuleName] | None:
                info.metavar = "RULE"


def _is_group(annotation: object) -> bool:
    return annotation in REGISTRY_GROUPS or (
        isinstance(annotation, type) and dataclasses.is_dataclass(annotation)
    )


def grouped(command: Callable[..., R]) -> Callable[..., R]:
    """``command`` with each group parameter replaced by the group's options (see the module
    docstring); the command receives one instance of each group."""
    signature = inspect.signature(command)
    plain: list[inspect.Parameter] = []
    options: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, list[str]]] = {}
    for param in signature.parameters.values():
        _tidy(param)
        if _is_group(param.annotation):
            group_params = _group_parameters(param.annotation)
            groups[param.name] = (param.annotation, [p.name for p in group_params])
            options += group_params
        elif param.default is inspect.Parameter.empty:
            plain.append(param)
        else:
            options.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    names = [p.name for p in plain + options]
    assert len(names) == len(set(names)), f"{command.__name__}: an option is in two groups"

    @functools.wraps(command)
    def wrapper(*args: Any, **values: Any) -> R:
        for name, (group, members) in groups.items():
            if group in REGISTRY_GROUPS:
                values[name] = REGISTRY_GROUPS[group].build(values)
            else:
                values[name] = group(**{member: values.pop(member) for member in members})
        return command(*args, **values)

    wrapper.__signature__ = signature.replace(parameters=plain + options)  # type: ignore[attr-defined]
    return wrapper
