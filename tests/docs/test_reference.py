"""The generated reference (docs/_hooks/reference.py) says what the code says: each command's help
block is what ``contam-guard COMMAND --help`` prints, every option and config key is listed, and
the generated pages' files in docs/ are only their stubs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from types import ModuleType

from pydantic import BaseModel

from contam_guard.core.config import Config
from contam_guard.core.rules import RULES
from contam_guard.errors import ExitCode
from contam_guard.io.manifest.model import MANIFEST_FORMAT, SCHEMA_VERSION
from tests.helpers import REPO


def real_help(*args: str) -> str:
    """``contam-guard ARGS --help`` in a fresh process, at 80 columns (click wraps to the terminal)."""
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(REPO)}
    env.pop("NO_COLOR", None)
    done = subprocess.run(
        [sys.executable, "-m", "contam_guard", *args, "--help"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.replace("Usage: python -m contam_guard", "Usage: contam-guard", 1)


def test_every_command_is_in_the_cli_reference_as_its_help_prints_it(reference: ModuleType) -> None:
    page = reference.cli_page()
    names = [name for name, _ in reference.commands()]
    listed = real_help()
    assert reference.help_text(None) == listed
    for name in names:
        assert f"  {name} " in listed  # the app's own list names every command the page has
        expected = real_help(name)
        assert reference.help_text(name) == expected, name
        assert f"## {name}\n" in page and expected.rstrip("\n") in page, name


def test_every_option_of_every_command_has_a_row(reference: ModuleType) -> None:
    page = reference.cli_page()
    for name, command in reference.commands():
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        names = [row.split(" | ")[0] for row in section.splitlines() if row.startswith("| `")]
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            flags = (
                param.opts + param.secondary_opts if param.param_type_name == "option" else [param.metavar]
            )
            for flag in flags:
                assert any(re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", n) for n in names), (
                    name,
                    flag,
                )


def test_every_config_key_and_default_is_in_the_config_reference(reference: ModuleType) -> None:
    page = reference.config_page()

    def keys(model: type[BaseModel], prefix: str = "") -> list[tuple[str, object]]:
        out: list[tuple[str, object]] = []
        for key, field in model.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
                out += keys(field.annotation, f"{prefix}{key}.")
            else:
                out.append((f"{prefix}{key}", field.get_default(call_default_factory=True)))
        return out

    found = keys(Config)
    assert len(found) > 30
    for key, default in found:
        row = next(line for line in page.splitlines() if line.startswith(f"| `{key}` | "))
        assert f"| `{reference.yaml_value(default)}` |" in row, key


def test_every_rule_and_exit_code_is_generated(reference: ModuleType) -> None:
    rules = reference.rules_page()
    for name, rule in RULES.items():
        assert f"\n## {name}\n" in rules and f"`{rule.settings().action}`" in rules
    codes = reference.exit_codes_page()
    for code in ExitCode:
        assert f"| {int(code)} | `{code.name}` |" in codes


def test_generated_pages_are_stubs_in_the_repository(reference: ModuleType) -> None:
    """Nothing generated is committed (it would go stale): the file holds its place for links."""
    assert set(reference.PAGES) == set(reference.TITLES)
    for path, make in reference.PAGES.items():
        assert (REPO / "docs" / path).read_text(encoding="utf-8") == reference.stub(path), path
        assert "<!-- contam-guard: generated -->" in reference.stub(path)
        assert make().startswith(f"# {reference.TITLES[path]}\n"), path


def test_the_manifest_page_shows_a_manifest_this_version_writes(reference: ModuleType) -> None:
    example = reference.manifest_example()
    assert f'"format": "{MANIFEST_FORMAT}"' in example and f'"schema_version": {SCHEMA_VERSION}' in example
    assert ".contam-guard/sets/arith-mini/" in example and '"id_field": "id"' in example
    page = (REPO / "docs" / "reference" / "manifest.md").read_text(encoding="utf-8")
    assert reference.INSERTS["reference/manifest.md"][0] in page
