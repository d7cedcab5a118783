"""``contam-guard scrub`` end to end: outputs, the log, modes, formats, errors and exit codes.

The leaky record holds 20 words of golden question ``q-amber`` (no punctuation at either end, so
the collision span is exactly the phrase) between two 540-character fillers: the 200-character
windows leave a piece of about 340 characters on each side.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
import zstandard

from contam_guard.io.readers.fields import strings_in

WINDOW = 200


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


@pytest.fixture
def train(project: Path, kit: Any) -> dict[str, Any]:
    """A JSONL file: clean, leaky (two pieces survive), blank line, leaky chat, clean non-ASCII.

    Hand-formatted lines (odd spacing, raw UTF-8) would change if they were re-serialised.
    """
    leak_text = kit.leaky(0, 0, 20, kit.filler * 2, kit.filler * 2)
    chat = {"id": "r2", "messages": [{"role": "user", "content": kit.leaky(1, 5, 15)}]}
    raw = [
        b'{"id":"r0",   "text": "' + kit.filler.encode() + b'"}\n',
        (json.dumps({"id": "r1", "text": leak_text}) + "\n").encode(),
        b"   \n",
        (json.dumps(chat) + "\n").encode(),
        ('{"id": "r3", "text": "\u00fcn\u00efc\u00f6d\u00e9 ' + kit.filler + '"}\n').encode(),
    ]
    path = project / "train.jsonl"
    path.write_bytes(b"".join(raw))
    start = leak_text.index(kit.phrase(0, 0, 20))
    return {"path": path, "raw": raw, "leak": leak_text, "span": (start, start + len(kit.phrase(0, 0, 20)))}


def test_pieces_and_drop_by_shape_with_an_exact_log(cli: Any, train: dict[str, Any], kit: Any) -> None:
    before = sha(train["path"])
    result = cli("scrub", "train.jsonl", "--output", "out.jsonl", "--log", "removed.jsonl")
    assert result.code == 0, result.output
    assert sha(train["path"]) == before  # the input is never modified

    out = lines(Path("out.jsonl"))
    raw = train["raw"]
    s, e = train["span"]
    text = train["leak"]
    cut = [(0, s - WINDOW), (e + WINDOW, len(text))]
    assert out[0] == raw[0] and out[3] == raw[2] and out[4] == raw[4]  # byte for byte, blank line kept
    assert len(out) == 5  # r1 became two pieces, the chat record r2 was dropped
    for line, (a, b) in zip(out[1:3], cut):
        piece = json.loads(line)
        assert piece["text"] == text[a:b] and len(piece["text"]) >= 200
        assert piece["contam_guard_piece"] == {"source_record": 1, "id": "r1", "start": a, "end": b}

    log = [json.loads(x) for x in Path("removed.jsonl").read_text().splitlines()]
    match = [{"set": "gold", "view": "question", "item": "q-amber"}]
    assert log[0] == {
        "source": "train.jsonl",
        "record": 1,
        "line": 2,
        "id": "r1",
        "mode": "pieces",
        "chars": len(text),
        "removed": [
            {
                "start": s - WINDOW,
                "end": e + WINDOW,
                "reason": "window",
                "round": 1,
                "matches": match,
                "ngrams": [[s, e]],
            }
        ],
        "kept": [list(c) for c in cut],
    }
    assert (log[1]["record"], log[1]["line"], log[1]["mode"]) == (2, 4, "drop")
    assert [(r["start"], r["reason"]) for r in log[1]["removed"]] == [(0, "drop mode")]
    assert log[1]["removed"][0]["matches"] == [{"set": "gold", "view": "question", "item": "q-birch"}]

    # No golden text on the console or in the log (ids and offsets only).
    for distinctive in ("lighthouse", "apprentice", "clockmaker", "pendulum"):
        assert distinctive not in result.output and distinctive not in Path("removed.jsonl").read_text()
    summary = result.out.strip().splitlines()[-1]
    assert "4 records read" in summary and "2 touched" in summary and "1 dropped" in summary
    assert "2 pieces written" in summary and "MB/s" in summary
    # A record dropped whole loses every string read from it (keys too), joined by newlines.
    dropped = len("\n".join(segment.text for segment in strings_in(json.loads(raw[3]))))
    assert f"{e - s + 2 * WINDOW + dropped:,} characters removed" in summary

    # The scrubbed file passes the GPT-3 rule at 13 words; the input does not.
    assert cli("scan", "train.jsonl", "--only", "gpt3", "--n", "13").code == 1
    assert cli("scan", "out.jsonl", "--only", "gpt3", "--n", "13").code == 0


def test_scrubbing_twice_changes_nothing(cli: Any, train: dict[str, Any]) -> None:
    assert cli("scrub", "train.jsonl", "-o", "once.jsonl").code == 0
    assert cli("scrub", "once.jsonl", "-o", "twice.jsonl", "--log", "log2.jsonl").code == 0
    assert Path("twice.jsonl").read_bytes() == Path("once.jsonl").read_bytes()
    assert Path("log2.jsonl").read_bytes() == b""


def test_drop_mode_drops_every_touched_record(cli: Any, train: dict[str, Any]) -> None:
    result = cli("scrub", "train.jsonl", "-o", "out.jsonl", "--mode", "drop", "--log", "log.jsonl")
    assert result.code == 0, result.output
    raw = train["raw"]
    assert lines(Path("out.jsonl")) == [raw[0], raw[2], raw[4]]
    reasons = [r["removed"][0]["reason"] for r in map(json.loads, Path("log.jsonl").read_text().splitlines())]
    assert reasons == ["drop mode", "drop mode"]


def test_text_files_are_cut_into_paragraphs(project: Path, cli: Any, kit: Any) -> None:
    """A plain-text record is a paragraph: the window is cut out of its text, line breaks and
    all; its pieces keep their line breaks and become paragraphs of their own; the file's other
    lines are copied byte for byte."""
    leak_text = kit.leaky(1, 0, 14, kit.filler * 2, kit.filler * 2)
    paragraph = f"{kit.filler}\n{leak_text}"
    Path("notes.txt").write_text(f"{paragraph}\r\n\n{kit.filler}", encoding="utf-8")
    assert cli("scrub", "notes.txt", "-o", "clean.txt", "--log", "log.jsonl").code == 0
    s = paragraph.index(kit.phrase(1, 0, 14))
    e = s + len(kit.phrase(1, 0, 14))
    pieces = f"{paragraph[: s - WINDOW]}\r\n\r\n{paragraph[e + WINDOW :]}\r\n"
    assert Path("clean.txt").read_bytes() == f"{pieces}\n{kit.filler}".encode()
    (entry,) = map(json.loads, Path("log.jsonl").read_text().splitlines())
    assert (entry["record"], entry["line"], entry["chars"]) == (0, 1, len(paragraph))
    # Scrubbing the output again changes nothing: its pieces are records of their own.
    assert cli("scrub", "clean.txt", "-o", "again.txt").code == 0
    assert Path("again.txt").read_bytes() == Path("clean.txt").read_bytes()


def test_a_question_wrapped_over_lines_is_cut_out(project: Path, cli: Any, kit: Any) -> None:
    """The leak wrapped at 40 columns (every line break inside the 13-word run): scan finds it
    on the line its run starts on, and scrub cuts the same span out of the paragraph, keeping the
    lines before and after the paragraph byte for byte."""
    leak_text = kit.leaky(1, 0, 14, kit.filler * 2, kit.filler * 2)
    wrapped = "\n".join(textwrap.wrap(leak_text, 40))
    before, after = f"{kit.filler}\r\n\r\n", f"\n\n{kit.filler}\n"
    Path("wrapped.txt").write_text(before + wrapped + after, encoding="utf-8")
    scan = cli("scan", "wrapped.txt", "--pairs-csv", "pairs.csv")
    assert scan.code == 1, scan.output
    run_line = 3 + wrapped[: wrapped.index(kit.phrase(1, 0, 14).split()[0] + " ")].count("\n")
    assert f"wrapped.txt:{run_line}" in scan.output
    assert cli("scrub", "wrapped.txt", "-o", "clean.txt").code == 0
    out = Path("clean.txt").read_bytes().decode()
    assert out.startswith(before) and out.endswith(after)
    assert kit.phrase(1, 0, 14) not in " ".join(out.split())
    assert cli("scan", "clean.txt").code == 0


def test_numbers_are_settings(project: Path, cli: Any, kit: Any) -> None:
    """A short leak (10 words) is found at --n 10; small windows and pieces keep more text."""
    leak_text = kit.leaky(0, 3, 10)
    kit.write_jsonl(Path("t.jsonl"), [{"text": leak_text}])
    assert cli("scrub", "t.jsonl", "-o", "a.jsonl", "--log", "a.log").code == 0
    assert Path("a.log").read_text() == ""  # 10 words < 13
    args = ["--n", "10", "--window", "5", "--min-piece-chars", "300", "--log", "b.log"]
    assert cli("scrub", "t.jsonl", "-o", "b.jsonl", *args).code == 0
    entry = json.loads(Path("b.log").read_text())
    s = leak_text.index(kit.phrase(0, 3, 10))
    e = s + len(kit.phrase(0, 3, 10))
    assert [(r["start"], r["end"], r["reason"]) for r in entry["removed"]] == [
        (0, s - 5, "short piece"),  # 270 characters < 300
        (s - 5, e + 5, "window"),
        (e + 5, len(leak_text), "short piece"),
    ]
    assert (
        cli("scrub", "t.jsonl", "-o", "c.jsonl", "--n", "10", "--max-pieces", "1", "--log", "c.log").code == 0
    )
    assert json.loads(Path("c.log").read_text())["removed"][0]["reason"] == "too many pieces"
    assert cli("scrub", "t.jsonl", "-o", "d.jsonl", "--n", "10", "--max-doc-freq", "1").code == 0


def test_the_document_frequency_rule_counts_across_files(project: Path, cli: Any, kit: Any) -> None:
    Path("in").mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        kit.write_jsonl(Path("in") / name, [{"text": kit.leaky(0, 0, 20)}])
    result = cli("scrub", "in/a.jsonl", "in/b.jsonl", "-o", "out", "--max-doc-freq", "1")
    assert result.code == 0, result.output
    assert "left alone" in result.out  # each 13-gram is in 2 records > 1: common, kept
    for name in ("a.jsonl", "b.jsonl"):
        assert (Path("out") / name).read_bytes() == (Path("in") / name).read_bytes()
    result = cli("scrub", "in/a.jsonl", "in/b.jsonl", "-o", "out2", "--max-doc-freq", "2")
    assert "2 touched" in result.out


def test_dry_run_writes_nothing(cli: Any, train: dict[str, Any], project: Path) -> None:
    before = tree(project)
    result = cli("scrub", "train.jsonl", "-o", "out.jsonl", "--log", "log.jsonl", "--dry-run")
    assert result.code == 0, result.output
    assert tree(project) == before
    assert "Dry run, nothing written" in result.out
    assert "set gold, view question: 2 record(s) touched" in result.out
    assert "window: 1 record(s)" in result.out and "drop mode: 1 record(s)" in result.out


def test_in_place_replaces_the_input_atomically(cli: Any, train: dict[str, Any], project: Path) -> None:
    assert cli("scrub", "train.jsonl", "-o", "expected.jsonl").code == 0
    path = train["path"]
    os.chmod(path, 0o640)
    inode = path.stat().st_ino
    assert cli("scrub", "train.jsonl", "--in-place").code == 0
    assert path.read_bytes() == Path("expected.jsonl").read_bytes()
    assert path.stat().st_ino != inode  # a new file renamed over the old, never rewritten in place
    assert path.stat().st_mode & 0o777 == 0o640
    assert not [p for p in project.iterdir() if p.name.endswith(".tmp")]


def test_gzip_and_zstd_outputs_hold_the_same_records(cli: Any, train: dict[str, Any]) -> None:
    assert cli("scrub", "train.jsonl", "-o", "plain.jsonl").code == 0
    Path("train.jsonl.gz").write_bytes(gzip.compress(train["path"].read_bytes()))
    assert cli("scrub", "train.jsonl.gz", "-o", "out.jsonl.gz").code == 0
    assert gzip.decompress(Path("out.jsonl.gz").read_bytes()) == Path("plain.jsonl").read_bytes()
    assert cli("scrub", "train.jsonl.gz", "-o", "out.jsonl.zst").code == 0
    data = zstandard.ZstdDecompressor().stream_reader(Path("out.jsonl.zst").read_bytes()).read()
    assert data == Path("plain.jsonl").read_bytes()


def test_bom_line_endings_and_a_missing_final_newline_are_kept(project: Path, cli: Any, kit: Any) -> None:
    rows = [json.dumps({"text": kit.filler}), json.dumps({"text": kit.filler + " again"})]
    data = b"\xef\xbb\xbf" + rows[0].encode() + b"\r\n\r\n" + rows[1].encode()
    Path("t.jsonl").write_bytes(data)
    assert cli("scrub", "t.jsonl", "-o", "o.jsonl").code == 0
    assert Path("o.jsonl").read_bytes() == data


def test_nested_field_defaults_to_drop_and_can_be_cut(project: Path, cli: Any, kit: Any) -> None:
    text = kit.leaky(0, 0, 20, kit.filler * 2, kit.filler * 2)
    kit.write_jsonl(Path("t.jsonl"), [{"meta": {"body": text, "lang": "en"}, "n": 1}])
    assert cli("scrub", "t.jsonl", "-o", "drop.jsonl", "--field", "meta.body").code == 0
    assert Path("drop.jsonl").read_bytes() == b""
    assert cli("scrub", "t.jsonl", "-o", "cut.jsonl", "--field", "meta.body", "--mode", "pieces").code == 0
    pieces = [json.loads(x) for x in lines(Path("cut.jsonl"))]
    assert [p["meta"]["lang"] for p in pieces] == ["en", "en"]
    assert all(
        p["meta"]["body"] == text[p["contam_guard_piece"]["start"] : p["contam_guard_piece"]["end"]]
        for p in pieces
    )


def test_pieces_mode_refuses_chat_records(cli: Any, train: dict[str, Any]) -> None:
    result = cli("scrub", "train.jsonl", "-o", "out.jsonl", "--mode", "pieces")
    assert result.code == 2
    assert "train.jsonl:4" in result.err and "--mode drop" in result.err
    assert not Path("out.jsonl").exists()


def test_a_malformed_line_is_exit_2_naming_the_line_and_nothing_is_written(
    project: Path, cli: Any, kit: Any
) -> None:
    good = json.dumps({"text": kit.leaky(0, 0, 20)})
    Path("bad.jsonl").write_text(f"{good}\n{good}\n{{not json\n{good}\n", encoding="utf-8")
    before = tree(project)
    result = cli("scrub", "bad.jsonl", "-o", "out.jsonl", "--log", "log.jsonl")
    assert result.code == 2
    assert "bad.jsonl:3" in result.err and "invalid JSON" in result.err
    assert tree(project) == before


@pytest.mark.parametrize(
    ("name", "content", "reader"),
    [
        ("t.csv", "text\nhello\n", "pd.read_csv(f)"),
        ("t.tsv", "text\nhello\n", "pd.read_csv(f, sep='\\t')"),
        ("t.json", '[{"text": "hello"}]', "pd.read_json(f)"),
        ("t.parquet", "PAR1", "pd.read_parquet(f)"),
        ("t.xml", "<text>hello</text>", None),
    ],
)
def test_other_formats_are_refused_with_the_fix(
    project: Path, cli: Any, name: str, content: str, reader: str | None
) -> None:
    Path(name).write_text(content)
    result = cli("scrub", name, "-o", "out" + Path(name).suffix)
    assert result.code == 2
    assert "scrub supports JSONL and text files" in result.err and "convert it to JSONL" in result.err
    err = " ".join(result.err.split())  # the hint may wrap on a narrow console
    # The hint's pandas call reads this format (not read_csv for Parquet); none for an unknown type.
    readers = {"pd.read_csv(f)", "pd.read_csv(f, sep='\\t')", "pd.read_json(f)", "pd.read_parquet(f)"}
    assert [r for r in readers if r + ".to_json(out" in err] == ([reader] if reader else [])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["train.jsonl"], "--output FILE"),
        (["train.jsonl", "-o", "train.jsonl"], "would overwrite an input"),
        (["train.jsonl", "-o", "x.jsonl", "--in-place"], "either --output or --in-place"),
        (["train.jsonl", "./train.jsonl", "--in-place"], "the same input is given twice"),
        (["train.jsonl", "sub/train.jsonl", "-o", "dir"], "their outputs would collide"),
        (["sub", "-o", "dir"], "sub: is a folder; scrub takes files"),
        (["train.jsonl", "notes.txt", "-o", "file.txt"], "must be a folder"),
        (["train.jsonl", "-o", "x.jsonl", "--log", "train.jsonl"], "the log would overwrite"),
        (["train.jsonl", "-o", "x.jsonl", "--mode", "cut"], "--mode"),
        (["train.jsonl", "-o", "x.jsonl", "--n", "4"], "--n"),
        (["train.jsonl", "-o", "x.jsonl", "--max-pieces", "0"], "--max-pieces"),
        (["train.jsonl", "-o", "x.jsonl", "--mode", "pieces", "--field", "messages[].content"], "list field"),
        (["missing.jsonl", "-o", "x.jsonl"], "missing.jsonl: no such file"),
    ],
)
def test_usage_errors_are_exit_2(cli: Any, train: dict[str, Any], args: list[str], message: str) -> None:
    Path("notes.txt").write_text("hello\n")
    Path("file.txt").write_text("")
    Path("sub").mkdir()
    Path("sub/train.jsonl").write_bytes(Path("train.jsonl").read_bytes())
    result = cli("scrub", *args)
    assert result.code == 2, result.output
    assert message in result.err
    assert not Path("x.jsonl").exists() and not Path("dir").exists()


def test_a_keyed_manifest_needs_its_key(
    tmp_path: Path, cli: Any, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTAM_GUARD_KEY", "k" * 40)
    assert cli("init", "--keyed").code == 0
    kit.write_jsonl(Path("gold.jsonl"), kit.golden)
    assert cli("register", "gold", "gold.jsonl", "--field", "question", "--id-field", "id").code == 0
    kit.write_jsonl(Path("t.jsonl"), [{"text": kit.leaky(1, 0, 20)}])
    result = cli("scrub", "t.jsonl", "-o", "out.jsonl")
    assert result.code == 0 and "1 touched" in result.out
    monkeypatch.delenv("CONTAM_GUARD_KEY")
    result = cli("scrub", "t.jsonl", "-o", "out2.jsonl")
    assert result.code == 2 and "keyed" in result.err
    assert not Path("out2.jsonl").exists()


def test_config_file_settings_apply(project: Path, cli: Any, kit: Any) -> None:
    Path(".contam-guard/contam-guard.yaml").write_text("scrub:\n  mode: drop\n  n: 10\n")
    kit.write_jsonl(Path("t.jsonl"), [{"text": kit.leaky(0, 3, 10)}, {"text": kit.filler}])
    result = cli("scrub", "t.jsonl", "-o", "out.jsonl")
    assert result.code == 0 and "1 dropped" in result.out
    Path(".contam-guard/contam-guard.yaml").write_text("scrub:\n  windw: 5\n")
    result = cli("scrub", "t.jsonl", "-o", "out.jsonl")
    assert result.code == 2 and "did you mean 'scrub.window'" in result.err


def test_a_second_round_removes_what_the_first_left_rare(project: Path, cli: Any, kit: Any) -> None:
    """With --max-doc-freq 1, 13 words of q-birch in two records are common: left alone. But one
    copy sits inside the window around a leak of q-amber, so after round 1 only one record holds
    them: scrubbing the output again would remove them, so scrub does it now, as round 2."""
    common, rare = kit.phrase(1, 0, 13), kit.phrase(0, 0, 13)
    big = kit.filler * 2
    kit.write_jsonl(
        Path("t.jsonl"), [{"text": f"{big} {common} {rare} {big}"}, {"text": f"{big} {common} {big}"}]
    )
    result = cli("scrub", "t.jsonl", "-o", "out.jsonl", "--max-doc-freq", "1", "--log", "log.jsonl")
    assert result.code == 0 and "2 rounds" in result.out
    log = [json.loads(x) for x in Path("log.jsonl").read_text().splitlines()]
    assert [(e["record"], [(r["round"], r["matches"][0]["item"]) for r in e["removed"]]) for e in log] == [
        (0, [(1, "q-amber")]),
        (1, [(2, "q-birch")]),
    ]
    assert cli("scrub", "out.jsonl", "-o", "again.jsonl", "--max-doc-freq", "1").code == 0
    assert Path("again.jsonl").read_bytes() == Path("out.jsonl").read_bytes()
