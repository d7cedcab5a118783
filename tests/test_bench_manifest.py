"""The 100,000-item benchmark's second corpus scan sets the reworded rule's report floor to its
threshold in the config ``init`` writes, and leaves a tree without that setting alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.manifest import corpus_head, floor_at_threshold
from contam_guard.core.config import load_config
from contam_guard.core.rules import reworded
from tests.helpers import Runner


def test_the_floor_is_set_to_the_threshold_in_the_config_init_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Runner
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("init").code == 0
    assert reworded.RULE.settings_of(load_config().config.rules).report_floor == 0.2
    assert floor_at_threshold(tmp_path)
    settings = reworded.RULE.settings_of(load_config().config.rules)
    assert settings.report_floor == settings.threshold == 0.32


def test_a_config_without_the_setting_is_left_alone(tmp_path: Path) -> None:
    config = tmp_path / ".contam-guard" / "contam-guard.yaml"
    config.parent.mkdir()
    older = "rules:\n  reworded: {enabled: true, action: warn, threshold: 0.32}\n"
    config.write_text(older, encoding="utf-8")
    assert not floor_at_threshold(tmp_path)
    assert config.read_text(encoding="utf-8") == older


def test_the_corpus_head_is_its_first_records(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b'{"text": "a"}\n{"text": "b"}\n{"text": "c"}')
    assert corpus_head(corpus, 2) == b'{"text": "a"}\n{"text": "b"}\n'
    assert corpus_head(corpus, 5) == corpus.read_bytes()  # fewer records than asked: all of them
