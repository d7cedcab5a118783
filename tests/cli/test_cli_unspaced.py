"""Chinese through the command line, on CMMLU: what spec v2 missed, the set's
own N, old manifests, upgrade, scrub's character window; and English unchanged (GSM8K).

Reads ../shared/data/cmmlu, ../shared/data/gsm8k and the Chinese seed text (never copied into
the project); skips with a reason where they are absent.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from contam_guard.core.rules import gpt3
from contam_guard.core.spec.normalise import alnum, words
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest, Spec
from tests.helpers import Runner

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CMMLU = SHARED / "data" / "cmmlu"
GSM8K = SHARED / "data" / "gsm8k"
SEED = SHARED / "seeds" / "002_72b300b4dbcfe553.txt"
pytestmark = pytest.mark.skipif(
    not (CMMLU / "test").is_dir() or not SEED.is_file(),
    reason=f"CMMLU or the seed text not found under {SHARED}",
)
MANIFEST = Path(".contam-guard/manifest.json")
V2_SPEC = Spec(words="words-v2", alnum="alnum-v2")
SUBJECT = "agronomy"  # one CSV of the 67: 169 questions


def _questions(subject: str = SUBJECT) -> list[str]:
    with (CMMLU / "test" / f"{subject}.csv").open(encoding="utf-8", newline="") as handle:
        return [row["Question"] for row in csv.DictReader(handle)]


def _prose() -> list[str]:
    return [line for line in SEED.read_text(encoding="utf-8").splitlines() if len(line) > 60]


def _project(cli: Runner, root: Path, spec: Spec | None = None) -> Path:
    assert cli("init", root).code == 0
    if spec is not None:
        store.save(root / MANIFEST, Manifest(spec=spec))
    return root / MANIFEST


def _register(
    cli: Runner, manifest: Path, *extra: str, golden: Path = CMMLU / "test" / f"{SUBJECT}.csv"
) -> None:
    result = cli("register", "cmmlu", golden, "--field", "Question", *extra, "--manifest", manifest)
    assert result.code == 0, result.output


def _planted(path: Path, texts: list[str]) -> Path:
    """Each text inside Chinese prose, no space on either side (as Chinese is written)."""
    prose = _prose()
    lines = [
        json.dumps({"text": prose[k % len(prose)] + text + prose[(k + 3) % len(prose)]}, ensure_ascii=False)
        for k, text in enumerate(texts)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _found(items_csv: Path, n: int) -> set[int]:
    with items_csv.open(encoding="utf-8") as handle:
        return {int(row["test_index"]) for row in csv.DictReader(handle) if int(row["longest_run"]) >= n}


def test_a_question_in_chinese_prose_was_invisible_under_v2_and_is_found_under_v3(
    cli: Runner, tmp_path: Path
) -> None:
    """The issue's measurement: under words-v2 the paragraph is one word, so no word rule can
    fire; under words-v3 every planted question of 10 characters or more fails the GPT-3 rule."""
    questions = _questions()
    train = _planted(tmp_path / "train.jsonl", questions)
    found = {}
    for label, spec in (("v2", V2_SPEC), ("v3", None)):
        manifest = _project(cli, tmp_path / label, spec)
        _register(cli, manifest)
        items = tmp_path / f"{label}.csv"
        result = cli("scan", train, "--only", "gpt3", "--items-csv", items, "--manifest", manifest)
        assert result.code == (0 if label == "v2" else 1), result.output
        found[label] = _found(items, 5)  # any run of 5 words at all
    long_enough = {k for k, q in enumerate(questions) if len(words(q)) >= gpt3.UNSPACED_N}
    assert found["v2"] == set()
    assert long_enough <= found["v3"] and len(long_enough) > 150


def _findings(report: Path) -> set[tuple[str, str]]:
    """(rule, item id) of every finding of a ``--format json`` report."""
    findings = json.loads(report.read_text(encoding="utf-8"))["findings"]
    return {(finding["rule"], finding["item_id"]) for finding in findings}


def test_every_rule_finds_planted_questions_under_v3_and_only_gpt4_did_under_v2(
    cli: Runner, tmp_path: Path
) -> None:
    """GPT-3, PaLM and Llama 2 count words, so they are blind under words-v2 and see under
    words-v3; GPT-4's character windows (alnum-v2, alnum-v3: the same on this text) found the
    same items under both."""
    long = [q for q in _questions() if len(words(q)) >= 20]
    assert len(long) > 20
    train = _planted(tmp_path / "train.jsonl", long)
    found = {}
    for label, spec in (("v2", V2_SPEC), ("v3", None)):
        manifest = _project(cli, tmp_path / label, spec)
        _register(cli, manifest)
        report = tmp_path / f"{label}.json"
        result = cli("scan", train, "--manifest", manifest, "--format", "json", "-o", report)
        assert result.code == (0 if label == "v2" else 1), result.output
        found[label] = _findings(report)
    ids = {str(_questions().index(q)) for q in long}
    windowed = {str(_questions().index(q)) for q in long if len(alnum(q)) >= 50}  # GPT-4 needs 50
    assert windowed
    rules = ("gpt3", "palm", "llama2", "gpt4")
    by_rule = {rule: {item for r, item in found["v3"] if r == rule} for rule in rules}
    missed = {rule: (windowed if rule == "gpt4" else ids) - items for rule, items in by_rule.items()}
    assert not any(missed.values()), missed
    # The rewording rules are left out: this is about the four n-gram rules.
    v2 = {(rule, item) for rule, item in found["v2"] if rule in rules}
    assert {rule for rule, _ in v2} == {"gpt4"}
    assert {item for _, item in v2} == by_rule["gpt4"]


def test_the_set_gets_n_10_and_a_set_of_its_own_n_keeps_it(cli: Runner, tmp_path: Path) -> None:
    manifest = _project(cli, tmp_path)
    result = cli("register", "cmmlu", CMMLU / "test" / f"{SUBJECT}.csv", "--field", "Question",
                 "--manifest", manifest)  # fmt: skip
    assert result.code == 0 and "N for this set is 10 words" in result.out
    assert store.load(manifest).sets["cmmlu"].n == gpt3.UNSPACED_N
    assert "(N=10)" in cli("sets", "--manifest", manifest).out
    # An 11-character fragment of a question: found at the set's 10, not at 13 or --n 15.
    question = next(q for q in _questions() if len(words(q)) >= 20)
    fragment = "".join(words(question))[:11]
    train = _planted(tmp_path / "train.jsonl", [fragment])
    scan = ("scan", train, "--only", "gpt3", "--manifest", manifest)
    assert cli(*scan).code == 1
    assert cli(*scan, "--n", "13").code == 1  # the set's own N wins over the rule's setting
    assert cli("register", "cmmlu", CMMLU / "test" / f"{SUBJECT}.csv", "--field", "Question", "--n", "15",
               "--manifest", manifest).code == 0  # fmt: skip
    assert store.load(manifest).sets["cmmlu"].n == 15
    assert store.load(manifest).sets["cmmlu"].version == 1  # N is not content
    assert cli(*scan).code == 0
    # Registered again without --n: the set keeps the N it was given.
    _register(cli, manifest)
    assert store.load(manifest).sets["cmmlu"].n == 15
    assert cli("register", "x", CMMLU / "test" / f"{SUBJECT}.csv", "--field", "Question", "--n", "4",
               "--manifest", manifest).code == 2  # fmt: skip


def test_an_english_set_has_no_n_of_its_own_and_keeps_its_bytes(cli: Runner, tmp_path: Path) -> None:
    if not (GSM8K / "test.jsonl").is_file():
        pytest.skip(f"GSM8K not found at {GSM8K}")
    manifest = _project(cli, tmp_path)
    assert (
        cli("register", "gsm8k", GSM8K / "test.jsonl", "--field", "question", "--manifest", manifest).code
        == 0
    )
    assert store.load(manifest).sets["gsm8k"].n is None
    assert '"n":' not in manifest.read_text(encoding="utf-8")


def test_a_v2_manifest_keeps_working_and_upgrade_converts_it(cli: Runner, tmp_path: Path) -> None:
    manifest = _project(cli, tmp_path, V2_SPEC)
    golden = tmp_path / "golden" / f"{SUBJECT}.csv"  # upgrade reads it again, inside the project
    golden.parent.mkdir()
    shutil.copyfile(CMMLU / "test" / f"{SUBJECT}.csv", golden)
    _register(cli, manifest, golden=golden)
    english = tmp_path / "english.jsonl"
    english.write_text(json.dumps({"q": "Plain ASCII text reads the same under every spec here."}) + "\n")
    assert cli("register", "english", english, "--field", "q", "--manifest", manifest).code == 0
    train = _planted(tmp_path / "train.jsonl", _questions()[:20])
    result = cli("scan", train, "--only", "gpt3", "--manifest", manifest)
    assert result.code == 0 and "contam-guard upgrade" in result.err  # v2: one word, and a notice
    assert store.load(manifest).sets["cmmlu"].n is None

    upgraded = cli("upgrade", "--manifest", manifest)
    assert upgraded.code == 0, upgraded.output
    assert "cmmlu: re-hashed under words-v4/alnum-v4 (version 1 -> 2; written without spaces" in upgraded.out
    assert "english: re-hashed under words-v4/alnum-v4 (hashes unchanged)" in upgraded.out
    after = store.load(manifest)
    assert after.spec.words == "words-v4" and after.sets["cmmlu"].n == gpt3.UNSPACED_N
    assert after.sets["english"].version == 1 and after.sets["english"].n is None
    assert cli("scan", train, "--only", "gpt3", "--manifest", manifest).code == 1


def test_scrub_cuts_200_characters_each_side_of_a_chinese_question(cli: Runner, tmp_path: Path) -> None:
    """The window stays in characters: 200 of them, not 200 words (a word is one character)."""
    manifest = _project(cli, tmp_path)
    _register(cli, manifest)
    question = next(q for q in _questions() if len(q) >= 30 and q == "".join(words(q)))
    prose = "".join(_prose())
    before, after = prose[:500], prose[-500:]
    train = tmp_path / "train.jsonl"
    train.write_text(json.dumps({"id": "d1", "text": before + question + after}, ensure_ascii=False) + "\n")
    out = tmp_path / "clean.jsonl"
    result = cli("scrub", train, "-o", out, "--n", "10", "--mode", "pieces", "--manifest", manifest)
    assert result.code == 0, result.output
    pieces = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    texts = [piece["text"] for piece in pieces]
    assert texts == [before[:300], after[200:]]


def test_gsm8k_numbers_are_the_same_under_v2_and_v3(cli: Runner, tmp_path: Path) -> None:
    """English keeps its whitespace words: every per-item number of the seed article's GSM8K
    scan (test questions against train) is unchanged."""
    if not (GSM8K / "test.jsonl").is_file():
        pytest.skip(f"GSM8K not found at {GSM8K}")
    items = {}
    for label, spec in (("v2", V2_SPEC), ("v3", None)):
        manifest = _project(cli, tmp_path / label, spec)
        assert cli("register", "gsm8k", GSM8K / "test.jsonl", "--field", "question", "--manifest",
                   manifest).code == 0  # fmt: skip
        out = tmp_path / f"{label}.csv"
        result = cli("scan", GSM8K / "train.jsonl", "--field", "question", "--items-csv", out, "--manifest",
                     manifest)  # fmt: skip
        assert result.code == 1
        items[label] = out.read_text(encoding="utf-8")
    assert items["v2"] == items["v3"]
    assert len(items["v3"].splitlines()) == 1320
