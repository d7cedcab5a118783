"""``--show-golden``: golden text in reviews only on request, only from the registered file as it
was registered; without the flag a review holds no word that only the golden item has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contam_guard.core.spec.normalise import words


@pytest.fixture
def partial(registered: Any, leak_text: Any) -> tuple[Path, list[str]]:
    """Words 0..14 of lx-04's question in a record; returns the file and the item's golden-only
    words of 4+ letters (shorter ones, such as "in", are part of the review's own wording)."""
    tokens = registered.items[3]["question"].split()
    text = leak_text(tokens, 0, 15)
    train = registered.training("train.jsonl", [text])
    wording = set(words("every string read (fields: text)"))  # the review's note on what it read
    only_golden = sorted(
        w for w in set(words(registered.items[3]["question"])) - set(words(text)) - wording if len(w) >= 4
    )
    assert {"thirteen", "weekday", "ferry", "single"} <= set(only_golden)  # the test's premise
    return train, only_golden


def scan(project: Any, train: Path, tmp_path: Path, *flags: str) -> tuple[str, dict[str, Any]]:
    result = project.cli(
        "scan", train, "--review", tmp_path / "r.md", "--review-json", tmp_path / "r.json", *flags
    )
    assert result.code == 1, result.output
    # The golden item's shared run is marked **«...»** (as on the training side): read the text.
    md = (tmp_path / "r.md").read_text().replace("**«", "").replace("»**", "")
    return md, json.loads((tmp_path / "r.json").read_text())


def golden_texts(review: dict[str, Any]) -> set[str | None]:
    return {f.get("golden_text") for f in review["findings"]}


def present(word: str, text: str) -> bool:
    return word in words(text)


def test_show_golden_puts_the_registered_text_in_the_review(
    registered: Any, partial: tuple[Path, list[str]], tmp_path: Path
) -> None:
    md, review = scan(registered, partial[0], tmp_path, "--show-golden")
    question = registered.items[3]["question"]
    assert question in md
    assert golden_texts(review) == {question}
    assert all(present(word, md) for word in partial[1])


def test_without_the_flag_no_golden_only_word_appears(
    registered: Any, partial: tuple[Path, list[str]], tmp_path: Path
) -> None:
    md, review = scan(registered, partial[0], tmp_path)
    assert "lx-04" in md
    leaked = [word for word in partial[1] if present(word, md) or present(word, json.dumps(review))]
    assert leaked == []
    assert golden_texts(review) == {None}


@pytest.mark.parametrize(
    "change",
    ["edit-this-item", "edit-another-item", "delete-the-file", "add-an-item"],
)
def test_a_changed_golden_file_shows_nothing(
    registered: Any, partial: tuple[Path, list[str]], tmp_path: Path, change: str
) -> None:
    items = registered.items
    if change == "edit-this-item":
        items[3]["question"] = items[3]["question"].replace("Marrowdale river", "Kestrelmoor canal")
    elif change == "edit-another-item":
        items[0]["question"] = items[0]["question"].replace("fourteen", "fifteen")
    elif change == "add-an-item":
        items.append({"id": "lx-09", "question": "How many otters swim past the old mill?"})
    if change == "delete-the-file":
        registered.golden.unlink()
    else:
        registered.golden.write_text("".join(json.dumps(i) + "\n" for i in items))
    md, review = scan(registered, partial[0], tmp_path, "--show-golden")
    assert golden_texts(review) == {None}
    shown = [word for word in [*partial[1], "kestrelmoor"] if present(word, md)]
    assert shown == []


def test_show_golden_after_the_file_returns_to_its_registered_content(
    registered: Any, partial: tuple[Path, list[str]], tmp_path: Path
) -> None:
    original = registered.golden.read_bytes()
    registered.golden.write_text(original.decode().replace("Marrowdale", "Kestrelmoor"))
    md, _ = scan(registered, partial[0], tmp_path, "--show-golden")
    assert "Kestrelmoor" not in md
    registered.golden.write_bytes(original)
    md, _ = scan(registered, partial[0], tmp_path, "--show-golden")
    assert registered.items[3]["question"] in md


def test_show_golden_works_from_a_subfolder(
    registered: Any, partial: tuple[Path, list[str]], tmp_path: Path, monkeypatch: Any
) -> None:
    """The golden path is relative to the project root, not to the current folder."""
    sub = tmp_path / "notebooks"
    sub.mkdir()
    monkeypatch.chdir(sub)
    md, _ = scan(registered, partial[0], tmp_path, "--show-golden")
    assert registered.items[3]["question"] in md


def test_show_golden_for_a_keyed_manifest(
    project: Any, leak_text: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    project.manifest.unlink()
    monkeypatch.setenv("CONTAM_GUARD_KEY", "s" * 40)
    assert project.cli("init", "--keyed").code == 0
    assert project.register("question", "answer").code == 0
    tokens = project.items[3]["question"].split()
    train = project.training("train.jsonl", [leak_text(tokens, 0, 15)])
    _, review = scan(project, train, tmp_path, "--show-golden")
    assert golden_texts(review) == {project.items[3]["question"]}
