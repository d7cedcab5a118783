"""Every file or folder of the repository that the docs name exists: a page's paths under the
repository's own folders (``contam_guard/core/scanner.py``, ``tests/docs``, ``csrc/native.c``),
in prose, code spans or code blocks, and in a code span a module path given without its leading
folders (``core/scan_pass.py``, ``io/manifest/sealing.py``), which must end some file of the tree.
The generated reference pages (module docstrings, ``benchmarks/README.md``) are checked as the
site shows them. And every ``contam-guard COMMAND --option`` a page shows in code is a command
and an option of it. Links between pages are ``mkdocs build --strict``'s to check (test_site.py)."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import typer.main
from typer.core import TyperGroup

from contam_guard.cli import app
from tests.helpers import REPO

ROOTS = ("contam_guard", "tests", "benchmarks", "csrc", "docs", "examples", "hooks", ".ci")
"""The repository's own top-level folders: a path starting with one of them names the tree (other
paths in the docs, ``data/train.jsonl`` or ``golden/KEY/``, are the user's)."""
SOURCE_SUFFIXES = (".py", ".c", ".h")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(re.escape(r) for r in ROOTS) + r")/[\w./-]*)(?P<after>.?)")
SPAN = re.compile(r"`([^`\n]+)`")
RELATIVE = re.compile(r"(?<![\w./-])([\w-]+(?:/[\w.-]+)+)")
COMMAND = re.compile(r"(?<![\w/-])contam-guard ([a-z][\w-]*)([^|;&]*)")
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
PLACEHOLDER = "<*{["
"""A path followed by one of these is a pattern (``tests/security/test_round2_<area>.py``)."""


def tree_files(root: Path) -> set[str]:
    """The files under the repository's own folders, as paths relative to ``root``."""
    return {
        p.relative_to(root).as_posix()
        for top in ROOTS
        if (root / top).is_dir()
        for p in (root / top).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def missing_paths(text: str, root: Path, files: set[str]) -> list[str]:
    """The repository paths ``text`` names that do not exist under ``root``."""
    missing: list[str] = []
    for found in PATH.finditer(text):
        if found.group("after") and found.group("after") in PLACEHOLDER:
            continue
        path = found.group(1).rstrip(".").split("::")[0]
        if not (root / path).exists():
            missing.append(path)
    for span in SPAN.findall(text):
        for named in RELATIVE.findall(span):
            path = named.rstrip(".")
            if path.startswith(tuple(f"{r}/" for r in ROOTS)) or not path.endswith(SOURCE_SUFFIXES):
                continue  # under a root: checked above; else not a module path
            if not any(f == path or f.endswith(f"/{path}") for f in files):
                missing.append(path)
    return missing


def test_every_path_the_docs_name_exists(reference: ModuleType) -> None:
    files = tree_files(REPO)
    docs = REPO / "docs"
    pages = {p.relative_to(docs).as_posix(): p.read_text(encoding="utf-8") for p in docs.rglob("*.md")}
    pages.update({f"{name} (generated)": make() for name, make in reference.PAGES.items()})
    assert len(pages) > 30
    wrong = [
        f"docs/{page}: {path}"
        for page, text in sorted(pages.items())
        for path in missing_paths(text, REPO, files)
    ]
    assert not wrong, "paths that do not exist:\n" + "\n".join(wrong)


def test_a_path_that_is_gone_is_reported(tmp_path: Path) -> None:
    """The check itself: a planted stale path fails it, wherever the page names it."""
    (tmp_path / "contam_guard" / "core").mkdir(parents=True)
    (tmp_path / "contam_guard" / "core" / "scanner.py").write_text("")
    (tmp_path / "tests").mkdir()
    page = (
        "The scanner is `contam_guard/core/scanner.py` (once `contam_guard/engine/scanner.py`);\n"
        "tests/engine/test_matcher.py checks it, `core/scanner.py` too, not `reporting/outputs.py`.\n"
        "```\npython -m pytest tests/x.py::test_y\n```\n"
        "Patterns are not paths: `tests/security/test_round2_<area>.py`, `contam_guard/*.py`.\n"
    )
    assert missing_paths(page, tmp_path, tree_files(tmp_path)) == [
        "contam_guard/engine/scanner.py",
        "tests/engine/test_matcher.py",
        "tests/x.py",
        "reporting/outputs.py",
    ]


def code(text: str) -> list[str]:
    """The lines of a page's fenced blocks and its code spans, shell comments cut off."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced:
            out.append(line)
        else:
            out += SPAN.findall(line)
    return [re.sub(r"\s#\s.*$", "", line) for line in out]


def unknown_options(text: str, group: TyperGroup) -> list[str]:
    """``contam-guard COMMAND [SUBCOMMAND] --option`` shown in ``text`` that the app lacks."""
    wrong: list[str] = []
    for line in code(text):
        for found in COMMAND.finditer(line):
            name, rest = found.groups()
            if name not in group.commands:
                wrong.append(f"contam-guard {name}: no such command")
                continue
            command = group.commands[name]
            words = rest.split()
            sub = getattr(command, "commands", {})
            if words and words[0] in sub:
                command, name = sub[words[0]], f"{name} {words[0]}"
            options = {"--help"} | {
                o for param in command.params for o in [*param.opts, *param.secondary_opts]
            }
            wrong += [f"contam-guard {name} {o}" for o in OPTION.findall(rest) if o not in options]
    return wrong


def test_every_command_and_option_the_docs_show_exists() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    wrong = [
        f"{page.relative_to(REPO).as_posix()}: {found}"
        for page in sorted((REPO / "docs").rglob("*.md"))
        for found in unknown_options(page.read_text(encoding="utf-8"), group)
    ]
    assert not wrong, "\n".join(wrong)


def test_an_option_that_is_gone_is_reported() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    page = (
        "```\ncontam-guard scan data/ --review r.md --no-such-option   # exit 1\n```\n"
        "Run `contam-guard convert --to siphash`, or `contam-guard scan data/ -q`.\n"
    )
    assert unknown_options(page, group) == [
        "contam-guard scan --no-such-option",
        "contam-guard convert: no such command",
    ]
