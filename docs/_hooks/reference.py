"""The docs' reference pages, generated from the code each time the site is built.

An mkdocs hook (``hooks:`` in mkdocs.yml): ``on_page_markdown`` makes the pages below from the code
(their files in docs/ are stubs that hold their place, ``stub``),
so no option, default, rule or catalogue row is ever written twice. Each ``*_page`` function is
also called by tests/docs (the CLI reference is compared with ``contam-guard CMD --help``).

- ``reference/cli.md``: every command of the typer app, its arguments and options (from click's
  parameters) and its ``--help`` text as printed on a terminal of 80 columns;
- ``reference/config.md``: every config key with its type, default and bounds, from the pydantic
  models (``contam_guard.core.config.Config``, each rule's settings model), and the file
  ``contam-guard init`` writes;
- ``reference/exit-codes.md``: ``contam_guard.errors.ExitCode``;
- ``reference/rules.md``: each rule's module docstring (definition, citation, worked example) and
  its settings;
- ``reference/normalisation.md``: ``contam_guard.core.spec.normalise``'s docstring, the spec;
- ``reference/benchmarks.md``: the catalogue of ``register --benchmark``;
- ``reference/hooks-and-action.md``: the pre-commit hooks and the Action's inputs and outputs,
  from ``.pre-commit-hooks.yaml`` and ``action.yml``;
- ``explanation/measurements.md``: ``benchmarks/README.md``, as ``make bench`` last wrote it.
"""

from __future__ import annotations

# The checkout's modules are imported where a page is made: mkdocs imports this file before
# ROOT is on sys.path.
# ruff: noqa: PLC0415
import ast
import inspect
import itertools
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the checkout's contam_guard, as the tests import it
    sys.path.insert(0, str(ROOT))

WIDTH = 78
"""Columns the help text is wrapped to: what click uses on a terminal of 80 columns or more (its
``max_content_width`` of 80, less a margin of 2)."""
PROG = "contam-guard"


# --- the command line ----------------------------------------------------------------------


def commands() -> list[tuple[str, Any]]:
    """The app's commands as click sees them, in the order ``contam-guard --help`` lists them."""
    import typer.main

    from contam_guard.cli import app

    group = typer.main.get_command(app)
    ctx = group.make_context(PROG, [], resilient_parsing=True)
    names = group.list_commands(ctx)  # type: ignore[attr-defined]
    return [(name, group.get_command(ctx, name)) for name in names]  # type: ignore[attr-defined]


def help_text(name: str | None) -> str:
    """What ``contam-guard [NAME] --help`` prints on a terminal of 80 columns."""
    import typer.main

    from contam_guard.cli import app

    group = typer.main.get_command(app)
    # typer's own click (it vendors one): the context class its commands make.
    root = group.context_class(group, info_name=PROG, terminal_width=WIDTH)
    if name is None:
        return str(group.get_help(root)).rstrip("\n") + "\n"
    command = group.get_command(root, name)  # type: ignore[attr-defined]
    ctx = command.context_class(command, info_name=name, parent=root, terminal_width=WIDTH)
    return str(command.get_help(ctx)).rstrip("\n") + "\n"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _param_row(param: Any, ctx: Any) -> str | None:
    """A parameter as ``--help`` describes it (its own help record: names, metavar, help, default)."""
    if getattr(param, "hidden", False) or param.param_type_name not in ("argument", "option"):
        return None
    record = param.get_help_record(ctx)
    if record is None:
        return None
    names, what = record
    kind = "flag" if getattr(param, "is_flag", False) else param.param_type_name
    return f"| `{names}` | {kind} | {_cell(what)} |"


def _context(name: str) -> tuple[Any, Any]:
    import typer.main

    from contam_guard.cli import app

    group = typer.main.get_command(app)
    root = group.context_class(group, info_name=PROG, terminal_width=WIDTH)
    command = group.get_command(root, name)  # type: ignore[attr-defined]
    return command, command.context_class(command, info_name=name, parent=root, terminal_width=WIDTH)


def cli_page() -> str:
    out = [
        "# Command line",
        "",
        "Generated from the typer app (`contam_guard/cli`) when the site is built: each command's",
        "arguments and options, then its `--help` exactly as `contam-guard COMMAND --help` prints it",
        "(a test compares the two). Exit codes: [Exit codes](exit-codes.md).",
        "",
        "```text",
        help_text(None).rstrip("\n"),
        "```",
        "",
    ]
    for name, command in commands():
        out += [f"## {name}", "", command.get_short_help_str(limit=300), ""]
        _, ctx = _context(name)
        rows = [row for row in (_param_row(p, ctx) for p in command.params) if row]
        if rows:
            out += ["| name | kind | what |", "| --- | --- | --- |", *rows, ""]
        out += ["```text", help_text(name).rstrip("\n"), "```", ""]
    return "\n".join(out)


# --- the settings --------------------------------------------------------------------------


def attribute_docs(cls: type) -> dict[str, str]:
    """Each field's docstring (the string literal right after its annotation) in ``cls``'s body
    and its bases'."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        tree = ast.parse(source)
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def _type_name(annotation: Any) -> str:
    """``int | Literal['auto']`` -> ``int or 'auto'``; ``Literal['a', 'b']`` -> ``'a' or 'b'``."""
    import typing

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return " or ".join(repr(a) for a in args)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " or ".join(_type_name(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', origin)}[{', '.join(_type_name(a) for a in args)}]"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(field: Any) -> str:
    parts = []
    for meta in field.metadata:
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(meta, attr, None)
            if value is not None:
                parts.append(f"{sign} {value:,}" if isinstance(value, int) else f"{sign} {value}")
    return ", ".join(parts)


_FIELD_NOTES = {
    "enabled": "Whether the rule runs (`--only`, `--disable` for one scan).",
    "action": "`fail`: a finding fails the scan (exit 1); `warn`: it is reported (`--fail-on`, `--warn-on`).",
    "guard_dir": "Folder holding `manifest.json` (the registered sets' hashes) and the allowlist.",
    "key_env": "Environment variable holding the secret for keyed hashing (`contam-guard init --keyed`).",
}
"""Notes for keys whose models carry no description (the same in every rule)."""


def _rule_comment(name: str) -> str:
    from contam_guard.core.rules import RULES

    lines = [line.strip() for line in RULES[name].config.splitlines()]
    return " ".join(line.lstrip("# ") for line in lines if line.startswith("#"))


def yaml_value(value: object) -> str:
    """A default as it is written in the YAML config (``true``, ``auto``, ``[]``)."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True).strip()
    return text.removesuffix("...").strip()


def config_rows(model: type, prefix: str = "") -> list[str]:
    from pydantic import BaseModel

    docs = attribute_docs(model)
    rows: list[str] = []
    for key, field in model.model_fields.items():  # type: ignore[attr-defined]
        path = f"{prefix}{key}"
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if prefix == "rules.":  # the rule's own words, as `init` writes them into the file
                rows.append(f"| `{path}` | rule | | | {_cell(_rule_comment(key))} |")
            rows += config_rows(annotation, path + ".")
            continue
        default = field.get_default(call_default_factory=True)
        what = field.description or docs.get(key, "") or _FIELD_NOTES.get(key, "")
        bounds = _bounds(field)
        kind, shown = _cell(_type_name(annotation)), _cell(yaml_value(default))
        rows.append(f"| `{path}` | {kind} | `{shown}` | {bounds} | {_cell(what)} |")
    return rows


def config_page() -> str:
    from contam_guard.core.config import DEFAULT_CONFIG_TEXT, Config

    return "\n".join(
        [
            "# Configuration",
            "",
            "Generated from the settings models (`contam_guard/core/config.py` and each rule's",
            "settings in `contam_guard/core/rules/`) when the site is built.",
            "",
            "**Where settings are found**, first match wins: `--config FILE`; else, walking up from the",
            "current folder, the nearest `contam-guard.yaml`, `.contam-guard/contam-guard.yaml` or",
            "`pyproject.toml` with a `[tool.contam-guard]` table; else the defaults. Relative paths are",
            "relative to the project root (the folder holding the config, or the `.contam-guard` folder).",
            "An unknown key is an error (exit 2) that names the key and suggests the nearest valid one;",
            "`contam-guard init` writes the commented file below. Command-line options (`--n`, `--only`,",
            "`--fail-on`, ...) override the file for one run.",
            "",
            "| key | type | default | bounds | what |",
            "| --- | --- | --- | --- | --- |",
            *config_rows(Config),
            "",
            "## The file `contam-guard init` writes",
            "",
            "```yaml",
            DEFAULT_CONFIG_TEXT.rstrip("\n"),
            "```",
            "",
        ]
    )


# --- exit codes, rules, spec, catalogue ------------------------------------------------------


def exit_codes_page() -> str:
    from contam_guard.errors import ExitCode

    docs = attribute_docs(ExitCode)
    rows = [f"| {int(code)} | `{code.name}` | {_cell(docs.get(code.name, ''))} |" for code in ExitCode]
    return "\n".join(
        [
            "# Exit codes",
            "",
            "Every command maps its errors to these in one place (`contam_guard/cli`); the first four",
            "rows are generated from `contam_guard.errors.ExitCode`.",
            "",
            "| code | name | meaning |",
            "| --- | --- | --- |",
            *rows,
            "| 130, 143 | (signals) | Interrupted by Ctrl-C (SIGINT) or SIGTERM: one line on stderr, nothing "
            "concluded, no temporary file left behind (only SIGKILL can leave a hidden `.NAME.*.tmp` "
            "beside an output). A second Ctrl-C ends the process at once. |",
            "",
            "- `--exit-zero` reports findings and exits 0. A scan that was given nothing to read exits",
            "  0 and says so.",
            "- A guard never exits 0 when it could not read all it was asked to check: a file of a type",
            "  contam-guard reads (by extension and content) that cannot be read completely is exit 2",
            "  (`--skip-unreadable` notes it and goes on). A file of a type it does not read (an image)",
            "  is left out with a notice, so a hook passed every staged file does not fail on it.",
            "- Exit 2 means nothing was concluded: bad JSON line, a `--field` missing or holding no",
            "  text, undecodable bytes, unknown config key, corrupt or foreign manifest, missing key,",
            "  shallow clone or unknown base, Git LFS object missing. The message names the file (and",
            "  line) and the fix; it never shows a traceback.",
            "- `probe` and `impact` exit 0 whatever their verdict (they inform; `scan` is the gate), 2 on",
            "  bad input or a failing endpoint.",
            "",
        ]
    )


def _settings_rows(model: type) -> list[str]:
    docs = attribute_docs(model)
    rows = []
    for key, field in model.model_fields.items():  # type: ignore[attr-defined]
        what = field.description or docs.get(key, "")
        rows.append(
            f"| `{key}` | `{yaml_value(field.get_default(call_default_factory=True))}` | {_cell(what)} |"
        )
    return rows


def rules_page() -> str:
    import importlib

    from contam_guard.core.rules import RULES

    out = [
        "# Rules",
        "",
        "Generated from the rule registry (`contam_guard/core/rules/`) when the site is built: each",
        "rule's definition, citation and worked example (its module's docstring) and its settings",
        "(`rules.NAME.KEY` in the config). What the rules catch and miss, measured:",
        "[The rules, explained](../explanation/rules.md).",
        "",
        "| rule | default action | settings |",
        "| --- | --- | --- |",
    ]
    for name, rule in RULES.items():
        defaults = rule.settings()
        keys = ", ".join(f"`{k}: {yaml_value(v)}`" for k, v in defaults.model_dump().items() if k != "action")
        out.append(f"| [`{name}`](#{name}) | `{defaults.action}` | {keys} |")
    out.append("")
    for name, rule in RULES.items():
        module = importlib.import_module(rule.settings.__module__)
        doc = inspect.getdoc(module) or ""
        out += [
            f"## {name}",
            "",
            "```text",
            doc.rstrip("\n"),
            "```",
            "",
            "| setting | default | what |",
            "| --- | --- | --- |",
            *_settings_rows(rule.settings),
            "",
        ]
    return "\n".join(out)


def normalisation_page() -> str:
    from contam_guard.core.spec import normalise

    return "\n".join(
        [
            "# Normalisation spec",
            "",
            "The text every rule compares, step by step: the docstring of",
            "`contam_guard/core/spec/normalise.py`, included when the site is built. A manifest records",
            "the spec it was hashed with and is always scanned under it; `contam-guard upgrade`",
            "re-hashes it under the current one. Why the steps are what they are:",
            "[Normalisation and languages](../explanation/normalisation.md).",
            "",
            "```text",
            (inspect.getdoc(normalise) or "").rstrip("\n"),
            "```",
            "",
        ]
    )


def benchmarks_page() -> str:
    from contam_guard.catalogue import markdown_table

    return "\n".join(
        [
            "# Benchmarks by name",
            "",
            "`contam-guard register NAME --benchmark KEY` takes a benchmark's views and id field from",
            "this catalogue (`contam_guard/catalogue/`, generated here when the site is built; `--field`",
            "and `--id-field` still win). Where its data comes from:",
            "[Register golden sets](../how-to/register.md).",
            "",
            markdown_table().rstrip("\n"),
            "",
        ]
    )


def _yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def hooks_and_action_page() -> str:
    hooks = _yaml(ROOT / ".pre-commit-hooks.yaml")
    action = _yaml(ROOT / "action.yml")
    out = [
        "# Hooks and Action",
        "",
        "Generated from `.pre-commit-hooks.yaml` and `action.yml` when the site is built. How to use",
        "them: [pre-commit](../how-to/pre-commit.md), [GitHub Action](../how-to/github-action.md).",
        "",
        "## pre-commit hooks",
        "",
        "| id | runs | files | stages | notes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for hook in hooks:
        files = hook.get("files") or (
            "directories" if "directory" in hook.get("types", []) else "every staged file"
        )
        if hook.get("always_run"):
            files = "every commit (no files passed)"
        notes = ", ".join(
            f"`{k}: {str(hook[k]).lower()}`"
            for k in ("require_serial", "verbose", "pass_filenames")
            if k in hook
        )
        stages = ", ".join(hook.get("stages", [])) or "commit"
        out.append(f"| `{hook['id']}` | `{hook['entry']}` | {_cell(files)} | {stages} | {_cell(notes)} |")
    out += ["", "## Action inputs", "", "| input | default | what |", "| --- | --- | --- |"]
    for key, spec in action["inputs"].items():
        default = f"`{spec['default']}`" if spec.get("default") else "(empty)"
        out.append(f"| `{key}` | {default} | {_cell(spec.get('description', ''))} |")
    out += ["", "## Action outputs", "", "| output | what |", "| --- | --- |"]
    for key, spec in action["outputs"].items():
        out.append(f"| `{key}` | {_cell(spec.get('description', ''))} |")
    out.append("")
    return "\n".join(out)


def measurements_page() -> str:
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    # Its links point into the repository, which the site does not hold: keep their text.
    text = re.sub(r"\[([^\]]+)\]\((?!https?:)[^)]*\)", r"\1", text)
    if text.startswith("# "):  # its own title gives way to the page's
        text = text.split("\n", 1)[1]
    head = (
        "# Measurements\n\n!!! note\n"
        "    This page is `benchmarks/README.md`, included when the site is built,\n"
        "    as `make bench` last wrote it.\n"
    )
    return head + text


def manifest_example() -> str:
    """The manifest ``init`` and ``register`` write for the bundled example set, made now."""
    import json
    import os
    import shutil
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "golden").mkdir()
        shutil.copy(ROOT / "examples" / "golden" / "arith-mini.jsonl", work / "golden")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("CONTAM_GUARD_KEY", None)
        register = ["register", "arith-mini", "golden/arith-mini.jsonl", "--field", "question"]
        for args in (["init"], [*register, "--field", "answer", "--id-field", "id"]):
            subprocess.run(
                [sys.executable, "-m", "contam_guard", *args],
                cwd=work,
                env=env,
                check=True,
                capture_output=True,
            )
        guard = work / ".contam-guard"
        files = sorted(p for p in guard.rglob("*") if p.is_file() and not p.name.endswith(".lock"))
        listing = "\n".join(
            f"{p.relative_to(work).as_posix():<80} {p.stat().st_size:>7,} bytes" for p in files
        )
        index = json.dumps(json.loads((guard / "manifest.json").read_text(encoding="utf-8")), indent=2)
    return "\n".join(
        [
            "`contam-guard init`, then `contam-guard register arith-mini golden/arith-mini.jsonl --field",
            "question --field answer --id-field id` on the bundled example set (12 items), run by this",
            "version of contam-guard when the site was built:",
            "",
            "```text",
            listing,
            "```",
            "",
            "`.contam-guard/manifest.json`:",
            "",
            "```json",
            index,
            "```",
            "",
        ]
    )


INSERTS = {"reference/manifest.md": ("<!-- contam-guard: manifest-example -->", manifest_example)}
"""Hand-written pages with a generated part: the marker is replaced when the site is built."""

TITLES = {
    "reference/cli.md": "Command line",
    "reference/config.md": "Configuration",
    "reference/exit-codes.md": "Exit codes",
    "reference/rules.md": "Rules",
    "reference/normalisation.md": "Normalisation spec",
    "reference/benchmarks.md": "Benchmarks by name",
    "reference/hooks-and-action.md": "Hooks and Action",
    "explanation/measurements.md": "Measurements",
}
"""Each generated page's title (its stub's, and its ``# `` line once made)."""

PAGES = {
    "reference/cli.md": cli_page,
    "reference/config.md": config_page,
    "reference/exit-codes.md": exit_codes_page,
    "reference/rules.md": rules_page,
    "reference/normalisation.md": normalisation_page,
    "reference/benchmarks.md": benchmarks_page,
    "reference/hooks-and-action.md": hooks_and_action_page,
    "explanation/measurements.md": measurements_page,
}


STUB = """\
# {title}

<!-- contam-guard: generated -->
This page is generated from the code when the docs site is built (`make docs`, by
`docs/_hooks/reference.py`): read it on the built site (`site/{html}`). This file only holds its
place, so that links to it work in the repository too.
"""
"""What each generated page's file in the repository holds (``stub``; a test checks they do)."""


def stub(path: str) -> str:
    """The file in docs/ that holds a generated page's place (its title is the page's own)."""
    return STUB.format(title=TITLES[path], html=path.removesuffix(".md") + ".html")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """mkdocs: a generated page's Markdown is made now, from the code; its file is a stub."""
    make = PAGES.get(page.file.src_uri)
    if make is not None:
        return make()
    if page.file.src_uri in INSERTS:
        marker, insert = INSERTS[page.file.src_uri]
        assert marker in markdown, f"{page.file.src_uri}: no {marker}"
        return markdown.replace(marker, insert())
    return markdown
