"""A damaged, edited, foreign or future manifest: exit 2, a message naming the file and the fix.

A manifest is an index (``manifest.json``) and binary files (``sets/hb/q.<digest>.bin``, ...);
either can be damaged. Commands run in process; ``verify`` also runs in a fresh process for the
main cases (what a user or CI sees, where a traceback would show).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from contam_guard.cli import main
from contam_guard.io.manifest import binfile
from contam_guard.io.manifest.disk_files import file_digest
from contam_guard.io.manifest.index_text import dumps_index
from contam_guard.io.manifest.packed import PackedTable, Shape, pack, unpack
from contam_guard.io.manifest.schema import Index
from tests.helpers import set_file

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


def run_fresh(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """The CLI in a new process (no key in its environment unless ``env`` gives one)."""
    env = {**{k: v for k, v in os.environ.items() if k != "CONTAM_GUARD_KEY"}, **(env or {})}
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


def set_item_count(path: Path) -> None:
    edit_json(path, lambda d: d["sets"]["hb"]["files"][0].update(items=5))


def schema(version: int) -> Callable[[Path], None]:
    return lambda path: edit_json(path, lambda d: d.update(schema_version=version))


def reseal(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    """Edit the index and recompute its integrity digest, as a careless tool would."""

    def apply(path: Path) -> None:
        data = json.loads(path.read_text())
        change(data)
        data.pop("digest")
        path.write_text(dumps_index(Index.model_validate(data)))

    return apply


def other_spec(data: dict[str, Any]) -> None:
    data["spec"]["hash"] = "cg-poly64-v0"


def not_a_manifest(path: Path) -> None:
    path.write_text(json.dumps({"sets": {}, "schema_version": 1}))


def in_set(name: str, change: Callable[[Path], None]) -> Callable[[Path], None]:
    """A damage to the set file of stem ``name`` (``q.bin``, ``_ids.bin``) beside the index."""
    return lambda index: change(set_file(index.parent / "sets" / "hb", name))


def flip_a_byte(path: Path) -> None:
    """One byte of the last array changed: the size and the header stay as they were."""
    data = bytearray(path.read_bytes())
    data[-9] ^= 0x5A
    path.write_bytes(bytes(data))


def cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-64])


def lfs_pointer(path: Path) -> None:
    oid = "a" * 64
    path.write_text(f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize 12345\n")


CASES = {
    "truncated": (truncate, ["not valid JSON", "truncated", "git checkout"]),
    "item-count": (set_item_count, ["integrity check failed", "edited by hand", "git checkout"]),
    "schema-99": (schema(99), ["newer", "schema 99", "upgrade"]),
    "schema-0": (schema(0), ["older", "schema 0", "re-register", "contam-guard init", "manifest.json.old"]),
    "schema-text": (lambda p: edit_json(p, lambda d: d.update(schema_version="2")), ["schema_version"]),
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
    "view-byte": (in_set("q.bin", flip_a_byte), ["hb/q.", "digest is not the one", "git checkout"]),
    "windows-byte": (
        in_set("q.windows.bin", flip_a_byte),
        ["q.windows.", "digest is not the one", "git checkout"],
    ),
    "ids-byte": (in_set("_ids.bin", flip_a_byte), ["_ids.", "digest is not the one", "git checkout"]),
    "view-cut": (in_set("q.bin", cut), ["hb/q.", "bytes, but the manifest's index says", "git checkout"]),
    "view-missing": (in_set("q.bin", lambda p: p.unlink()), ["hb/q.", "missing", "git checkout"]),
    "view-lfs-pointer": (in_set("q.bin", lfs_pointer), ["hb/q.", "Git LFS pointer", "git lfs pull"]),
}
INDEX_CASES = [
    "truncated",
    "item-count",
    "schema-99",
    "schema-0",
    "schema-text",
    "other-spec",
    "not-a-manifest",
    "empty-file",
]
FILE_CASES = [case for case in CASES if case not in INDEX_CASES]


def test_verify_passes_a_good_manifest(project: Path) -> None:
    code, output = run_fresh(project, "verify")
    assert code == 0, output
    # ids, question (counts + 5-grams, windows), and the derived views:
    # question~numbers-v1 (no windows), question~words-v2 (its features in a window file)
    assert "OK" in output and "1 set(s)" in output and "6 files" in output


@pytest.mark.parametrize("case", list(CASES))
def test_verify_fails_with_the_file_and_the_fix(project: Path, case: str) -> None:
    damage, phrases = CASES[case]
    damage(project / MANIFEST)
    code, output = run("verify")
    assert code == 2, output
    assert ".contam-guard/" in output
    for phrase in phrases:
        assert phrase in output, (phrase, output)
    assert "internal error" not in output


@pytest.mark.parametrize(
    "case", ["truncated", "schema-99", "schema-0", "other-spec", "view-byte", "view-cut"]
)
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
# Which commands read which damaged file: every command reads the index; a scan reads every
# file it matches with (the ids for its findings); ``sets`` reads the counts, not the windows or
# ids; registering another set checks that the files it keeps are intact; removing a set reads
# nothing of it (so a damaged set can be removed), and re-registering a set writes its files anew.
REFUSED = [(c, k) for c in ("scan", "register-same", "register-new", "sets", "remove") for k in INDEX_CASES]
REFUSED += [("scan", k) for k in FILE_CASES]
REFUSED += [("register-new", k) for k in FILE_CASES]
REFUSED += [("sets", k) for k in ("view-byte", "view-cut", "view-missing", "view-lfs-pointer")]
REFUSED += [
    (c, k) for c in ("register-same", "remove") for k in ("view-cut", "view-missing", "view-lfs-pointer")
]


@pytest.mark.parametrize(("command", "case"), REFUSED, ids=[f"{c}-{k}" for c, k in REFUSED])
def test_every_command_refuses_a_bad_manifest_and_leaves_it(project: Path, command: str, case: str) -> None:
    damage, phrases = CASES[case]
    damage(project / MANIFEST)
    before = snapshot(project)
    code, output = run(*COMMANDS[command])
    assert code == 2, output
    assert phrases[0] in output
    assert "internal error" not in output
    assert snapshot(project) == before


def snapshot(project: Path) -> dict[str, bytes]:
    guard = project / ".contam-guard"
    return {p.relative_to(guard).as_posix(): p.read_bytes() for p in sorted(guard.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", ["view-byte", "windows-byte", "ids-byte"])
def test_registering_the_set_again_repairs_its_files(project: Path, case: str) -> None:
    """A flipped byte: re-registering the set from its golden files writes them anew (the fix
    the message gives), and the manifest is as it was."""
    good = snapshot(project)
    CASES[case][0](project / MANIFEST)
    code, output = run(*COMMANDS["register-same"])
    assert code == 0 and "unchanged" in output, output
    assert snapshot(project) == good
    assert run("verify")[0] == 0


def test_a_damaged_set_can_be_removed(project: Path) -> None:
    in_set("q.bin", flip_a_byte)(project / MANIFEST)
    code, output = run("remove", "hb")
    assert code == 0, output
    assert not (project / ".contam-guard/sets/hb").exists()
    assert run("verify")[0] == 0


def rewrite_file(
    name: str, change: Callable[[dict[str, Any], dict[str, Any]], None]
) -> Callable[[Path], None]:
    """Rewrite the set file ``name`` (its header and arrays edited by ``change``), and record its
    new size and digest in the index, resealed: only the inner checks can tell."""

    def apply(index: Path) -> None:
        path = set_file(index.parent / "sets" / "hb", name)
        data = path.read_bytes()
        header = binfile.header_of(data, name)
        arrays = {
            k: (v["dtype"], a.copy())
            for (k, a), v in zip(
                sorted(binfile.arrays_of(data, header, name).items()),
                (header["arrays"][k] for k in sorted(header["arrays"])),
            )
        }
        meta = {k: v for k, v in header.items() if k != "arrays"}
        change(meta, arrays)
        blob = binfile.encode(meta, arrays)
        path.write_bytes(blob)
        rel = f"sets/hb/{path.name}"
        digest = file_digest(lambda size, offset: blob[offset : offset + size], len(blob))
        reseal(lambda d: d["sets"]["hb"]["data"][rel].update(bytes=len(blob), digest=digest))(index)

    return apply


def drop_words(meta: dict[str, Any], arrays: dict[str, Any]) -> None:
    dtype, words = arrays["words"]
    arrays["words"] = (dtype, words[:-1])


def short_grams(meta: dict[str, Any], arrays: dict[str, Any]) -> None:
    dtype, remainders = arrays["grams.remainders"]
    arrays["grams.remainders"] = (dtype, remainders[:-2])


def more_grams(meta: dict[str, Any], arrays: dict[str, Any]) -> None:
    meta["grams"]["count"] += 1


def wrong_digest(meta: dict[str, Any], arrays: dict[str, Any]) -> None:
    meta["digest"] = "0" * 32


RESEALED = {
    "files-items": (reseal(lambda d: d["sets"]["hb"]["files"][0].update(items=3)), "do not add up"),
    "data-bytes": (
        reseal(lambda d: d["sets"]["hb"]["data"][d["sets"]["hb"]["views"]["q"]["file"]].update(bytes=99)),
        "the manifest's index says 99",
    ),
    "no-windows": (
        reseal(lambda d: d["sets"]["hb"]["views"]["q"].update(windows=None)),
        "do not match its rules",
    ),
    "short-words": (rewrite_file("q.bin", drop_words), "counts do not match"),
    "short-grams": (rewrite_file("q.bin", short_grams), "grams"),
    "grams-count": (rewrite_file("q.bin", more_grams), "grams table"),
    "header-digest": (rewrite_file("q.bin", wrong_digest), "do not hold what its index names"),
}


@pytest.mark.parametrize("case", list(RESEALED))
@pytest.mark.parametrize("command", ["verify", "scan", "sets", "register-new"])
def test_files_of_the_wrong_size_are_refused_even_behind_valid_digests(
    project: Path, case: str, command: str
) -> None:
    """Edited, every digest recomputed: no command may crash (exit 3) on it."""
    damage, phrase = RESEALED[case]
    damage(project / MANIFEST)
    code, output = run(*COMMANDS.get(command, [command]))
    assert code == 2, output
    assert ".contam-guard/" in output and "git checkout" in output
    assert phrase in output, (phrase, output)
    assert "internal error" not in output


def swap_two_grams(meta: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Two 5-grams of different hashes trade places in the item order: the table is still a
    valid one (sorted, each 5-gram once), of other items."""
    shape = Shape(**{k: meta["grams"][k] for k in ("count", "bucket_bits", "payload_bits")})
    parts = {part: arrays[f"grams.{part}"][1] for part in ("units", "groups", "remainders", "payloads")}
    hashes = PackedTable(shape, **parts).all_hashes
    counts = {h: n for h, n in zip(*np.unique(hashes, return_counts=True))}
    single = [entry for entry, h in enumerate(hashes.tolist()) if counts[h] == 1]
    values = unpack(parts["payloads"], shape.payload_bits, np.arange(shape.count))
    values[[single[0], single[-1]]] = values[[single[-1], single[0]]]
    arrays["grams.payloads"] = ("<u8", pack(values, shape.payload_bits))


@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        (rewrite_file("q.bin", swap_two_grams), "view 'q': its tables do not hold what its index records"),
        (reseal(lambda d: d["sets"]["hb"].update(digest="0" * 32)), "disagree on digest"),
        (reseal(lambda d: d["sets"]["hb"]["history"][-1].update(digest="0" * 32)), "disagree on history"),
    ],
    ids=["hash", "set-digest", "history"],
)
def test_verify_checks_the_digests_behind_a_valid_outer_digest(
    project: Path, change: Callable[[Path], None], phrase: str
) -> None:
    change(project / MANIFEST)
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
    good = snapshot(project)
    reseal(other_spec)(project / MANIFEST)
    (project / MANIFEST).rename(project / "manifest.bad")
    assert run("init")[0] == 0
    assert run("register", "hb", "g.jsonl", "--field", "q", "--id-field", "id")[0] == 0
    assert snapshot(project) == good


@pytest.mark.parametrize("case", ["windows-byte", "view-byte"])
def test_a_scan_reads_only_the_files_its_rules_use(project: Path, case: str) -> None:
    """GPT-3's rule reads no window: a damaged window file does not stop `scan --only gpt3` (the
    file is never read), while the 5-gram file it needs is checked when first read."""
    CASES[case][0](project / MANIFEST)
    code, output = run("scan", "train.jsonl", "--only", "gpt3")
    if case == "windows-byte":
        assert code == 1, output  # the leak is found; the damaged file was never read
        assert "q.windows." not in output
        assert run("scan", "train.jsonl")[0] == 2  # with GPT-4's rule it is read, and refused
    else:
        assert code == 2 and "hb/q." in output and "digest is not the one" in output, output
