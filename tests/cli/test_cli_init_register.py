"""``init``, ``register``, ``sets`` and ``remove`` driven through the real CLI (in process)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from contam_guard.cli import main
from contam_guard.core.config import Config, load_config
from contam_guard.io.manifest.names import stem_of
from tests.helpers import load_manifest

CONFIG_REL = ".contam-guard/contam-guard.yaml"


def parse_sets(stdout: str) -> list[dict[str, str]]:
    """Rows of the ``sets`` table: cells between the box-drawing bars."""
    lines = [line for line in stdout.splitlines() if line.startswith(("┃", "│"))]
    header = [cell.strip() for cell in lines[0].strip("┃").split("┃")]
    return [dict(zip(header, (c.strip() for c in line.strip("│").split("│")))) for line in lines[1:]]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / ".contam-guard").iterdir())}


# --- init -----------------------------------------------------------------------------------


def test_init_writes_commented_yaml_that_loads_to_the_defaults(cli: Any, tmp_path: Path) -> None:
    result = cli("init")
    assert result.code == 0, result.output
    text = (tmp_path / CONFIG_REL).read_text(encoding="utf-8")
    assert sum(line.lstrip().startswith("#") for line in text.splitlines()) >= 5
    assert isinstance(yaml.safe_load(text), dict)
    loaded = load_config(start=tmp_path)
    assert loaded.source == tmp_path / CONFIG_REL
    assert loaded.config == Config()
    manifest = json.loads((tmp_path / ".contam-guard/manifest.json").read_text())
    assert manifest["sets"] == {}
    assert manifest["format"] == "contam-guard-manifest"
    assert manifest["key_check"] is None


def test_init_twice_leaves_both_files_byte_identical(cli: Any, tmp_path: Path) -> None:
    assert cli("init").code == 0
    before = snapshot(tmp_path)
    mtimes = {p.name: p.stat().st_mtime_ns for p in (tmp_path / ".contam-guard").iterdir()}
    second = cli("init")
    assert second.code == 0
    assert "unchanged" in second.out
    assert snapshot(tmp_path) == before
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / ".contam-guard").iterdir()} == mtimes


def test_init_into_a_named_folder(cli: Any, tmp_path: Path) -> None:
    assert cli("init", "proj").code == 0
    assert (tmp_path / "proj" / CONFIG_REL).is_file()
    assert (tmp_path / "proj/.contam-guard/manifest.json").is_file()


# --- register -------------------------------------------------------------------------------


def test_register_records_version_one(registered: Any) -> None:
    golden = registered.manifest_json()["sets"]["bench"]
    assert golden["version"] == 1
    assert stem_of(golden["ids"]) == "sets/bench/_ids.bin"
    assert list(load_manifest(registered.manifest).sets["bench"].ids) == [
        item["id"] for item in registered.items
    ]
    assert golden["files"] == [{"items": 5, "path": "golden/bench.jsonl"}]
    assert [h["version"] for h in golden["history"]] == [1]
    assert golden["history"][0]["digest"] == golden["digest"]
    # with the rewording rules' derived views
    assert set(golden["views"]) == {"question", "question~numbers-v1", "question~words-v2"}
    assert registered.cli("verify").code == 0


def test_reregistering_unchanged_content_changes_no_byte(registered: Any) -> None:
    files = [
        p for p in registered.manifest.parent.rglob("*") if p.is_file() and p.suffix in (".json", ".bin")
    ]
    # the index, the ids, the counts and 5-grams, the windows; the derived views:
    # question~numbers-v1, question~words-v2 and its window file
    assert len(files) == 7
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
    again = registered.register()
    assert again.code == 0, again.output
    assert "unchanged" in again.out
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files} == before


def test_punctuation_edits_keep_the_version(registered: Any) -> None:
    """Unchanged after normalisation (both views drop punctuation): no new version, no byte."""
    before = registered.manifest.read_bytes()
    edited = registered.items[1]["question"].replace(",", ";").replace("?", "?!").replace("honey", "'honey'")
    assert edited != registered.items[1]["question"]
    registered.items[1]["question"] = edited
    registered.golden.write_text("".join(json.dumps(i) + "\n" for i in registered.items))
    assert registered.register().code == 0
    assert registered.manifest.read_bytes() == before


def test_editing_one_item_makes_version_two(registered: Any) -> None:
    v1 = registered.manifest_json()["sets"]["bench"]
    v1_words = load_manifest(registered.manifest).sets["bench"].views["question"].word_counts.copy()
    registered.items[2]["question"] += " Assume the stall reopened at dusk."
    registered.golden.write_text("".join(json.dumps(i) + "\n" for i in registered.items))
    result = registered.register()
    assert result.code == 0, result.output
    assert "version 2" in result.out
    v2 = registered.manifest_json()["sets"]["bench"]
    assert v2["version"] == 2
    assert v2["digest"] != v1["digest"]
    assert v2["history"] == [
        {"version": 1, "digest": v1["digest"], "items": 5},
        {"version": 2, "digest": v2["digest"], "items": 5},
    ]
    assert v2["items"] == 5
    # the edited item's word count changed, and only its
    words = load_manifest(registered.manifest).sets["bench"].views["question"].word_counts
    assert [n for n, (a, b) in enumerate(zip(words.tolist(), v1_words.tolist())) if a != b] == [2]
    assert registered.cli("verify").code == 0


def test_adding_an_item_counts_it(registered: Any) -> None:
    registered.items.append({"id": "lx-06", "question": "How many owls nest in the old clocktower?"})
    registered.golden.write_text("".join(json.dumps(i) + "\n" for i in registered.items))
    assert registered.register().code == 0
    golden = registered.manifest_json()["sets"]["bench"]
    assert (golden["version"], golden["items"], golden["history"][-1]["items"]) == (2, 6, 6)
    assert golden["files"] == [{"items": 6, "path": "golden/bench.jsonl"}]


def test_two_fields_make_two_views(project: Any) -> None:
    result = project.register("question", "answer")
    assert result.code == 0, result.output
    views = project.manifest_json()["sets"]["bench"]["views"]
    assert {name for name in views if "~" not in name} == {"question", "answer"}  # "~": derived
    assert {name: v["field"] for name, v in views.items() if "~" not in name} == {
        "question": "question",
        "answer": "answer",
    }
    loaded = load_manifest(project.manifest).sets["bench"].views
    assert set(loaded["question"].gram_hashes.tolist()) != set(loaded["answer"].gram_hashes.tolist())
    assert (stem_of(views["question"]["file"]), stem_of(views["answer"]["file"])) == (
        "sets/bench/question.bin",
        "sets/bench/answer.bin",
    )


def test_two_files_are_one_set_with_both_files(project: Any, tmp_path: Path) -> None:
    second = tmp_path / "golden" / "extra.jsonl"
    second.write_text(json.dumps({"id": "ex-1", "question": "How many wagons crossed the bridge?"}) + "\n")
    result = project.cli(
        "register",
        "bench",
        "golden/bench.jsonl",
        "golden/extra.jsonl",
        "--field",
        "question",
        "--id-field",
        "id",
    )
    assert result.code == 0, result.output
    golden = project.manifest_json()["sets"]["bench"]
    assert golden["files"] == [
        {"items": 5, "path": "golden/bench.jsonl"},
        {"items": 1, "path": "golden/extra.jsonl"},
    ]
    assert load_manifest(project.manifest).sets["bench"].ids[-1] == "ex-1"
    assert golden["history"][-1]["items"] == 6


def test_a_field_missing_from_the_golden_file_is_an_input_error(project: Any) -> None:
    result = project.register("rationale")
    assert result.code == 2
    assert "golden/bench.jsonl" in result.err
    assert "Traceback" not in result.output
    assert project.manifest_json()["sets"] == {}


@pytest.mark.parametrize("name", ["", "  ", " bench", "bench "])
def test_a_blank_or_padded_set_name_is_refused(project: Any, name: str) -> None:
    result = project.cli("register", name, "golden/bench.jsonl", "--field", "question")
    assert result.code == 2
    assert "set name" in result.err
    assert project.manifest_json()["sets"] == {}


def test_register_a_missing_file_exits_2(project: Any) -> None:
    result = project.cli("register", "bench", "golden/nope.jsonl", "--field", "question")
    assert result.code == 2
    assert "golden/nope.jsonl" in result.err


def test_duplicate_ids_are_an_error_naming_both_places(project: Any) -> None:
    project.items[3]["id"] = "lx-01"
    project.golden.write_text("".join(json.dumps(i) + "\n" for i in project.items))
    result = project.register()
    assert result.code == 2
    assert "lx-01" not in result.err  # an id may be test text: it is never shown
    assert "golden/bench.jsonl:1" in result.err and "golden/bench.jsonl:4" in result.err


# --- sets and remove --------------------------------------------------------------------------


def test_sets_lists_name_version_and_items(project: Any, tmp_path: Path) -> None:
    assert project.register("question", "answer").code == 0
    other = tmp_path / "golden" / "small.jsonl"
    other.write_text("".join(json.dumps({"q": f"How many pebbles are in jar {n}?"}) + "\n" for n in range(3)))
    assert project.cli("register", "small", "golden/small.jsonl", "--field", "q").code == 0
    project.items[0]["question"] += " Count the spare wick too."
    project.golden.write_text("".join(json.dumps(i) + "\n" for i in project.items))
    assert project.register("question", "answer").code == 0

    result = project.cli("sets")
    assert result.code == 0, result.output
    rows = parse_sets(result.out)
    got = sorted((r["set"], r["version"], r["items"], r["view"]) for r in rows)
    assert got == [
        ("bench", "2", "5", "answer"),
        ("bench", "2", "5", "question"),
        ("small", "1", "3", "q"),
    ]
    small = next(r for r in rows if r["set"] == "small")
    assert small["too short: gpt3"] == "3 (N=8)"  # 7-word items: N auto is GPT-3's floor of 8
    assert small["whole"] == "0"  # a copy of a whole 7-word item fails all the same


def test_sets_on_an_empty_manifest_says_so(project: Any) -> None:
    result = project.cli("sets")
    assert result.code == 0
    assert "No sets registered" in result.out


def test_remove_drops_the_set(registered: Any) -> None:
    result = registered.cli("remove", "bench")
    assert result.code == 0, result.output
    assert registered.manifest_json()["sets"] == {}
    assert registered.cli("verify").code == 0


def test_removing_an_unknown_set_exits_2_and_lists_the_known_ones(registered: Any, tmp_path: Path) -> None:
    other = tmp_path / "golden" / "small.jsonl"
    other.write_text(json.dumps({"q": "How many pebbles are in the jar?"}) + "\n")
    assert registered.cli("register", "small", "golden/small.jsonl", "--field", "q").code == 0
    before = registered.manifest.read_bytes()
    result = registered.cli("remove", "bnech")
    assert result.code == 2
    assert "'bnech'" in result.err
    assert "bench, small" in result.err
    assert "Traceback" not in result.output
    assert registered.manifest.read_bytes() == before


def test_init_keeps_lock_and_temporaries_out_of_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    with pytest.raises(SystemExit):
        main(["init", str(tmp_path)])
    guard = tmp_path / ".contam-guard"
    (guard / "manifest.json.lock").write_text("")
    (guard / ".manifest.json.abc.tmp").write_text("")
    status = subprocess.run(
        ["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "manifest.json\n" in status and ".lock" not in status and ".tmp" not in status
