"""The hostile tester's list: each input meant to break contam-guard ends in a clear
exit 2 (or the documented code), with a message naming the file and no traceback; never exit 3,
never a hang (every run has a timeout), never a changed file. One table; each row builds its
input in a fresh copy of a registered project and runs the real CLI in a subprocess.

Before this table's fixes (commit 10d5861) the rows marked "was 3" crashed with exit 3, the
FIFO and /dev/zero rows hung, and the key and count rows passed (exit 0 or 1)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from contam_guard.core.spec.hashing import digest
from contam_guard.io.manifest import binfile
from contam_guard.io.manifest.disk_files import file_digest

GOLDEN = [
    {
        "id": "g1",
        "question": "A farmer stacks 48 bales of hay into 6 equal piles; how many bales are in each pile",
    },
    {"id": "g2", "question": "Lena walks 3 miles every morning and 2 miles every evening, how far in a week"},
]
LEAK = GOLDEN[0]["question"]
KEY = "0123456789abcdef0123456789abcdef-hostile"
MANIFEST = Path(".contam-guard/manifest.json")
CONFIG = Path(".contam-guard/contam-guard.yaml")


def cli(root: Path, *args: str, env: dict[bytes, bytes] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "contam_guard", *args],
        cwd=root,
        check=False,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=120,  # a hang fails the row instead of the suite
        env=environment,
    )


def _project(root: Path, *, keyed: bool) -> Path:
    env = {b"CONTAM_GUARD_KEY": KEY.encode()} if keyed else None
    (root / "golden.jsonl").write_text("".join(json.dumps(g) + "\n" for g in GOLDEN))
    (root / "train.jsonl").write_text(
        json.dumps({"text": LEAK}) + "\n" + json.dumps({"text": "clean"}) + "\n"
    )
    assert cli(root, "init", *(["--keyed"] if keyed else []), env=env).returncode == 0
    done = cli(root, "register", "g", "golden.jsonl", "--field", "question", "--id-field", "id", env=env)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    return {keyed: _project(tmp_path_factory.mktemp(f"keyed{keyed}"), keyed=keyed) for keyed in (False, True)}


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], list[str]]
    """Returns the CLI arguments (called after ``setup``)."""
    code: int = 2
    says: tuple[str, ...] = ()
    """Phrases the output (stdout + stderr) must contain."""
    keyed: bool = False
    env: dict[bytes, bytes] = field(default_factory=dict)
    setup: Callable[[Path], object] = lambda root: None
    """Writes the hostile input into the project."""


def put(root: Path, name: str | Path, data: bytes) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_bytes(data)


def pyproject_instead(data: bytes) -> Callable[[Path], None]:
    """The settings move from contam-guard.yaml to pyproject.toml, which holds ``data``."""

    def setup(root: Path) -> None:
        (root / CONFIG).unlink()
        put(root, "pyproject.toml", data)

    return setup


def fifo(root: Path, name: str | Path) -> None:
    path = root / name
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def reseal(root: Path, change: Callable[[dict[str, Any], dict[str, Any]], None]) -> None:
    """Edit the arrays of set g's view file (``change`` gets its header and its arrays), then
    record the file's new size and digest in the index and recompute the index's digest, as an
    attacker or a careless script would: only the content checks can catch what ``change`` did.
    ``reseal_index`` edits the index alone."""
    raw = json.loads((root / MANIFEST).read_text())
    rel = raw["sets"]["g"]["views"]["question"]["file"]
    path = root / MANIFEST.parent / rel
    data = path.read_bytes()
    header = binfile.header_of(data, rel)
    arrays = {
        name: (header["arrays"][name]["dtype"], array.copy())
        for name, array in binfile.arrays_of(data, header, rel).items()
    }
    change({k: v for k, v in header.items() if k != "arrays"}, arrays)
    blob = binfile.encode({k: v for k, v in header.items() if k != "arrays"}, arrays)
    path.write_bytes(blob)
    described = {"bytes": len(blob), "digest": file_digest(lambda size, at: blob[at : at + size], len(blob))}
    reseal_index(root, lambda index: index["sets"]["g"]["data"].update({rel: described}))  # type: ignore[index]


def reseal_index(root: Path, change: Callable[[dict[str, object]], None]) -> None:
    """Edit the index of format 2 and recompute its digest (the binary files are left as they are)."""
    raw = json.loads((root / MANIFEST).read_text())
    change(raw)
    raw.pop("digest")
    raw["digest"] = digest(json.dumps(raw, sort_keys=True, separators=(",", ":")).encode())
    (root / MANIFEST).write_text(json.dumps(raw, sort_keys=True, indent=2) + "\n")


def negative_word_count(header: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Item 0 gets -7 words (stored in 64 bits, as a file may hold them) and item 1 takes its
    5-grams: every array size still adds up."""
    words = arrays["words"][1].astype(np.int64)
    words[1] += max(int(words[0]) - 4, 0)
    words[0] = -7
    arrays["words"] = ("<u8", words.astype(np.uint64))


def negative_file_items(raw: dict[str, object]) -> None:
    golden = raw["sets"]["g"]  # type: ignore[index]
    first = golden["files"][0]
    golden["files"] = [dict(first, items=3), dict(first, path="other.jsonl", items=-1)]


def negative_version(raw: dict[str, object]) -> None:
    golden = raw["sets"]["g"]  # type: ignore[index]
    golden["version"] = golden["history"][-1]["version"] = -1


def nested_manifest(root: Path) -> None:
    depth = 100_000
    text = '{"format": "contam-guard-manifest", "schema_version": 1, "x": ' + "[" * depth + "]" * depth + "}"
    put(root, MANIFEST, text.encode())


def huge_integer_manifest(root: Path, digits: int) -> None:
    text = (root / MANIFEST).read_text()
    put(root, MANIFEST, text.replace('"version": 1', f'"version": {"9" * digits}', 1).encode())


BAD_KEY = {b"CONTAM_GUARD_KEY": KEY.encode()[:32] + b"\xff\xfe-not-utf-8"}

CASES = [
    # -- settings (all were exit 3 or a hang) --
    Case(
        "Latin-1 byte in contam-guard.yaml (was 3)",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: put(r, CONFIG, b"rules: {gpt3: {n: 13}}  # caf\xe9\n"),
        says=("contam-guard.yaml:1", "not UTF-8", "0xe9"),
    ),
    Case(
        "Latin-1 byte in pyproject.toml (was 3)",
        lambda r: ["scan", "train.jsonl"],
        setup=pyproject_instead(b"[tool.contam-guard]\n# caf\xe9\n"),
        says=("pyproject.toml:2", "not UTF-8"),
    ),
    Case(
        "YAML nested 10,000 deep (was 3)",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: put(r, CONFIG, b"rules: " + b"[" * 10_000 + b"]" * 10_000 + b"\n"),
        says=("contam-guard.yaml:1", "nested more than"),
    ),
    Case(
        "YAML mappings nested 10,000 deep (was 3)",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: put(r, CONFIG, b"a: " + b"{b: " * 10_000 + b"1" + b"}" * 10_000 + b"\n"),
        says=("contam-guard.yaml", "nested more than"),
    ),
    Case(
        "TOML nested 10,000 deep (was 3)",
        lambda r: ["scan", "train.jsonl"],
        setup=pyproject_instead(b"[tool.contam-guard]\nx = " + b"[" * 10_000 + b"]" * 10_000 + b"\n"),
        says=("pyproject.toml", "nested too deeply"),
    ),
    Case(
        "n: 99999999999999999999999 in the config (was 3)",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: put(r, CONFIG, b"rules: {gpt3: {n: 99999999999999999999999}}\n"),
        says=("contam-guard.yaml", "rules.gpt3.n", "at most 1,000,000"),
    ),
    Case(
        "--n 99999999999999999999999 (was 3)",
        lambda r: ["scan", "train.jsonl", "--n", "9" * 23],
        says=("command line", "at most 1,000,000"),
    ),
    Case(
        "a huge scrub.window in the config (was 3)",
        lambda r: ["scrub", "train.jsonl", "-o", "out.jsonl"],
        setup=lambda r: put(r, CONFIG, b"scrub: {window: 99999999999999999999999}\n"),
        says=("scrub.window", "less than or equal"),
    ),
    Case(
        "a huge --window (was 3)",
        lambda r: ["scrub", "train.jsonl", "-o", "out.jsonl", "--window", "9" * 23],
        says=("--window",),
    ),
    Case(
        "a FIFO as --config (hung)",
        lambda r: ["scan", "train.jsonl", "--config", "c.yaml"],
        setup=lambda r: fifo(r, "c.yaml"),
        says=("c.yaml", "FIFO"),
    ),
    Case(
        "a FIFO where the config is found (hung)",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: fifo(r, CONFIG),
        says=("contam-guard.yaml", "not a regular file"),
    ),
    Case(
        "/dev/zero as --config (hung)",
        lambda r: ["scan", "train.jsonl", "--config", "/dev/zero"],
        says=("/dev/zero", "device"),
    ),
    # -- the manifest --
    Case(
        "a FIFO as the manifest (hung)",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: fifo(r, MANIFEST),
        says=("manifest.json", "FIFO"),
    ),
    Case(
        "a FIFO as the manifest, verify (hung)",
        lambda r: ["verify"],
        setup=lambda r: fifo(r, MANIFEST),
        says=("FIFO",),
    ),
    Case(
        "/dev/zero as --manifest (hung)",
        lambda r: ["scan", "train.jsonl", "--manifest", "/dev/zero"],
        says=("/dev/zero", "device"),
    ),
    Case("a folder as --manifest", lambda r: ["verify", "--manifest", "."], says=("a folder",)),
    Case(
        "a manifest nested 100,000 deep (was 3)",
        lambda r: ["scan", "train.jsonl"],
        setup=nested_manifest,
        says=("manifest.json", "nested too deeply"),
    ),
    Case(
        "a manifest holding a 5,000-digit integer (was 3)",
        lambda r: ["verify"],
        setup=lambda r: huge_integer_manifest(r, 5_000),
        says=("manifest.json", "4300 digits"),
    ),
    Case(
        "a manifest holding a 4,000-digit version",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: huge_integer_manifest(r, 4_000),
        says=("the manifest is malformed at sets.g.history.0.version", "less than or equal"),
    ),
    Case(
        "a Latin-1 byte in the manifest",
        lambda r: ["verify"],
        setup=lambda r: put(r, MANIFEST, b'{"format": "caf\xe9"}'),
        says=("manifest.json:1", "not UTF-8"),
    ),
    Case(
        "a negative word count, digests recomputed: verify (was 0)",
        lambda r: ["verify"],
        setup=lambda r: reseal(r, negative_word_count),
        says=("sets/g/question.", "negative"),
    ),
    Case(
        "a negative word count, digests recomputed: scan (was 3)",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: reseal(r, negative_word_count),
        says=("negative",),
    ),
    Case(
        "a negative file item count, digests recomputed: scan (was 0)",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: reseal_index(r, negative_file_items),
        says=("sets.g.files.1.items", "greater than or equal to 0"),
    ),
    Case(
        "a negative set version, digests recomputed: verify (was 1)",
        lambda r: ["verify"],
        setup=lambda r: reseal_index(r, negative_version),
        says=("sets.g.version",),
    ),
    Case(
        "a negative file item count, index digest recomputed: verify",
        lambda r: ["verify"],
        setup=lambda r: reseal_index(r, negative_file_items),
        says=("sets.g.files.1.items", "greater than or equal to 0"),
    ),
    Case(
        "a negative set version, index digest recomputed: scan",
        lambda r: ["scan", "train.jsonl"],
        setup=lambda r: reseal_index(r, negative_version),
        says=("sets.g.version",),
    ),
    # -- keys --
    Case(
        "verify with no key, keyed manifest (was 0)",
        lambda r: ["verify"],
        keyed=True,
        says=("$CONTAM_GUARD_KEY is not set",),
    ),
    Case(
        "verify with another key (was 0)",
        lambda r: ["verify"],
        keyed=True,
        env={b"CONTAM_GUARD_KEY": b"another-secret-of-forty-characters-00000"},
        says=("does not match",),
    ),
    Case(
        "verify with the key",
        lambda r: ["verify"],
        keyed=True,
        env={b"CONTAM_GUARD_KEY": KEY.encode()},
        code=0,
    ),
    Case(
        "a non-UTF-8 CONTAM_GUARD_KEY, scan (was 3)",
        lambda r: ["scan", "train.jsonl"],
        keyed=True,
        env=BAD_KEY,
        says=("not UTF-8",),
    ),
    Case(
        "a non-UTF-8 CONTAM_GUARD_KEY, verify (was 0)",
        lambda r: ["verify"],
        keyed=True,
        env=BAD_KEY,
        says=("not UTF-8",),
    ),
    Case(
        "a non-UTF-8 CONTAM_GUARD_KEY, init --keyed (was 3)",
        lambda r: ["init", "--keyed"],
        setup=lambda r: shutil.rmtree(r / ".contam-guard"),
        env=BAD_KEY,
        says=("CONTAM_GUARD_KEY", "not UTF-8"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(templates: dict[bool, Path], tmp_path: Path, case: Case) -> None:
    root = tmp_path / "project"
    shutil.copytree(templates[case.keyed], root)
    case.setup(root)
    args = case.build(root)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}
    done = cli(root, *args, env=case.env)
    output = done.stdout + done.stderr
    assert done.returncode == case.code, output
    assert "Traceback" not in output and "internal error" not in output
    for phrase in case.says:
        assert phrase in output, (phrase, output)
    after = {p: p.read_bytes() for p in before if p.exists()}
    assert [p.name for p in before if after.get(p) != before[p]] == []  # nothing was changed


def test_init_keyed_without_the_key_writes_nothing(tmp_path: Path) -> None:
    """Not a config and a .gitignore with no manifest (a half-initialised folder)."""
    for env in ({b"CONTAM_GUARD_KEY": b""}, {b"CONTAM_GUARD_KEY": b"too-short"}, BAD_KEY):
        done = cli(tmp_path, "init", "--keyed", env=env)
        assert done.returncode == 2, done.stderr
        assert list(tmp_path.iterdir()) == []
    done = cli(tmp_path, "init", "--keyed", env={b"CONTAM_GUARD_KEY": KEY.encode()})
    assert done.returncode == 0, done.stderr  # the positive control: the same command with the key
    assert sorted(p.name for p in (tmp_path / ".contam-guard").iterdir()) == [
        ".gitattributes",
        ".gitignore",
        "contam-guard.yaml",
        "manifest.json",
    ]


NAME = os.fsdecode(b"caf\xe9-\xff.jsonl")
"""A file name that is not UTF-8 (Latin-1 bytes): Python holds it with surrogate escapes."""
REPORTS = [
    ("--review", "r.md"),
    ("--review-json", "r.json"),
    ("--review-html", "r.html"),
    ("--items-csv", "items.csv"),
    ("--pairs-csv", "pairs.csv"),
    ("--sarif", "r.sarif"),
    ("--summary", "summary.md"),
    ("--format", "json"),
    ("--format", "sarif"),
    ("--format", "markdown"),
    ("--format", "github"),
]


@pytest.mark.parametrize(("option", "value"), REPORTS, ids=[f"{o} {v}" for o, v in REPORTS])
def test_a_non_utf8_file_name_in_every_report(
    templates: dict[bool, Path], tmp_path: Path, option: str, value: str
) -> None:
    """Was exit 3 (UnicodeEncodeError) for --review, --review-json, --review-html, --pairs-csv,
    --sarif, --summary and --format sarif: the name is written as backslash escapes (SARIF's URI
    percent-encodes its bytes), and the leak is still reported (exit 1)."""
    root = tmp_path / "project"
    shutil.copytree(templates[False], root)
    (root / "data").mkdir()
    (root / "train.jsonl").rename(root / "data" / NAME)
    done = cli(root, "scan", "data", option, value)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    written = done.stdout.encode() if option == "--format" else (root / value).read_bytes()
    written.decode("utf-8")  # valid UTF-8 throughout
    if option == "--items-csv":
        return  # one row per test item: no file names
    assert b"caf\\xe9-\\xff" in written or b"caf\\udce9-\\udcff" in written or b"caf%E9-%FF" in written
