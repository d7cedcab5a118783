"""Settings files: validation errors (exit 2, named key, suggestion) and discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from contam_guard.core.config import load_config
from tests.cli.conftest import LeakText, Project
from tests.helpers import Runner

CONFIG_REL = ".contam-guard/contam-guard.yaml"


@pytest.fixture
def fifteen(registered: Project, leak_text: LeakText) -> Path:
    """A record sharing a run of exactly 15 words with lx-01's question (fails at N = 13)."""
    return registered.training("train.jsonl", [leak_text(registered.question_words(0), 2, 15)])


@pytest.mark.parametrize(
    ("yaml_text", "phrases"),
    [
        ("rulez:\n  gpt3: {n: 13}\n", ["'rulez'", "did you mean 'rules'"]),
        ("rules:\n  gtp3: {n: 13}\n", ["'rules.gtp3'", "did you mean 'rules.gpt3'"]),
        ("rules:\n  gpt3: {nn: 13}\n", ["'rules.gpt3.nn'", "'rules.gpt3.n'"]),
        ("scan:\n  feild: text\n", ["'scan.feild'", "'scan.fields'"]),
        ('rules:\n  gpt3: {n: "thirteen"}\n', ["rules.gpt3.n"]),
        ("rules:\n  gpt3: {n: 3}\n", ["rules.gpt3.n", "at least 5"]),
        ("rules:\n  palm: {threshold: -0.5}\n", ["rules.palm.threshold", "greater than or equal to 0"]),
        ("rules:\n  llama2: {dirty: 1.5}\n", ["rules.llama2.dirty"]),
        ("rules:\n  gpt4: {mode: sometimes}\n", ["rules.gpt4.mode"]),
        ("rules:\n  gpt3: {action: explode}\n", ["rules.gpt3.action"]),
        ("rules: [1, 2\n", ["not valid YAML"]),
        ("- just\n- a list\n", ["mapping"]),
    ],
    ids=[
        "typo-top",
        "typo-rule",
        "typo-setting",
        "typo-scan",
        "n-string",
        "n-too-small",
        "negative-threshold",
        "share-above-one",
        "bad-mode",
        "bad-action",
        "broken-yaml",
        "not-a-mapping",
    ],
)
def test_invalid_settings_exit_2_naming_the_file_and_key(
    registered: Project, fifteen: Path, tmp_path: Path, yaml_text: str, phrases: list[str]
) -> None:
    (tmp_path / CONFIG_REL).write_text(yaml_text)
    for command in (["scan", fifteen], ["sets"], ["verify"]):
        result = registered.cli(*command)
        assert result.code == 2, (command, result.output)
        assert "contam-guard.yaml" in result.err
        for phrase in phrases:
            assert phrase in result.err, (phrase, result.err)
        assert "internal error" not in result.output


def test_explicit_config_file_errors_too(registered: Project, fifteen: Path, tmp_path: Path) -> None:
    bad = tmp_path / "elsewhere.yaml"
    bad.write_text("rules:\n  gtp3: {n: 20}\n")
    result = registered.cli("scan", fifteen, "--config", bad, "--manifest", registered.manifest)
    assert result.code == 2
    assert "elsewhere.yaml" in result.err and "rules.gpt3" in result.err


def test_missing_explicit_config_file_exits_2(registered: Project, fifteen: Path) -> None:
    result = registered.cli("scan", fifteen, "--config", "nope.yaml")
    assert result.code == 2
    assert "nope.yaml" in result.err


def test_yaml_setting_changes_the_verdict(registered: Project, fifteen: Path, tmp_path: Path) -> None:
    assert registered.cli("scan", fifteen).code == 1
    (tmp_path / CONFIG_REL).write_text("rules:\n  gpt3: {n: 20}\n")
    assert registered.cli("scan", fifteen).code == 0


def test_pyproject_table_is_discovered(registered: Project, fifteen: Path, tmp_path: Path) -> None:
    (tmp_path / CONFIG_REL).unlink()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n\n[tool.contam-guard.rules.gpt3]\nn = 20\n'
    )
    assert registered.cli("scan", fifteen).code == 0
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n')  # no table: defaults
    assert registered.cli("scan", fifteen).code == 1


def test_pyproject_typo_is_reported(registered: Project, fifteen: Path, tmp_path: Path) -> None:
    (tmp_path / CONFIG_REL).unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.contam-guard.rules.palm]\ntreshold = 0.5\n")
    result = registered.cli("scan", fifteen)
    assert result.code == 2
    assert "pyproject.toml" in result.err
    assert "'rules.palm.treshold'" in result.err and "'rules.palm.threshold'" in result.err


def test_init_does_not_shadow_a_pyproject_table(cli: Runner, tmp_path: Path) -> None:
    """``init`` in a project configured in pyproject.toml must not add a yaml that wins over it,
    and must put the manifest where that table says (else ``register`` cannot find it)."""
    (tmp_path / "pyproject.toml").write_text('[tool.contam-guard]\nguard_dir = "ci/guard"\n')
    assert cli("init").code == 0
    assert not (tmp_path / CONFIG_REL).exists()
    assert (tmp_path / "ci/guard/manifest.json").is_file()
    loaded = load_config(start=tmp_path)
    assert loaded.source == tmp_path / "pyproject.toml"
    (tmp_path / "g.jsonl").write_text('{"q": "How many herons wade in the estuary at low tide?"}\n')
    assert cli("register", "g", "g.jsonl", "--field", "q").code == 0
    assert "herons" not in (tmp_path / "ci/guard/manifest.json").read_text()
    assert cli("verify").code == 0


def test_init_keeps_an_existing_root_yaml(cli: Runner, tmp_path: Path) -> None:
    (tmp_path / "contam-guard.yaml").write_text("guard_dir: guard\n")
    assert cli("init").code == 0
    assert not (tmp_path / CONFIG_REL).exists()
    assert (tmp_path / "guard/manifest.json").is_file()
    assert cli("verify").code == 0


def test_discovery_walks_up_from_a_subfolder(
    registered: Project, fifteen: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "src" / "pkg" / "deeper"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert registered.cli("scan", "../../../train.jsonl").code == 1  # manifest found from the subfolder
    (tmp_path / CONFIG_REL).write_text("rules:\n  gpt3: {n: 20}\n")
    assert registered.cli("scan", "../../../train.jsonl").code == 0
    (tmp_path / "src" / "contam-guard.yaml").write_text("rules:\n  gpt3: {n: 14}\n")
    nearer = registered.cli("scan", "../../../train.jsonl")  # the nearer file wins; its root has no manifest
    assert nearer.code == 2
    assert "src/.contam-guard/manifest.json" in nearer.err
    nearer = registered.cli("scan", "../../../train.jsonl", "--manifest", registered.manifest)
    assert nearer.code == 1, nearer.output


def test_root_contam_guard_yaml_beats_the_one_in_the_guard_folder(
    registered: Project, fifteen: Path, tmp_path: Path
) -> None:
    (tmp_path / "contam-guard.yaml").write_text("rules:\n  gpt3: {n: 20}\n")
    assert registered.cli("scan", fifteen).code == 0
