"""Round 2 (and 3): a test item wrapped over lines or cut into pieces across strings.

The rules are defined over training *documents*; a guard that reads one line or one string at a
time never sees a run crossing a line break or a string boundary. Before this table's fixes the
rows below exited 0 (``was``): plain text was read one line per record, and each string of a
record on its own. Now a paragraph is a record (line breaks are word boundaries), a record's
value strings are read together as one document (``io.readers.documents``), ``--group-by`` makes
consecutive records one document, and each row fails (exit 1), naming the line the run starts
on and the fields it spans. Every row runs twice: with the compiled kernels (the prefilter reads
these small files, the manifest being small) and with the numpy ones (``CONTAM_GUARD_PURE=1``:
the exact path).

At 72 columns one line of ``LONG`` holds 13 of its words, so those two rows failed before too
(was 1; of GSM8K's 1,319 test questions, 45 passed the GPT-3 rule at 72 columns and all 1,319
at 40: ``benchmarks/split_items.py``): they check that a paragraph names the line its run starts
on. The sentence-per-record rows had no option before (``--group-by`` is new): ``was`` is what
the same file gave scanned as it was (records apart), exit 0.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam_guard.cli import main
from tests.helpers import GSM8K
from tests.security.hostile import CLEAN, LONG, SHORT, Row, copy_project, make_project, put, run_row

BEFORE = "Minutes of the harbour committee, read aloud at the start of the meeting."
"""Prose in the same paragraph before the leak: the run starts on a later line than the paragraph."""


def wrapped(width: int, *, prefix: str = "", first_line: int = 1) -> tuple[str, int]:
    """``BEFORE`` and ``LONG`` as one paragraph wrapped at ``width`` columns (each line after
    ``prefix``), and the file line the leak starts on when the paragraph starts on ``first_line``."""
    lines = textwrap.wrap(f"{BEFORE} {LONG}", width - len(prefix))
    text = "".join(f"{prefix}{line}\n" for line in lines)
    # The run starts at the leak's first word: the first line holding the word after BEFORE.
    before_words = len(BEFORE.split())
    seen = 0
    for number, line in enumerate(lines):
        seen += len(line.split())
        if seen > before_words:
            return text, first_line + number
    raise AssertionError("the leak is not in the wrapped text")


def pieces(text: str, size: int) -> list[str]:
    words = text.split()
    return [" ".join(words[k : k + size]) for k in range(0, len(words), size)]


TXT40, LINE40 = wrapped(40, first_line=3)
TXT60, LINE60 = wrapped(60, first_line=3)
MD72, LINE72 = wrapped(72, first_line=5)
QUOTED, LINE_QUOTED = wrapped(72, prefix="> ", first_line=3)
QUOTED40, LINE_QUOTED40 = wrapped(40, prefix="> ", first_line=3)
PIECES = pieces(LONG, 10)


def text_file(name: str, body: str) -> Row:
    def build(root: Path) -> list[str]:
        put(root, name, body)
        return ["scan", name]

    return Row(name, build, code=1, was=0)


def _whole_file(root: Path) -> list[str]:
    put(root, "whole.txt", f"{CLEAN}\n\n{TXT40}")
    return ["scan", "whole.txt", "--whole-file"]


def _bullets(root: Path) -> list[str]:
    lines = textwrap.wrap(LONG, 60)
    body = "- " + "\n  ".join(lines) + "\n- another item\n"
    put(root, "list.md", f"# Tasks\n\n{body}")
    return ["scan", "list.md"]


def _staged(root: Path) -> list[str]:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    put(root, "notes.txt", f"{CLEAN}\n")
    git("add", "-A")
    git("commit", "-qm", "notes")
    put(root, "notes.txt", f"{CLEAN}\n\n{TXT60}")
    git("add", "notes.txt")
    return ["scan", "--staged"]


def _jsonl(name: str, record: dict[str, object]) -> Row:
    def build(root: Path) -> list[str]:
        put(root, name, json.dumps(record) + "\n" + json.dumps({"text": CLEAN}) + "\n")
        return ["scan", name]

    return Row(name, build, code=1, was=0)


def _parquet(root: Path) -> list[str]:
    table = pa.table({"id": [1, 2], "sentences": pa.array([PIECES, [CLEAN]], pa.list_(pa.string()))})
    pq.write_table(table, root / "pieces.parquet")
    return ["scan", "pieces.parquet"]


def _csv(root: Path) -> list[str]:
    header = ",".join(f"c{k}" for k in range(len(PIECES)))
    put(root, "cells.csv", header + "\n" + ",".join(f'"{p}"' for p in PIECES) + "\n")
    return ["scan", "cells.csv"]


def _sentences(root: Path) -> list[str]:
    rows = [{"doc": 7, "text": CLEAN}] + [{"doc": 8, "text": p} for p in PIECES] + [{"doc": 9, "text": CLEAN}]
    put(root, "sentences.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return ["scan", "sentences.jsonl", "--group-by", "doc"]


def _sentences_jobs(root: Path) -> list[str]:
    return [*_sentences(root), "--jobs", "2"]


def _siblings_jobs(root: Path) -> list[str]:
    put(root, "siblings.jsonl", json.dumps({f"s{k}": p for k, p in enumerate(PIECES)}) + "\n")
    return ["scan", "siblings.jsonl", "--jobs", "2"]


LAST = len(PIECES) - 1
ROWS = [
    replace(text_file("wrapped40.txt", f"{CLEAN}\n\n{TXT40}"), says=(f"wrapped40.txt:{LINE40} ",)),
    replace(text_file("wrapped60.txt", f"{CLEAN}\n\n{TXT60}\n{CLEAN}\n"), says=(f"wrapped60.txt:{LINE60} ",)),
    replace(
        text_file("wrapped72.md", f"# Minutes\n\nOpening.\n\n{MD72}"),
        was=1,
        says=(f"wrapped72.md:{LINE72} ",),
    ),
    replace(
        text_file("quoted.md", f"Quoted below.\n\n{QUOTED}\n> \n> -- the chair\n"),
        was=1,
        says=(f"quoted.md:{LINE_QUOTED} ",),
    ),
    replace(
        text_file("quoted40.md", f"Quoted below.\n\n{QUOTED40}"), says=(f"quoted40.md:{LINE_QUOTED40} ",)
    ),
    Row("list item.md", _bullets, code=1, was=0, says=("list.md:3 ",)),
    # An 11-word item wrapped at 40 columns: whole, in one paragraph (the `whole` rule).
    text_file("short40.txt", f"{CLEAN}\n\nQuick one: " + "\n".join(textwrap.wrap(SHORT, 40)) + "?\n"),
    # --whole-file read the file as one record before too (was 1), but named its line 1.
    Row("--whole-file wrapped40.txt", _whole_file, code=1, was=1, says=(f"whole.txt:{LINE40} ",)),
    Row("--staged wrapped.txt", _staged, code=1, was=0, says=(f"notes.txt:{LINE60} ",)),
    replace(
        _jsonl("list.jsonl", {"id": 1, "sentences": PIECES}), says=(f"field sentences[0]..sentences[{LAST}]",)
    ),
    replace(
        _jsonl("siblings.jsonl", {f"s{k}": p for k, p in enumerate(PIECES)}), says=(f"field s0..s{LAST}",)
    ),
    Row("parquet list column", _parquet, code=1, was=0, says=(f"field sentences[0]..sentences[{LAST}]",)),
    Row("csv cells", _csv, code=1, was=0, says=(f"field c0..c{LAST}",)),
    Row(
        "sentence per record --group-by",
        _sentences,
        code=1,
        was=0,
        says=("sentences.jsonl:2 ", "field [1].text.."),
    ),
    Row("--group-by --jobs 2", _sentences_jobs, code=1, was=0, says=("sentences.jsonl:2 ",)),
    Row("siblings --jobs 2", _siblings_jobs, code=1, was=0, says=(f"field s0..s{LAST}",)),
]
KERNELS = {"compiled": {}, "numpy": {"CONTAM_GUARD_PURE": "1"}}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("documents") / "template")


@pytest.mark.parametrize("kernels", sorted(KERNELS))
@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_row(row: Row, kernels: str, template: Path, tmp_path: Path) -> None:
    run_row(replace(row, env={**row.env, **KERNELS[kernels]}), copy_project(template, tmp_path / "p"))


def test_records_stay_apart_without_group_by(template: Path, tmp_path: Path) -> None:
    """The control of the --group-by row: the same file scanned as it is finds nothing (a record
    is a document unless an option says otherwise), so the row can fail."""
    root = copy_project(template, tmp_path / "p")
    args = _sentences(root)[:2]
    done = run_row(Row("apart", lambda _: args, code=0, was=0), root)
    assert "FAIL" not in done.stdout


# ------------------------------------------------------------------ any item, any width


@pytest.fixture(scope="module")
def gsm8k_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (GSM8K / "test.jsonl").is_file():
        pytest.skip(f"GSM8K not found at {GSM8K}")
    root = tmp_path_factory.mktemp("gsm8k-wrapped")
    manifest = root / ".contam-guard" / "manifest.json"
    assert _main(["init", str(root)]) == 0
    assert (
        _main(
            [
                "register",
                "gsm8k",
                str(GSM8K / "test.jsonl"),
                "--field",
                "question",
                "--manifest",
                str(manifest),
            ]
        )
        == 0
    )
    return root


def _main(args: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(args)
    return int(done.value.code or 0)


def _questions() -> list[str]:
    if not (GSM8K / "test.jsonl").is_file():
        return ["(GSM8K missing: the test skips)"]
    with (GSM8K / "test.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line)["question"] for line in handle if line.strip()]


@pytest.mark.gsm8k
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    question=st.sampled_from(_questions()),
    width=st.integers(20, 120),
    quoted=st.booleans(),
    crlf=st.booleans(),
)
def test_any_gsm8k_question_wrapped_at_any_width_fails(
    gsm8k_project: Path, question: str, width: int, quoted: bool, crlf: bool
) -> None:
    """Property: a GSM8K test question wrapped at any width from 20 to 120 columns (plain, or
    as a quoted Markdown block; LF or CRLF), in a paragraph between other text, fails the scan."""
    prefix = "> " if quoted else ""
    lines = [prefix + line for line in textwrap.wrap(question, width - len(prefix))]
    ending = "\r\n" if crlf else "\n"
    body = f"{CLEAN}{ending}{ending}" + ending.join(lines) + ending + f"{ending}{CLEAN}{ending}"
    path = gsm8k_project / ("wrapped.md" if quoted else "wrapped.txt")
    path.write_bytes(body.encode("utf-8"))
    manifest = gsm8k_project / ".contam-guard" / "manifest.json"
    assert _main(["scan", str(path), "--manifest", str(manifest), "--only", "gpt3"]) == 1


def test_a_missing_group_by_field_is_exit_2_naming_the_line(template: Path, tmp_path: Path) -> None:
    """--group-by names a field every record must hold: a record without it is bad input (exit 2,
    the file and line named, no test text), never a record read on its own."""
    root = copy_project(template, tmp_path / "p")
    put(root, "s.jsonl", json.dumps({"doc": 1, "text": PIECES[0]}) + "\n" + json.dumps({"text": LONG}) + "\n")
    done = run_row(Row("no group", lambda _: ["scan", "s.jsonl", "--group-by", "doc"], code=2, was=2), root)
    assert "s.jsonl:2" in done.stderr and "--group-by field 'doc' not found" in done.stderr
    assert "lamplighter" not in done.stdout + done.stderr
