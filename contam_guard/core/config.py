"""Settings: pydantic models (frozen, unknown keys rejected) and where they are found.

Discovery, first match wins: ``--config FILE``; else, walking up from the current folder, the
nearest ``contam-guard.yaml``, ``.contam-guard/contam-guard.yaml`` or ``pyproject.toml`` with
a ``[tool.contam-guard]`` table; else the defaults. Relative paths in a config are relative to
the project root: the folder holding the config file (or the ``.contam-guard`` folder).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from contam_guard.core.rules import RULES
from contam_guard.core.rules.base import MAX_WORDS, RuleSettings
from contam_guard.errors import ConfigError
from contam_guard.io.safe_read import decode_utf8, load_yaml, read_regular, safe_loader

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

GUARD_DIR = ".contam-guard"
CONFIG_NAME = "contam-guard.yaml"
MANIFEST_NAME = "manifest.json"


MAX_COUNT = 2**31 - 1
"""Bound of every character or record count setting (the manifest's counts are 32-bit)."""
MAX_PAIRS_PER_ITEM = 20
"""Training records listed per test item by default (``scan.max_pairs_per_item``)."""
MAX_CONFIG_BYTES = 16 << 20
"""A config file is a few hundred bytes; anything near this bound is not one."""
MAX_CONFIG_DEPTH = 64
"""The settings nest three levels deep; deeper YAML is refused before it is built."""


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _RulesBase(_Settings):
    """Each registered rule's settings, by name (``contam_guard.core.rules.RULES``)."""

    def of(self, name: str) -> RuleSettings:
        settings = getattr(self, name)
        assert isinstance(settings, RuleSettings)
        return settings

    def enabled(self) -> list[str]:
        """The enabled rules' names, in registry order."""
        return [name for name in RULES if self.of(name).enabled]

    @property
    def windows(self) -> bool:
        """Whether an enabled rule reads the 50-character windows (the scan computes them then)."""
        return any(RULES[name].uses_windows for name in self.enabled())


if TYPE_CHECKING:
    Rules = _RulesBase
else:  # one field per registered rule: a new rule needs no line here
    Rules = create_model(
        "Rules",
        __base__=_RulesBase,
        **{name: (rule.settings, rule.settings()) for name, rule in RULES.items()},
    )


class ScanSettings(_Settings):
    fields: list[str] = []
    """Fields of training records to read (``--field``); empty: every string of every record."""
    batch_chars: int = Field(1 << 20, ge=1024, le=1 << 30)
    """Characters hashed per vectorised batch: larger is faster up to cache size."""
    max_pairs_per_item: int = Field(MAX_PAIRS_PER_ITEM, ge=0, le=MAX_COUNT)
    """Pairs listed per test item in reports (``--max-pairs-per-item``; 0: all); the rest are
    counted exactly (``core.match.pairs``)."""
    exclude: list[str] = []
    """Files and folders a scan never reads (a notice names each file left out), as ``fnmatch``
    patterns: without a ``/``, a file or folder name anywhere (``*.pdf``, ``node_modules``);
    with one, the path from the project root (``data/raw/*``; ``*`` crosses folders)."""


class ScrubSettings(_Settings):
    """The GPT-3 removal filter (``contam-guard scrub``); see ``contam_guard/core/scrub``."""

    mode: Literal["auto", "pieces", "drop"] = Field(
        "auto",
        description="pieces, drop, or auto: pieces for text files and records of one string "
        "apart from their id, drop for records of several strings",
    )
    n: int = Field(13, ge=5, le=MAX_WORDS, description="Words per colliding n-gram")
    window: int = Field(200, ge=0, le=MAX_COUNT, description="Characters removed on each side of a collision")
    min_piece_chars: int = Field(200, ge=0, le=MAX_COUNT, description="Shorter pieces are discarded")
    max_pieces: int = Field(10, ge=1, le=MAX_COUNT, description="A record cut into more pieces is dropped")
    max_doc_freq: int = Field(
        10, ge=1, le=MAX_COUNT, description="An n-gram in more training records is left alone"
    )


class AllowlistSettings(_Settings):
    """Reviewed findings (``contam-guard review``) and the records' inline allow marker."""

    file: str = "allowlist.yaml"
    """In the guard folder; committed; keyed by content, never by line."""
    markers: bool = True
    """Honour ``"contam_guard": "allow"`` on a JSONL record (``--no-allowlist`` ignores it)."""


class Config(_Settings):
    guard_dir: str = GUARD_DIR
    key_env: str = "CONTAM_GUARD_KEY"
    rules: Rules = Rules()
    scan: ScanSettings = ScanSettings()
    allowlist: AllowlistSettings = AllowlistSettings()
    scrub: ScrubSettings = ScrubSettings()


@dataclass(frozen=True)
class LoadedConfig:
    config: Config
    root: Path
    """The project root: relative paths in the config are relative to it."""
    source: Path | None
    """The file the settings came from (None: defaults)."""

    @property
    def guard_dir(self) -> Path:
        return self.root / self.config.guard_dir

    @property
    def manifest_path(self) -> Path:
        return self.guard_dir / MANIFEST_NAME

    @property
    def allowlist_path(self) -> Path:
        return self.guard_dir / self.config.allowlist.file


def load_config(explicit: Path | None = None, start: Path | None = None) -> LoadedConfig:
    """Find and validate the settings (see the module docstring for the search order)."""
    if explicit is not None:
        return _load_file(explicit, root=explicit.resolve().parent)
    here = (start or Path.cwd()).resolve()
    # lexists, not is_file: a FIFO, a folder or a dangling link under a config's name is an
    # error (exit 2), never silently skipped for the defaults.
    for folder in [here, *here.parents]:
        candidate = folder / CONFIG_NAME
        if os.path.lexists(candidate):
            return _load_file(candidate, root=folder)
        candidate = folder / GUARD_DIR / CONFIG_NAME
        if os.path.lexists(candidate):
            return _load_file(candidate, root=folder)
        pyproject = folder / "pyproject.toml"
        if os.path.lexists(pyproject):
            table = _pyproject_table(pyproject)
            if table is not None:
                return LoadedConfig(_validate(table, pyproject), folder, pyproject)
        if (folder / GUARD_DIR).is_dir():
            return LoadedConfig(Config(), folder, None)
    return LoadedConfig(Config(), here, None)


def _read_text(path: Path) -> str:
    """A config file's text: a regular file, bounded, UTF-8 (else ``ConfigError``, never a hang)."""
    try:
        data = read_regular(path, what="config", limit=MAX_CONFIG_BYTES, error=ConfigError)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    return decode_utf8(data, path, "config", ConfigError)


def _load_file(path: Path, root: Path) -> LoadedConfig:
    if path.suffix == ".toml":
        table = _pyproject_table(path)
        return LoadedConfig(_validate(table or {}, path), root, path)
    import yaml  # noqa: PLC0415 (a project without a YAML config never loads PyYAML)

    text = _read_text(path)
    with contextlib.suppress(yaml.YAMLError):  # malformed YAML: load_yaml reports it with its line
        _check_depth(text, path)
    data = load_yaml(text, path, ConfigError)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping of settings, not {type(data).__name__}")
    return LoadedConfig(_validate(data, path), root, path)


def _check_depth(text: str, path: Path) -> None:
    """Refuse YAML nested deeper than ``MAX_CONFIG_DEPTH``: building it would recurse once per
    level (a RecursionError, exit 3). The event parser itself does not recurse."""
    import yaml  # noqa: PLC0415

    too_deep = f"nested more than {MAX_CONFIG_DEPTH} levels deep; the settings nest three"
    depth = 0
    try:
        for event in yaml.parse(text, Loader=safe_loader()):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_CONFIG_DEPTH:
                    where = f"{path}:{event.start_mark.line + 1}" if event.start_mark else str(path)
                    raise ConfigError(f"{where}: {too_deep}")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:
        # libyaml's parser refuses 1,000 levels itself, scanning ahead of the events read here
        if "nesting depth" in str(getattr(exc, "problem", "") or exc):
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            raise ConfigError(f"{where}: {too_deep}") from None
        raise


def _pyproject_table(path: Path) -> dict[str, Any] | None:
    text = _read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(f"{path}: nested too deeply to be a settings file") from None
    tool = data.get("tool")
    table = tool.get("contam-guard") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def _validate(data: dict[str, Any], path: Path) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {_describe(exc, data)}") from None


def _describe(exc: ValidationError, data: dict[str, Any]) -> str:
    problems = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        key = ".".join(loc)
        if error["type"] == "extra_forbidden":
            model = _model_at(loc[:-1])
            close = difflib.get_close_matches(loc[-1], list(model.model_fields), n=1)
            suggestion = f" (did you mean {'.'.join([*loc[:-1], close[0]])!r}?)" if close else ""
            problems.append(f"unknown setting {key!r}{suggestion}")
        else:
            problems.append(f"{key}: {error['msg']}")
    return "; ".join(problems)


def _model_at(path: list[str]) -> type[BaseModel]:
    model: type[BaseModel] = Config
    for part in path:
        field = model.model_fields.get(part)
        annotation = field.annotation if field is not None else None
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
        else:
            break
    return model


def with_rule_overrides(config: Config, overrides: dict[str, dict[str, Any]]) -> Config:
    """Apply command-line rule settings (``{"gpt3": {"n": 10}}``) on top of the file's."""
    if not overrides:
        return config
    rules = config.rules.model_dump()
    for rule, values in overrides.items():
        rules[rule].update(values)
    data = config.model_dump()
    data["rules"] = rules
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"command line: {_describe(exc, data)}") from None


DEFAULT_CONFIG_TEXT = """\
# contam-guard settings. Every key is optional; these are the defaults.
# Docs: docs/reference/config.md. Unknown keys are an error (with a suggestion).

# Folder holding manifest.json (hashes of the registered golden sets) and the allowlist.
guard_dir: .contam-guard
# Environment variable holding the secret for keyed hashing (contam-guard init --keyed).
key_env: CONTAM_GUARD_KEY

rules:
{RULES_CONFIG}
scan:
  fields: []         # fields of training records to read (as --field); [] reads every string
  batch_chars: 1048576
  max_pairs_per_item: 20  # records listed per test item (the rest are counted); 0 lists all

# Reviewed findings (contam-guard review writes them) and the inline record marker.
allowlist:
  file: allowlist.yaml   # in guard_dir; commit it
  markers: true          # honour "contam_guard": "allow" on a record (--no-allowlist ignores both)

# contam-guard scrub: GPT-3's removal filter (Brown et al. 2020, App. C).
scrub:
  # auto: pieces for text files, records of one string apart from their id, and one --field
  # naming a top-level string; drop for records of several strings. Or: pieces, drop.
  mode: auto
  n: 13                 # words per colliding n-gram (5 or more)
  window: 200           # characters removed on each side of a colliding n-gram
  min_piece_chars: 200  # pieces shorter than this are discarded
  max_pieces: 10        # a record split into more pieces is dropped whole
  max_doc_freq: 10      # an n-gram in more training records than this is left alone
""".replace("{RULES_CONFIG}", "".join(rule.config for rule in RULES.values()))
