"""A damaged, edited, foreign or future manifest: exit 2, a message naming the file and the fix.

Commands run in process; ``verify`` also runs in a fresh process for the main cases (what a
user or CI sees, where a traceback would show).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contam_guard.cli import main
from contam_guard.manifest import store
from contam_guard.manifest.model import Manifest

ROWS = [
    {
        "id": f"e{n}",
        "q": f"In the village of Hollowbrook a miller ground {n + 3} sacks of barley before "
        f"the river froze, then sold {n + 1} of them at the winter fair. How many sacks were left over?",
    }
    for n in range(4)
]
MANIFEST = ".contam-guard/manifest.json"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONTAM_GUARD_KEY", raising=False)
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "train.jsonl").write_text(json.dumps({"text": ROWS[1]["q"]}) + "\n")
    assert run("init")[0] == 0
    assert run("register", "hb", "g.jsonl", "--field", "q", "--id-field", "id")[0] == 0
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    """The CLI in this process; returns the exit code and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as info:
        main(list(args))
    code = info.value.code
    return (code if isinstance(code, int) else 0), out.getvalue() + err.getvalue()


def run_fresh(cwd: Path, *args: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}
    proc = subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, sort_keys=True, indent=2) + "\n")


def truncate(path: Path) -> None:
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def flip_digit_in_base64(path: Path) -> None:
    text = path.read_text()
    match = re.search(r'"grams": "[^"]*?(\d)', text)
    assert match is not None
    at = match.start(1)
    path.write_text(text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :])
    json.loads(path.read_text())  # still valid JSON


def set_item_count(path: Path) -> None:
    edit_json(path, lambda d: d["sets"]["hb"]["files"][0].update(items=5))


def drop_an_id(path: Path) -> None:
    edit_json(path, lambda d: d["sets"]["hb"]["ids"].pop())


def schema(version: int) -> Callable[[Path], None]:
    return lambda path: edit_json(path, lambda d: d.update(schema_version=version))


def reseal(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    """Edit the manifest and recompute its integrity digest, as a careless tool would."""

    def apply(path: Path) -> None:
        data = json.loads(path.read_text())
        change(data)
        data.pop("digest")
        path.write_text(store.dumps(Manifest.model_validate(data)))

    return apply


def other_spec(data: dict[str, Any]) -> None:
    data["spec"]["hash"] = "cg-poly64-v0"


def not_a_manifest(path: Path) -> None:
    path.write_text(json.dumps({"sets": {}, "schema_version": 1}))


CASES = {
    "truncated": (truncate, ["not valid JSON", "truncated", "git checkout"]),
    "base64-digit": (flip_digit_in_base64, ["integrity check failed", "edited by hand", "git checkout"]),
    "item-count": (set_item_count, ["integrity check failed", "git checkout"]),
    "id-removed": (drop_an_id, ["integrity check failed", "git checkout"]),
    "schema-99": (schema(99), ["newer", "schema 99", "upgrade"]),
    "schema-0": (schema(0), ["older", "schema 0", "re-register", "contam-guard init", "manifest.json.old"]),
    "schema-text": (lambda p: edit_json(p, lambda d: d.update(schema_version="1")), ["schema_version"]),
    "other-spec": (
        reseal(other_spec),
        [
            "spec",
            "cg-poly64-v0",
            "cannot be compared",
            "re-register",
            "contam-guard init",
            "manifest.json.old",
        ],
    ),
    "not-a-manifest": (not_a_manifest, ["not a contam-guard manifest"]),
    "empty-file": (lambda p: p.write_text(""), ["not valid JSON"]),
}


def test_verify_passes_a_good_manifest(project: Path) -> None:
    code, output = run_fresh(project, "verify")
    assert code == 0, output
    assert "OK" in output and "1 set(s)" in output


@pytest.mark.parametrize("case", list(CASES))
def test_verify_fails_with_the_file_and_the_fix(project: Path, case: str) -> None:
    damage, phrases = CASES[case]
    damage(project / MANIFEST)
    code, output = run("verify")
    assert code == 2, output
    assert "manifest.json" in output
    for phrase in phrases:
        assert phrase in output, (phrase, output)
    assert "internal error" not in output


@pytest.mark.parametrize("case", ["truncated", "base64-digit", "schema-99", "schema-0", "other-spec"])
def test_verify_in_a_fresh_process_prints_no_traceback(project: Path, case: str) -> None:
    damage, phrases = CASES[case]
    damage(project / MANIFEST)
    code, output = run_fresh(project, "verify")
    assert code == 2, output
    assert phrases[0] in output and "hint:" in output
    assert "Traceback" not in output and "internal error" not in output


COMMANDS = {
    "scan": ["scan", "train.jsonl"],
    "register-same": ["register", "hb", "g.jsonl", "--field", "q", "--id-field", "id"],
    "register-new": ["register", "other", "g.jsonl", "--field", "q"],
    "sets": ["sets"],
    "remove": ["remove", "hb"],
}
COMMAND_CASES = [(c, k) for c in ("scan", "register-same") for k in CASES] + [
    (c, k) for c in ("register-new", "sets", "remove") for k in ("truncated", "base64-digit", "other-spec")
]


@pytest.mark.parametrize(("command", "case"), COMMAND_CASES, ids=[f"{c}-{k}" for c, k in COMMAND_CASES])
def test_every_command_refuses_a_bad_manifest_and_leaves_it(project: Path, command: str, case: str) -> None:
    damage, phrases = CASES[case]
    damage(project / MANIFEST)
    before = (project / MANIFEST).read_bytes()
    code, output = run(*COMMANDS[command])
    assert code == 2, output
    assert phrases[0] in output
    assert "internal error" not in output
    assert (project / MANIFEST).read_bytes() == before


def view_q(data: dict[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = data["sets"]["hb"]["views"]["q"]
    return view


RESEALED_SIZES = {
    "files-items": lambda d: d["sets"]["hb"]["files"][0].update(items=3),
    "short-words": lambda d: view_q(d).update(words=view_q(d)["words"][:-8]),
    "short-grams": lambda d: view_q(d).update(grams=view_q(d)["grams"][:-12]),
    "bad-base64": lambda d: view_q(d).update(grams="!!not base64!!"),
    "odd-size": lambda d: view_q(d).update(windows="AAAA"),
}


@pytest.mark.parametrize("case", list(RESEALED_SIZES))
@pytest.mark.parametrize("command", ["verify", "scan", "sets", "register-new"])
def test_arrays_of_the_wrong_size_are_refused_even_behind_a_valid_digest(
    project: Path, case: str, command: str
) -> None:
    """Edited and re-sealed: the outer digest matches, but no command may crash (exit 3) on it."""
    reseal(RESEALED_SIZES[case])(project / MANIFEST)
    code, output = run(*COMMANDS.get(command, [command]))
    assert code == 2, output
    assert "manifest.json" in output and "'hb'" in output and "git checkout" in output
    assert "internal error" not in output


def swap_ids(data: dict[str, Any]) -> None:
    ids = data["sets"]["hb"]["ids"]
    ids[0], ids[1] = ids[1], ids[0]


def change_a_hash(data: dict[str, Any]) -> None:
    grams = view_q(data)["grams"]
    view_q(data)["grams"] = ("B" if grams[0] != "B" else "C") + grams[1:]


@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        (change_a_hash, "view 'q': the hashes do not match"),
        (swap_ids, "ids and views do not match"),
        (lambda d: d["sets"]["hb"]["history"][-1].update(digest="0" * 32), "version history"),
    ],
    ids=["hash", "ids", "history"],
)
def test_verify_checks_the_digests_behind_a_valid_outer_digest(
    project: Path, change: Callable[[dict[str, Any]], None], phrase: str
) -> None:
    reseal(change)(project / MANIFEST)
    code, output = run("verify")
    assert code == 2, output
    assert "'hb'" in output and phrase in output and "git checkout" in output
    assert "internal error" not in output


def test_missing_manifest_says_run_init(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, output = run("verify")
    assert code == 2
    assert "manifest.json" in output and "contam-guard init" in output


def test_a_damaged_manifest_can_be_restored_by_reinit_and_register(project: Path) -> None:
    """The fix the messages give must work: move the bad file aside, init, register again."""
    good = (project / MANIFEST).read_bytes()
    reseal(other_spec)(project / MANIFEST)
    (project / MANIFEST).rename(project / "manifest.bad")
    assert run("init")[0] == 0
    assert run("register", "hb", "g.jsonl", "--field", "q", "--id-field", "id")[0] == 0
    assert (project / MANIFEST).read_bytes() == good
