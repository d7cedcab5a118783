"""Settings: pydantic models (frozen, unknown keys rejected) and where they are found.

Discovery, first match wins: ``--config FILE``; else, walking up from the current folder, the
nearest ``contam-guard.yaml``, ``.contam-guard/contam-guard.yaml`` or ``pyproject.toml`` with
a ``[tool.contam-guard]`` table; else the defaults. Relative paths in a config are relative to
the project root: the folder holding the config file (or the ``.contam-guard`` folder).
"""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from contam_guard.errors import ConfigError
from contam_guard.safe_read import decode_utf8, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

GUARD_DIR = ".contam-guard"
CONFIG_NAME = "contam-guard.yaml"
MANIFEST_NAME = "manifest.json"

Action = Literal["fail", "warn"]

MAX_WORDS = 1_000_000
"""Bound of every word-count setting: no test item is a million words long, and a bound keeps a
typo (``n: 99999999999999999999999``) from overflowing the engine's integer arrays."""
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


class Gpt3Rule(_Settings):
    """Any shared run of at least ``n`` words (``auto``: the set's 5th-percentile length, 8..13)."""

    enabled: bool = True
    action: Action = "fail"
    n: int | Literal["auto"] = 13

    @field_validator("n")
    @classmethod
    def _n_at_least_five(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 5:
            raise ValueError("n must be at least 5 (runs under 5 words are not measured), or 'auto'")
        if isinstance(value, int) and value > MAX_WORDS:
            raise ValueError(f"n must be at most {MAX_WORDS:,} words, or 'auto'")
        return value


class PalmRule(_Settings):
    """At least ``threshold`` of the item's 8-grams occur in the scanned data."""

    enabled: bool = True
    action: Action = "warn"
    threshold: float = Field(0.70, ge=0.0, le=1.0)


class Llama2Rule(_Settings):
    """Share of the item's words inside shared runs of at least ``min_run`` words."""

    enabled: bool = True
    action: Action = "warn"
    min_run: int = Field(10, ge=5, le=MAX_WORDS)
    dirty: float = Field(0.80, ge=0.0, le=1.0)
    not_clean: float = Field(0.20, ge=0.0, le=1.0)
    fire_on: Literal["dirty", "not_clean"] = "dirty"


class Gpt4Rule(_Settings):
    """50-character windows of the alnum view; fire on any window or on the 3-draw probability."""

    enabled: bool = True
    action: Action = "warn"
    mode: Literal["any_window", "probability"] = "any_window"
    probability: float = Field(0.5, ge=0.0, le=1.0)


class Rules(_Settings):
    gpt3: Gpt3Rule = Gpt3Rule()
    palm: PalmRule = PalmRule()
    llama2: Llama2Rule = Llama2Rule()
    gpt4: Gpt4Rule = Gpt4Rule()


class ScanSettings(_Settings):
    fields: list[str] = []
    """Fields of training records to read (``--field``); empty: every string of every record."""
    batch_chars: int = Field(1 << 20, ge=1024, le=1 << 30)
    """Characters hashed per vectorised batch: larger is faster up to cache size."""
    max_pairs_per_item: int = Field(MAX_PAIRS_PER_ITEM, ge=0, le=MAX_COUNT)
    """Pairs listed per test item in reports (``--max-pairs-per-item``; 0: all); the rest are
    counted exactly (``engine.pairs``)."""


class ScrubSettings(_Settings):
    """The GPT-3 removal filter (``contam-guard scrub``); see ``contam_guard/scrub``."""

    mode: Literal["auto", "pieces", "drop"] = "auto"
    """auto: drop for chat/instruction records and nested or list fields, pieces otherwise."""
    n: int = Field(13, ge=5, le=MAX_WORDS)
    window: int = Field(200, ge=0, le=MAX_COUNT)
    min_piece_chars: int = Field(200, ge=0, le=MAX_COUNT)
    max_pieces: int = Field(10, ge=1, le=MAX_COUNT)
    max_doc_freq: int = Field(10, ge=1, le=MAX_COUNT)


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
    text = _read_text(path)
    try:
        _check_depth(text, path)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping of settings, not {type(data).__name__}")
    return LoadedConfig(_validate(data, path), root, path)


def _check_depth(text: str, path: Path) -> None:
    """Refuse YAML nested deeper than ``MAX_CONFIG_DEPTH``: building it would recurse once per
    level (a RecursionError, exit 3). The event parser itself does not recurse."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_CONFIG_DEPTH:
                mark = event.start_mark
                where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
                raise ConfigError(
                    f"{where}: nested more than {MAX_CONFIG_DEPTH} levels deep; the settings nest three"
                )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


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
# Docs: README.md ("Configuration"). Unknown keys are an error (with a suggestion).

# Folder holding manifest.json (hashes of the registered golden sets) and the allowlist.
guard_dir: .contam-guard
# Environment variable holding the secret for keyed hashing (contam-guard init --keyed).
key_env: CONTAM_GUARD_KEY

rules:
  # GPT-3 (Brown et al. 2020, App. C): any shared run of at least n words. n: 5.. or auto
  gpt3: {enabled: true, action: fail, n: 13}
  # PaLM (Chowdhery et al. 2022, Sec. 8): at least 70% of the item's 8-grams seen.
  palm: {enabled: true, action: warn, threshold: 0.70}
  # Llama 2 (Touvron et al. 2023, App. A.6), with words for tokens: share of words in
  # shared runs of 10+ words; dirty at 80%, not clean at 20%.
  llama2: {enabled: true, action: warn, min_run: 10, dirty: 0.80, not_clean: 0.20, fire_on: dirty}
  # GPT-4 (OpenAI 2023, App. C): 50-character windows of the alphanumeric text.
  # mode any_window (every window checked) or probability (3 random draws, in expectation).
  gpt4: {enabled: true, action: warn, mode: any_window, probability: 0.5}

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
  # auto: drop for chat/instruction records (messages, Alpaca, ShareGPT) and nested or list
  # fields, pieces for a plain text field and plain-text files. Or: pieces, drop.
  mode: auto
  n: 13                 # words per colliding n-gram (5 or more)
  window: 200           # characters removed on each side of a colliding n-gram
  min_piece_chars: 200  # pieces shorter than this are discarded
  max_pieces: 10        # a record split into more pieces is dropped whole
  max_doc_freq: 10      # an n-gram in more training records than this is left alone
"""
